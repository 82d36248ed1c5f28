package ids

import (
	"encoding/base32"
	"strings"
	"sync"
	"testing"
)

func TestNewAndSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New(Customer)
		if len(id) != len(Customer)+26 || !strings.HasPrefix(id, Customer) || id != strings.ToLower(id) {
			t.Fatalf("New = %q", id)
		}
		// The same text as base32's standard alphabet in lower case.
		if raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(id[len(Customer):])); err != nil || len(raw) != 16 {
			t.Fatalf("New = %q: %d bytes, %v", id, len(raw), err)
		}
		if !Valid(Customer, id) || Valid(Payment, id) {
			t.Fatalf("Valid(%q) by its prefix: false, or true for another", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		s := Secret("sk_test_")
		if len(s) != len("sk_test_")+SecretLen || !IsBase62(s[len("sk_test_"):]) {
			t.Fatalf("Secret = %q", s)
		}
	}
}

func TestValidRefusesOtherShapes(t *testing.T) {
	for _, s := range []string{"", "clk_", "clk_abc", "CLK_aaaaaaaaaaaaaaaaaaaaaaaaaa", "clk_aaaaaaaaaaaaaaaaaaaaaaaaa",
		"clk_aaaaaaaaaaaaaaaaaaaaaaaaaaa", "clk_Aaaaaaaaaaaaaaaaaaaaaaaaaa", "clk_aaaaaaaaaaaaaaaaaaaaaaaaa1",
		"clk_aaaaaaaaaaaaaaaaaaaaaaaaa8", "clk_aaaaaaaaaaaaaaaaaaaaaaaaa-", "cus_aaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		if Valid("clk_", s) {
			t.Errorf("Valid(clk_, %q) = true", s)
		}
	}
	if !Valid("clk_", "clk_abcdefghijklmnopqrstuvwxyz") || !Valid("clk_", "clk_234567abcdefghijklmnopqrst") {
		t.Error("Valid refuses well-formed clock ids")
	}
}

// TestBatched: Batched ids have New's form, and none repeats, across many
// goroutines and many refills of their batches.
func TestBatched(t *testing.T) {
	const workers, each = 8, 5000
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], Batched(Request))
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, ids := range got {
		for _, id := range ids {
			raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(id[len(Request):]))
			if len(id) != len(Request)+26 || !strings.HasPrefix(id, Request) || id != strings.ToLower(id) || err != nil || len(raw) != 16 {
				t.Fatalf("Batched = %q (%v)", id, err)
			}
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
	}
}
