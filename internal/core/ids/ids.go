// Package ids makes identifiers and secrets from crypto/rand: a type prefix
// plus 128 random bits for ids, 256 bits for secrets. Nothing here is
// sequential or guessable.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"math/big"
	"strings"
	"sync"
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
	// AdvanceOwner names a process that runs test clock advances, the
	// owner of an advance's lease.
	AdvanceOwner = "adv_"
)

// lower32 is base32's standard alphabet in lower case, unpadded.
var lower32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// New returns prefix followed by 128 random bits in lowercase base32 (26 chars).
func New(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return encode(prefix, b)
}

// encode is prefix followed by b in lowercase base32, in one allocation.
func encode(prefix string, b [16]byte) string {
	var out [64]byte
	if len(prefix)+idLen > len(out) {
		return prefix + lower32.EncodeToString(b[:])
	}
	n := copy(out[:], prefix)
	lower32.Encode(out[n:], b[:])
	return string(out[:n+idLen])
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

// Batched is New with its random bits taken from crypto/rand a batch at a
// time: the same 128 bits, from the same source, never handed out twice,
// without a system call for each id. For ids made on every request (the
// request id), not for secrets.
func Batched(prefix string) string {
	r := batches.Get().(*randBatch)
	if r.used+16 > len(r.buf) {
		_, _ = rand.Read(r.buf[:])
		r.used = 0
	}
	var b [16]byte
	copy(b[:], r.buf[r.used:])
	clear(r.buf[r.used : r.used+16])
	r.used += 16
	batches.Put(r)
	return encode(prefix, b)
}

// randBatch is random bytes of which the first used are handed out.
type randBatch struct {
	buf  [1024]byte
	used int
}

// batches are a batch per processor, or so (a sync.Pool).
var batches = sync.Pool{New: func() any { return &randBatch{used: 1024} }}

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
		if !isBase62[s[i]] {
			return false
		}
	}
	return true
}

// isBase62 marks the bytes of base62: a key's 43 characters are checked on
// every API request.
var isBase62 = func() (t [256]bool) {
	for i := range len(base62) {
		t[base62[i]] = true
	}
	return t
}()
