package funding

import (
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/money"
)

func raw(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

func TestParseAmounts(t *testing.T) {
	got, err := ParseAmounts(raw(`0.12`, `"0.3"`))
	if err != nil || got != [2]int{12, 30} {
		t.Errorf("ParseAmounts = %v, %v", got, err)
	}
	for _, in := range [][]json.RawMessage{raw(), raw(`0.1`), raw(`0.1`, `0.2`, `0.3`), raw(`0.00`, `0.5`), raw(`1`, `0.5`),
		raw(`"x"`, `0.1`), raw(`null`, `0.1`), raw(`true`, `0.1`), raw(`"0.1`, `0.1`), raw(`0.123`, `0.1`), raw(`-0.1`, `0.2`),
		raw(`"0.1 "`, `0.2`), raw(`1e-3`, `0.2`), raw(`0.1230`, `0.2`), raw(`0`, `0.5`), raw(`1.00`, `0.5`)} {
		if _, err := ParseAmounts(in); errs.CodeOf(err) != errs.InvalidAmounts {
			t.Errorf("ParseAmounts(%s) error = %v, want invalid_amounts", in, err)
		}
	}
}

func centsString(c int) string { return money.Format(int64(c)) }

func TestParseStatementAmount(t *testing.T) {
	for s, want := range map[string]int{"0.12": 12, ".12": 12, "$0.12": 12, "$ 0.12": 12, " 0.12 ": 12, "0,12": 12, "12": 12, "012": 12,
		"5": 5, "0.5": 50, "99": 99, "0.99": 99, "0.01": 1, "1": 1} {
		if got, err := ParseStatementAmount("amount1", s); err != nil || got != want {
			t.Errorf("ParseStatementAmount(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "  ", "0", "0.00", "100", "1.00", "1.5", "0.123", "-0.12", "12 cents", "0.1.2", "1,000", "0,1,2", "$", "x"} {
		got, err := ParseStatementAmount("amount2", s)
		if e, ok := errs.As(err); !ok || e.Code != errs.InvalidAmounts || e.Param != "amount2" {
			t.Errorf("ParseStatementAmount(%q) = %d, %v; want invalid_amounts on amount2", s, got, err)
		}
	}
}

func FuzzParseStatementAmount(f *testing.F) {
	for _, s := range []string{"0.12", "12", "$0.12", "0,12", " 7 ", "1.00", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseStatementAmount("amount1", s)
		if err != nil {
			if errs.CodeOf(err) != errs.InvalidAmounts {
				t.Fatalf("ParseStatementAmount(%q): error %v without invalid_amounts", s, err)
			}
			return
		}
		if c < MinDeposit || c > MaxDeposit {
			t.Fatalf("ParseStatementAmount(%q) = %d, out of range", s, c)
		}
		// What a statement shows for c reads back as c.
		if back, err := ParseStatementAmount("amount1", centsString(c)); err != nil || back != c {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, c, centsString(c), back, err)
		}
	})
}
