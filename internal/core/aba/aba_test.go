package aba

import "testing"

func TestValidChecksum(t *testing.T) {
	for _, c := range []struct {
		rn   string
		want bool
	}{
		{"021000021", true},  // JPMorgan Chase
		{"110000000", true},  // a sandbox test number
		{"021000022", false}, // one off in the check digit
		{"02100002", false},  // 8 digits
		{"0210000210", false},
		{"02100002a", false},
		{"", false},
		{"000000000", false}, // passes the sum, names no bank
		{"011000015", true},  // leading zeros: the Federal Reserve Bank of Boston
	} {
		if got := ValidChecksum(c.rn); got != c.want {
			t.Errorf("ValidChecksum(%q) = %v, want %v", c.rn, got, c.want)
		}
	}
}
