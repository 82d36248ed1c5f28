package money

import (
	"encoding/json"
	"testing"
)

func TestParseCents(t *testing.T) {
	for s, want := range map[string]int64{"0.12": 12, ".12": 12, "0.1": 10, ".5": 50, "1": 100, "1.00": 100, "00.07": 7,
		"12.3": 1230, "0": 0, "999999999.99": 99999999999, "0.550": 55, "1.000": 100, "0.10000": 10} {
		if got, ok := ParseCents(s); !ok || got != want {
			t.Errorf("ParseCents(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", ".", "1.", "0.123", "-0.1", "+0.1", "1e-1", " 0.1", "0.1 ", "0,12", "0x1", "1.2.3", "١", "1000000000"} {
		if got, ok := ParseCents(s); ok {
			t.Errorf("ParseCents(%q) = %d, accepted", s, got)
		}
	}
}

func TestParseJSON(t *testing.T) {
	for raw, want := range map[string]int64{`12.5`: 1250, `"12.50"`: 1250, `7`: 700, `"0.01"`: 1, `0.550`: 55, `1e2`: 10000,
		`5.5e-1`: 55, `1.2E+1`: 1200, `120e-2`: 120} {
		if got, ok := ParseJSON(json.RawMessage(raw)); !ok || got != want {
			t.Errorf("ParseJSON(%s) = %d, %v; want %d", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`"x"`, `null`, `true`, `"1.`, `-1`, `"12.345"`, `[1]`, `0.551`, `1e-3`, `1e400`, `-1e2`, `1e`, `1.5e-2`} {
		if got, ok := ParseJSON(json.RawMessage(raw)); ok {
			t.Errorf("ParseJSON(%s) = %d, accepted", raw, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 1: "0.01", 12: "0.12", 1234: "12.34", 100000: "1000.00", -5: "-0.05"} {
		if got := Format(c); got != want {
			t.Errorf("Format(%d) = %q, want %q", c, got, want)
		}
	}
}

func FuzzParseCents(f *testing.F) {
	for _, s := range []string{"0.12", ".5", "1", "1.", "-1", "1e2", "99.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseCents(s)
		if !ok {
			return
		}
		if c < 0 {
			t.Fatalf("ParseCents(%q) = %d, negative", s, c)
		}
		// Round trip: the cents printed back parse to the same value.
		if back, ok := ParseCents(Format(c)); !ok || back != c {
			t.Fatalf("round trip of %q: %d → %q → %d", s, c, Format(c), back)
		}
	})
}
