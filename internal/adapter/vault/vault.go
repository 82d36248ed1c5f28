// Package vault keeps account numbers (and micro-deposit amounts) unreadable
// at rest: AES-256-GCM with a key id stored beside each ciphertext so keys can
// rotate (the first key encrypts, all decrypt), and keyed fingerprints
// (HMAC-SHA256 under a separate key) for uniqueness checks without plaintext.
//
// Associated data binds each ciphertext to its row (the funding source for
// an account number; the source and attempt for micro-deposit amounts), so
// a ciphertext copied into another row does not open. Keys rotate by
// putting a new key first. Fingerprints use a key of their own, and a keyed
// fingerprint rather than a plain or salted hash means nobody without the
// key can test guesses against the table. Micro-deposit amounts are sealed
// too, so a database reader cannot verify an account, and padded to one
// length first, so the ciphertext's length does not tell a one-digit
// amount from a two-digit one.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Key is one named 32-byte AES-256 key.
type Key struct {
	ID    string
	Bytes []byte
}

// Vault seals and opens values and computes fingerprints. It is safe for
// concurrent use.
type Vault struct {
	current string
	aeads   map[string]cipher.AEAD
	fpKey   []byte
}

// New returns a Vault. keys[0] encrypts; every key decrypts. fingerprintKey
// must be 32 bytes and differ from the encryption keys.
func New(keys []Key, fingerprintKey []byte) (*Vault, error) {
	if len(keys) == 0 {
		return nil, errors.New("vault: no encryption key")
	}
	if len(fingerprintKey) != 32 {
		return nil, errors.New("vault: fingerprint key must be 32 bytes")
	}
	v := &Vault{current: keys[0].ID, aeads: map[string]cipher.AEAD{}, fpKey: append([]byte(nil), fingerprintKey...)}
	for _, k := range keys {
		if len(k.Bytes) != 32 {
			return nil, fmt.Errorf("vault: key %q must be 32 bytes", k.ID)
		}
		if hmac.Equal(k.Bytes, fingerprintKey) {
			return nil, fmt.Errorf("vault: key %q equals the fingerprint key", k.ID)
		}
		if _, dup := v.aeads[k.ID]; dup {
			return nil, fmt.Errorf("vault: key id %q appears twice", k.ID)
		}
		block, err := aes.NewCipher(k.Bytes)
		if err != nil {
			return nil, fmt.Errorf("vault: key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("vault: key %q: %w", k.ID, err)
		}
		v.aeads[k.ID] = aead
	}
	return v, nil
}

// Seal encrypts plaintext bound to aad (for example the funding source id,
// so a ciphertext cannot be moved to another row). It returns the id of the
// key used and nonce‖ciphertext‖tag.
func (v *Vault) Seal(plaintext, aad []byte) (keyID string, sealed []byte) {
	aead := v.aeads[v.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	_, _ = rand.Read(nonce)
	return v.current, aead.Seal(nonce, nonce, plaintext, aad)
}

// SealPadded is Seal of plaintext padded to a multiple of block bytes (a
// 0x80 byte, then zero bytes), so every value shorter than block seals to
// the same length and the ciphertext does not tell a short value from a
// long one. block must be at least 1.
func (v *Vault) SealPadded(plaintext, aad []byte, block int) (keyID string, sealed []byte) {
	n := (len(plaintext)/block + 1) * block
	padded := make([]byte, n)
	copy(padded, plaintext)
	padded[len(plaintext)] = 0x80
	return v.Seal(padded, aad)
}

// OpenPadded opens a value sealed by SealPadded and removes its padding. A
// value sealed by Seal opens as it was, unless its plaintext ends in 0x80
// and zero bytes, as no text does: values of a kind sealed before it was
// padded still open.
func (v *Vault) OpenPadded(keyID string, sealed, aad []byte) ([]byte, error) {
	out, err := v.Open(keyID, sealed, aad)
	if err != nil {
		return nil, err
	}
	end := bytes.TrimRight(out, "\x00")
	if len(end) > 0 && end[len(end)-1] == 0x80 {
		return end[:len(end)-1], nil
	}
	return out, nil
}

// ErrOpen means a sealed value could not be opened: unknown key id, wrong
// associated data, or tampering.
var ErrOpen = errors.New("vault: cannot open sealed value")

// Open decrypts a value sealed with key keyID and the same aad.
func (v *Vault) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	aead, ok := v.aeads[keyID]
	if !ok || len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrOpen
	}
	n := aead.NonceSize()
	out, err := aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

// CurrentKeyID is the id of the key that encrypts new values.
func (v *Vault) CurrentKeyID() string { return v.current }

// Fingerprint is HMAC-SHA256 of value under the fingerprint key, with a
// domain label so fingerprints of different kinds never collide.
func (v *Vault) Fingerprint(label, value string) []byte {
	m := hmac.New(sha256.New, v.fpKey)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return m.Sum(nil)
}
