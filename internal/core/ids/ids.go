// Package ids makes identifiers and secrets from crypto/rand: a type prefix
// plus 128 random bits for ids, 256 bits for secrets. Nothing here is
// sequential or guessable.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"math/big"
	"strings"
)

// The id prefixes of the contract.
const (
	Customer      = "cus_"
	FundingSource = "fs_"
	Event         = "evt_"
	Request       = "req_"
	Merchant      = "mer_"
	APIKey        = "key_"
	Payment       = "pay_"
	Subscription  = "sub_"
	Mandate       = "man_"
	Audit         = "aud_"
)

// lower32 is base32's standard alphabet in lower case, unpadded.
var lower32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// New returns prefix followed by 128 random bits in lowercase base32 (26 chars).
func New(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	var out [64]byte
	if len(prefix)+idLen > len(out) {
		return prefix + lower32.EncodeToString(b[:])
	}
	n := copy(out[:], prefix)
	lower32.Encode(out[n:], b[:])
	return string(out[:n+26])
}

// idLen is the length of the random part of New's ids.
const idLen = 26

// Valid reports whether s has the shape New(prefix) gives: prefix and 26
// characters of lowercase base32. A value of another shape names nothing,
// so a parameter may refuse it as malformed rather than look it up.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != idLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// SecretLen is the length of the random part of Secret: 256 bits in base62.
const SecretLen = 43

// Secret returns prefix followed by 256 random bits in base62 (43 chars).
func Secret(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, SecretLen)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := SecretLen - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return prefix + string(out)
}

// IsBase62 reports whether s consists only of base62 characters.
func IsBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}
