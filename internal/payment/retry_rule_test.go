package payment

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestReinitiationRule: only a debit returned R01 or R09, at most twice,
// until the 180th day after the original's settlement date.
func TestReinitiationRule(t *testing.T) {
	settled := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	day180, day181 := settled.AddDate(0, 0, 180), settled.AddDate(0, 0, 181)
	returned := func(d Direction, code string, attempt int) Payment {
		p := Payment{Direction: d, Status: Failed, FailureCode: &code}
		if attempt > 1 {
			p.Attempt = &attempt
		}
		return p
	}
	reversal := returned(Debit, "R01", 1)
	reversal.ReversalOf = ptr("pay_x")
	for _, c := range []struct {
		name    string
		p       Payment
		day     time.Time
		settled bool
		want    int // the next attempt; 0 when refused
	}{
		{"R01 debit", returned(Debit, "R01", 1), settled, true, 2},
		{"R09 debit, second re-presentment", returned(Debit, "R09", 2), settled, true, 3},
		{"third re-presentment", returned(Debit, "R01", 3), settled, true, 0},
		{"R02 debit", returned(Debit, "R02", 1), settled, true, 0},
		{"credit", returned(Credit, "R01", 1), settled, true, 0},
		{"reversal", reversal, settled, true, 0},
		{"processed debit", Payment{Direction: Debit, Status: Processed}, settled, true, 0},
		{"180th day", returned(Debit, "R01", 1), day180, true, 2},
		{"181st day", returned(Debit, "R01", 1), day181, true, 0},
		{"no settlement date", returned(Debit, "R01", 1), settled, false, 0},
	} {
		got, err := reinitiation(c.p, attemptOf(c.p), settled, c.settled, c.day)
		if got != c.want || (c.want == 0) != errs.Is(err, errs.RetryNotAllowed) {
			t.Errorf("%s: got %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}
