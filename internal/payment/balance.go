package payment

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The merchant's ledger. Every money movement of a merchant environment is
// a balance transaction: a payment's own movement (a debit brings money
// in, a credit, refund or reversal takes it out), its return (the
// movement undone), and for a return the originator dishonored, the
// return and the dishonor that undoes it. The lines are not stored: one
// statement derives them from the payments and dishonors (the store's
// rule), and the balances' available and pending are sums over that same
// statement, so they cannot drift from the lines.
//
// A line is pending while its payment is (money in flight) or while its
// dishonor has not left, and available otherwise. A debit's money is
// available on its settlement date, a credit's leaves when it is sent; a
// debit stays at risk of a return until its return window closes (an
// individual's: the unauthorized-return window).

// Balance transaction types.
const (
	LineDebit    = "debit"
	LineCredit   = "credit"
	LineRefund   = "refund"
	LineReturn   = "return"
	LineReversal = "reversal"
	LineDishonor = "dishonor"
)

// Balance transaction statuses.
const (
	LinePending   = "pending"
	LineAvailable = "available"
)

// BalanceTransaction is one line of the merchant's ledger.
type BalanceTransaction struct {
	ID        string `json:"balance_transaction_id"`
	Type      string `json:"type"`
	Amount    string `json:"amount"` // signed decimal dollars: money in is positive
	Currency  string `json:"currency"`
	PaymentID string `json:"payment_id"`
	Status    string `json:"status"`
	// AvailableOn is when the money is (or was) available: a debit's
	// settlement date, a credit's sending; nil while unknown.
	AvailableOn *string `json:"available_on"`
	// AtRiskUntil is when a debit's last return window closes; nil for
	// other lines and before the debit left.
	AtRiskUntil *time.Time `json:"at_risk_until"`
	CreatedAt   time.Time  `json:"created_at"`

	Cents int64 `json:"-"`
}

// LineRow is a balance transaction as the store reads it: the facts its
// dates are computed from.
type LineRow struct {
	ID, Type, PaymentID, Status string
	Cents                       int64
	AvailableOn                 *time.Time
	// Settlement and UnauthorizedUntil are a debit movement's dates
	// (nil for other lines).
	Settlement, UnauthorizedUntil *time.Time
	CreatedAt                     time.Time
}

// Line is r as shown.
func (r LineRow) Line() BalanceTransaction {
	l := BalanceTransaction{ID: r.ID, Type: r.Type, Amount: money.Format(r.Cents), Currency: "USD", PaymentID: r.PaymentID,
		Status: r.Status, CreatedAt: r.CreatedAt.UTC(), Cents: r.Cents}
	if r.AvailableOn != nil {
		d := r.AvailableOn.Format(time.DateOnly)
		l.AvailableOn = &d
	}
	if r.Settlement != nil {
		d := NewDates(nil, nil, r.Settlement, r.UnauthorizedUntil)
		l.AtRiskUntil = d.ReturnWindowClosesAt
		if d.UnauthorizedReturnWindowClosesAt != nil {
			l.AtRiskUntil = d.UnauthorizedReturnWindowClosesAt
		}
	}
	return l
}

// BalanceTransactions returns a page of scope's ledger, newest first.
func (s *Service) BalanceTransactions(ctx context.Context, scope tenant.Scope, p paging.Page) ([]BalanceTransaction, bool, error) {
	rows, err := s.store.BalanceLines(ctx, scope, p)
	if err != nil {
		return paging.Result[BalanceTransaction](nil, err, p)
	}
	lines := make([]BalanceTransaction, len(rows))
	for i, r := range rows {
		lines[i] = r.Line()
	}
	return paging.Result(lines, nil, p)
}

// balancesOf is the balances of the store's sums.
func balancesOf(c BalanceCents) Balances {
	return Balances{PendingDebits: money.Format(c.PendingDebits), PendingCredits: money.Format(c.PendingCredits),
		AtRiskDebits: money.Format(c.AtRiskDebits), Available: money.Format(c.Available), Pending: money.Format(c.Pending)}
}
