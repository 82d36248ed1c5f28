package person

import (
	"strings"
	"testing"
)

func TestValidEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"ada@example.com":           true,
		"a.b+tag@sub.example.co.uk": true,
		"ada@localhost":             false,
		"ada@example.":              false,
		"ada@.example.com":          false,
		"example.com":               false,
		"Ada <ada@example.com>":     false,
		" ada@example.com":          false,
		"":                          false,
		strings.Repeat("a", 250) + "@example.com": false,
	} {
		if got := ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestName(t *testing.T) {
	if v, err := Name("n", "  Ada  ", 10, Required); err != nil || v != "Ada" {
		t.Errorf("Name trims: %q, %v", v, err)
	}
	if v, err := Name("n", "", 10, Optional); err != nil || v != "" {
		t.Errorf("optional empty: %q, %v", v, err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("é", 11), "a\x00b", "tab\there"} {
		if _, err := Name("n", bad, 10, Required); err == nil {
			t.Errorf("Name accepted %q", bad)
		}
	}
	// The limit counts characters, not bytes.
	if _, err := Name("n", strings.Repeat("é", 10), 10, Required); err != nil {
		t.Errorf("10 two-byte characters refused: %v", err)
	}
}
