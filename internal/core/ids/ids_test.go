package ids

import (
	"strings"
	"testing"
	"time"
)

func TestNewAndSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New(Customer)
		if len(id) != len(Customer)+26 || !strings.HasPrefix(id, Customer) || id != strings.ToLower(id) {
			t.Fatalf("New = %q", id)
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

// TestOrderedSortsByTime: ids of later milliseconds sort after earlier
// ones as strings, ids of one millisecond differ, and their form is New's.
func TestOrderedSortsByTime(t *testing.T) {
	base := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	prev := ""
	seen := map[string]bool{}
	for i := range 2000 {
		at := base.Add(time.Duration(i/2) * time.Millisecond) // two ids per millisecond
		id := Ordered(Request, at)
		if len(id) != len(Request)+26 || !strings.HasPrefix(id, Request) || id != strings.ToLower(id) {
			t.Fatalf("Ordered = %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if i%2 == 0 && prev != "" && id <= prev {
			t.Fatalf("id of %v (%s) sorts before the previous millisecond's (%s)", at, id, prev)
		}
		prev = id
	}
	// Years apart too: the time's top bits come first.
	if a, b := Ordered(Request, base), Ordered(Request, base.AddDate(30, 0, 0)); a >= b {
		t.Errorf("%s does not sort before %s", a, b)
	}
}
