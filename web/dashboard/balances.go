package dashboard

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// balances is scope's money in flight and at risk as the home and
// payments pages show it.
func (s *Surface) balances(ctx context.Context, scope tenant.Scope) (*view.Balances, error) {
	b, err := s.payments.Balances(ctx, scope)
	if err != nil {
		return nil, err
	}
	return &view.Balances{PendingDebits: usd(b.PendingDebits), PendingCredits: usd(b.PendingCredits),
		AtRiskDebits: usd(b.AtRiskDebits)}, nil
}

// finalityOf is p's dates as its page shows them: days as dates, the
// windows' ends in US Eastern time, where the banks count them.
func finalityOf(p payment.Payment) view.Finality {
	f := view.Finality{SameDay: p.SameDay, Pending: p.Status == payment.Pending}
	day := func(d *string) string {
		if d == nil {
			return ""
		}
		t, err := time.Parse(time.DateOnly, *d)
		if err != nil {
			return *d
		}
		return t.Format("Mon, Jan 2, 2006")
	}
	closes := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.In(calendar.Eastern).Format("Mon, Jan 2, 2006, 3:04 PM MST")
	}
	if p.SentAt != nil {
		f.Sent = shortTime(*p.SentAt)
	}
	f.Effective, f.Settlement = day(p.EffectiveDate), day(p.SettlementDate)
	f.ReturnCloses, f.UnauthorizedCloses = closes(p.ReturnWindowClosesAt), closes(p.UnauthorizedReturnWindowClosesAt)
	return f
}
