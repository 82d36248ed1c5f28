package payment_test

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/payment"
)

func date(s string) *time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return &d
}

// TestReturnWindows: the standard window ends with the second banking day
// after settlement (a weekend and a holiday skipped), US Eastern; the
// unauthorized one with the 60th calendar day; a payment not sent has
// neither.
func TestReturnWindows(t *testing.T) {
	for _, c := range []struct {
		settled, until   string
		wantReturn       string
		wantUnauthorized string
	}{
		// Friday → Tuesday (EST): Monday and Tuesday are the two banking days.
		{"2026-11-06", "", "2026-11-11T04:59:59Z", ""},
		// Monday → Thursday: Wednesday 11-11 is Veterans Day.
		{"2026-11-09", "2027-01-08", "2026-11-13T04:59:59Z", "2027-01-09T04:59:59Z"},
		// Summer (EDT).
		{"2026-07-06", "2026-09-04", "2026-07-09T03:59:59Z", "2026-09-05T03:59:59Z"},
	} {
		var until *time.Time
		if c.until != "" {
			until = date(c.until)
		}
		sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := payment.NewDates(&sent, date(c.settled), date(c.settled), until)
		if got := d.ReturnWindowClosesAt.Format(time.RFC3339); got != c.wantReturn {
			t.Errorf("settled %s: return_window_closes_at = %s, want %s", c.settled, got, c.wantReturn)
		}
		got := ""
		if d.UnauthorizedReturnWindowClosesAt != nil {
			got = d.UnauthorizedReturnWindowClosesAt.Format(time.RFC3339)
		}
		if got != c.wantUnauthorized {
			t.Errorf("settled %s: unauthorized_return_window_closes_at = %s, want %s", c.settled, got, c.wantUnauthorized)
		}
	}
	if d := payment.NewDates(nil, nil, nil, nil); d.SentAt != nil || d.ReturnWindowClosesAt != nil || d.SettlementDate != nil {
		t.Errorf("a payment not sent: %+v", d)
	}
}

// TestUnauthorizedUntil: 60 calendar days after settlement, for an
// individual's debit only.
func TestUnauthorizedUntil(t *testing.T) {
	s := payment.Sent{Settlement: *date("2026-11-09"), Individual: true}
	if got := s.UnauthorizedUntil(); got == nil || got.Format(time.DateOnly) != "2027-01-08" {
		t.Errorf("UnauthorizedUntil = %v, want 2027-01-08", got)
	}
	s.Individual = false
	if got := s.UnauthorizedUntil(); got != nil {
		t.Errorf("a company's entry: UnauthorizedUntil = %v, want none", got)
	}
}
