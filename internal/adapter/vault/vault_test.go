package vault

import (
	"bytes"
	"errors"
	"testing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestSealOpenRotateAndBind(t *testing.T) {
	old, err := New([]Key{{"k1", key(1)}}, key(9))
	if err != nil {
		t.Fatal(err)
	}
	id1, sealed1 := old.Seal([]byte("000123456789"), []byte("fs_a"))
	if id1 != "k1" || bytes.Contains(sealed1, []byte("123456789")) {
		t.Fatalf("Seal = %s, %x", id1, sealed1)
	}
	// Two seals of one value differ (random nonce).
	if _, again := old.Seal([]byte("000123456789"), []byte("fs_a")); bytes.Equal(again, sealed1) {
		t.Error("sealing twice gave the same ciphertext")
	}

	// After rotation the new key encrypts and the old one still decrypts.
	rotated, err := New([]Key{{"k2", key(2)}, {"k1", key(1)}}, key(9))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(id1, sealed1, []byte("fs_a")); err != nil || string(got) != "000123456789" {
		t.Fatalf("open old value after rotation: %q, %v", got, err)
	}
	if id2, _ := rotated.Seal([]byte("x"), nil); id2 != "k2" {
		t.Errorf("rotated vault encrypts with %s, want k2", id2)
	}

	// Wrong associated data, unknown key, tampering: all refused.
	if _, err := rotated.Open(id1, sealed1, []byte("fs_b")); !errors.Is(err, ErrOpen) {
		t.Errorf("open with other aad: %v", err)
	}
	if _, err := rotated.Open("k3", sealed1, []byte("fs_a")); !errors.Is(err, ErrOpen) {
		t.Errorf("open with unknown key: %v", err)
	}
	tampered := append([]byte(nil), sealed1...)
	tampered[len(tampered)-1] ^= 1
	if _, err := rotated.Open(id1, tampered, []byte("fs_a")); !errors.Is(err, ErrOpen) {
		t.Errorf("open tampered: %v", err)
	}
	if _, err := rotated.Open(id1, sealed1[:5], []byte("fs_a")); !errors.Is(err, ErrOpen) {
		t.Errorf("open truncated: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	v, _ := New([]Key{{"k1", key(1)}}, key(9))
	w, _ := New([]Key{{"k1", key(1)}}, key(8))
	a := v.Fingerprint("account", "00012345")
	if !bytes.Equal(a, v.Fingerprint("account", "00012345")) {
		t.Error("fingerprint not deterministic")
	}
	for name, other := range map[string][]byte{
		"leading zeros are significant": v.Fingerprint("account", "12345"),
		"label separates kinds":         v.Fingerprint("token", "00012345"),
		"depends on the key":            w.Fingerprint("account", "00012345"),
	} {
		if bytes.Equal(a, other) {
			t.Errorf("%s: fingerprints equal", name)
		}
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for name, c := range map[string]struct {
		keys []Key
		fp   []byte
	}{
		"no keys":           {nil, key(9)},
		"short key":         {[]Key{{"k", []byte("short")}}, key(9)},
		"short fingerprint": {[]Key{{"k", key(1)}}, []byte("x")},
		"duplicate id":      {[]Key{{"k", key(1)}, {"k", key(2)}}, key(9)},
		"reused as fp key":  {[]Key{{"k", key(9)}}, key(9)},
	} {
		if _, err := New(c.keys, c.fp); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSealPadded: values shorter than the block seal to one length; each
// opens to itself; values sealed unpadded still open through OpenPadded.
func TestSealPadded(t *testing.T) {
	v, err := New([]Key{{"k1", key(1)}}, key(9))
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("fs_a:1")
	lengths := map[int]int{}
	for _, plain := range []string{"", "1,1", "9,10", "10,10", "99,99", "123456789012345"} {
		id, sealed := v.SealPadded([]byte(plain), aad, 16)
		lengths[len(sealed)]++
		got, err := v.OpenPadded(id, sealed, aad)
		if err != nil || string(got) != plain {
			t.Errorf("OpenPadded(SealPadded(%q)) = %q, %v", plain, got, err)
		}
		if raw, _ := v.Open(id, sealed, aad); len(raw) != 16 {
			t.Errorf("%q padded to %d bytes, want 16", plain, len(raw))
		}
	}
	if len(lengths) != 1 {
		t.Errorf("sealed lengths %v, want one length", lengths)
	}
	// A value as long as the block takes a whole block more.
	id, sealed := v.SealPadded(bytes.Repeat([]byte("7"), 16), aad, 16)
	if raw, _ := v.Open(id, sealed, aad); len(raw) != 32 {
		t.Errorf("16 bytes padded to %d, want 32", len(raw))
	}
	// Plaintext that itself ends in zero bytes keeps them.
	id, sealed = v.SealPadded([]byte("a\x00\x00"), aad, 8)
	if got, err := v.OpenPadded(id, sealed, aad); err != nil || string(got) != "a\x00\x00" {
		t.Errorf("trailing zeros: %q, %v", got, err)
	}
	// Values sealed before padding open unchanged.
	for _, plain := range []string{"1,1", "12,30", "99,99", "000123456789"} {
		id, sealed := v.Seal([]byte(plain), aad)
		if got, err := v.OpenPadded(id, sealed, aad); err != nil || string(got) != plain {
			t.Errorf("unpadded %q opened as %q, %v", plain, got, err)
		}
	}
	// Tampering is still refused.
	id, sealed = v.SealPadded([]byte("1,1"), aad, 16)
	sealed[len(sealed)-1] ^= 1
	if _, err := v.OpenPadded(id, sealed, aad); !errors.Is(err, ErrOpen) {
		t.Errorf("tampered padded value: %v", err)
	}
}
