package dashboard

import (
	"testing"

	"github.com/fundsource/fundsource/internal/payment"
)

// TestRateRowJudgesOnlyOnceEnoughDebitsCount: the home page judges a
// rate against its threshold only from payment.MinRateDebits debits, as
// the hold on new debits does; below that it says how many count.
func TestRateRowJudgesOnlyOnceEnoughDebitsCount(t *testing.T) {
	for _, c := range []struct {
		debits, returns  int
		level, tooFewSay string
	}{
		{payment.MinRateDebits - 1, payment.MinRateDebits - 1, "too_few", "Not enough debits yet (19 of 20)"},
		{payment.MinRateDebits, 1, "exceeded", ""},
		{payment.MinRateDebits, 0, "ok", ""},
	} {
		r := payment.Rate{Debits: c.debits, Returns: c.returns, Threshold: 0.005}
		if c.debits > 0 {
			r.Rate = float64(c.returns) / float64(c.debits)
		}
		got := rateRow("Unauthorized", r)
		if got.Level != c.level || (c.tooFewSay != "" && got.TooFew != c.tooFewSay) {
			t.Errorf("%d returns of %d debits: level %q (%q), want %q (%q)", c.returns, c.debits, got.Level, got.TooFew, c.level, c.tooFewSay)
		}
	}
}
