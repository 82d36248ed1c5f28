// Package ids makes identifiers and secrets from crypto/rand: a type prefix
// plus 128 random bits for ids, 256 bits for secrets. Nothing here is
// guessable, and only Ordered ids are sequential, in time.
//
// Ordered ids exist for rows written far more often than they are read
// by id, such as the request log's: a B-tree keyed on random ids takes
// each new key on a random page, and after every checkpoint the first
// change to a page writes the whole page to the write-ahead log, so a
// table filled at random writes about a page of log per row. Keys that
// grow with time land on the index's right edge, a few pages.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"math/big"
	"strings"
	"time"
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

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns prefix followed by 128 random bits in lowercase base32 (26 chars).
func New(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + strings.ToLower(b32.EncodeToString(b[:]))
}

// ordered is a base32 alphabet in ASCII (and any collation's) order:
// digits, then lowercase letters without i, l, o and u.
var ordered = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// Ordered returns prefix followed by the time at in milliseconds since the
// epoch (48 bits) and 80 random bits, 26 characters like New's; ids made
// in later milliseconds sort after earlier ones.
func Ordered(prefix string, at time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(at.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return prefix + ordered.EncodeToString(b[:])
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
