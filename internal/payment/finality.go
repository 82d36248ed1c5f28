package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Finality. A payment is processed two banking days after it settles, but
// that is not when its money is final: a receiving bank may return any
// entry until the end of the second banking day after its settlement
// date, and an individual's debit as unauthorized for 60 calendar days.
// A payment carries both windows, and the balances sum the debits whose
// unauthorized-return window is still open (at risk).
//
// The dates are facts of the payment's departure, stored when it leaves
// (Sent): in production when its entry is assigned to a file, with the
// entry's effective date as its settlement date; in sandbox, where no file
// is built, when it settles by itself (or a simulated return ends it
// while pending), on that day. Whether the unauthorized window applies is
// decided then too, from the source's account_holder_type, as the entry's
// SEC code is: a later change of the holder type does not reopen or close
// a window.
//
// A window closes at the end of its last day, US Eastern (23:59:59),
// written as a UTC timestamp; the at-risk sum compares days, so a debit
// is at risk through the whole of its last day.

// SameDayEntryLimit is the most a Same Day ACH entry may be, in cents
// (NACHA's per-entry limit).
const SameDayEntryLimit = 1_000_000_00

// UnauthorizedReturnDays is how many calendar days after its settlement
// date an individual's debit may be returned as unauthorized.
const UnauthorizedReturnDays = 60

// ReturnDays is how many banking days after its settlement date any entry
// may be returned.
const ReturnDays = 2

// Dates is when a payment left and until when it may come back.
type Dates struct {
	EffectiveDate  *string    `json:"effective_date"`  // YYYY-MM-DD
	SentAt         *time.Time `json:"sent_at"`         // UTC
	SettlementDate *string    `json:"settlement_date"` // YYYY-MM-DD
	// ReturnWindowClosesAt is the end of the second banking day after
	// the settlement date (US Eastern), in UTC.
	ReturnWindowClosesAt *time.Time `json:"return_window_closes_at"`
	// UnauthorizedReturnWindowClosesAt is the end of the 60th calendar
	// day after the settlement date (US Eastern), in UTC: individuals'
	// debits only.
	UnauthorizedReturnWindowClosesAt *time.Time `json:"unauthorized_return_window_closes_at"`
}

// Sent is how a payment left: at At, effective on Effective and settling
// on Settlement; it becomes processed at SettleAt unless it comes back.
// Individual: an individual's debit, returnable as unauthorized.
type Sent struct {
	At         time.Time
	Effective  calendar.Date
	Settlement calendar.Date
	SettleAt   time.Time
	Individual bool
}

// UnauthorizedUntil is the last day of the unauthorized-return window of
// an individual's debit sent as s; nil for any other payment.
func (s Sent) UnauthorizedUntil() *calendar.Date {
	if !s.Individual {
		return nil
	}
	d := s.Settlement.AddDate(0, 0, UnauthorizedReturnDays)
	return &d
}

// NewDates is the Dates of a payment sent at sentAt with the given dates
// (nil when it has not left), whose unauthorized-return window ends on
// unauthorizedUntil (nil: none).
func NewDates(sentAt, effective, settlement, unauthorizedUntil *time.Time) Dates {
	var d Dates
	if sentAt != nil {
		at := sentAt.UTC()
		d.SentAt = &at
	}
	if effective != nil {
		s := effective.Format(time.DateOnly)
		d.EffectiveDate = &s
	}
	if settlement != nil {
		s := settlement.Format(time.DateOnly)
		d.SettlementDate = &s
		closes := calendar.EndOfDay(calendar.AddBusinessDays(dateOnly(*settlement), ReturnDays))
		d.ReturnWindowClosesAt = &closes
	}
	if unauthorizedUntil != nil {
		closes := calendar.EndOfDay(dateOnly(*unauthorizedUntil))
		d.UnauthorizedReturnWindowClosesAt = &closes
	}
	return d
}

// dateOnly is t's date at midnight UTC (a date column comes back as such).
func dateOnly(t time.Time) calendar.Date {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// sentInSandbox stores the dates of a sandbox payment p that ends (settles
// or comes back) at now without having left before: it left today.
func (s *Service) sentInSandbox(ctx context.Context, tx Store, p *Payment, now time.Time) error {
	if p.Scope.Env.Live() || p.SentAt != nil || p.Status == Voided {
		return nil
	}
	today := calendar.DateOf(now)
	sent := Sent{At: now, Effective: today, Settlement: today, SettleAt: now,
		Individual: p.Direction == Debit && p.HolderIndividual}
	if err := tx.SetPaymentSent(ctx, p.Scope, p.ID, sent); err != nil {
		return fmt.Errorf("mark payment %s sent: %w", p.ID, err)
	}
	p.Dates = NewDates(&sent.At, &sent.Effective, &sent.Settlement, sent.UnauthorizedUntil())
	return nil
}

// Balances is a merchant environment's money in flight and at risk, in
// dollars ("12.34").
type Balances struct {
	PendingDebits  string `json:"pending_debits"`
	PendingCredits string `json:"pending_credits"`
	// AtRiskDebits are processed debits whose unauthorized-return window
	// is still open.
	AtRiskDebits string `json:"at_risk_debits"`
	// Available and Pending are the sums of the ledger's available and
	// pending lines (balance.go).
	Available string `json:"available"`
	Pending   string `json:"pending"`
}

// BalanceCents is Balances in cents, as the store sums them.
type BalanceCents struct {
	PendingDebits, PendingCredits, AtRiskDebits int64
	Available, Pending                          int64
}

// Balances sums scope's pending debits and credits and its debits at risk
// of an unauthorized return today.
func (s *Service) Balances(ctx context.Context, scope tenant.Scope) (Balances, error) {
	c, err := s.store.Balances(ctx, scope, calendar.DateOf(s.now(ctx)))
	if err != nil {
		return Balances{}, fmt.Errorf("read balances of merchant %s: %w", scope.MerchantID, err)
	}
	return balancesOf(c), nil
}

// sameDayAllowed is the rule for a Same Day ACH payment of cents: its
// originator must send same-day entries (403 permission_denied), and an
// entry is at most SameDayEntryLimit (422 limit_exceeded).
func (s *Service) sameDayAllowed(ctx context.Context, scope tenant.Scope, cents int64) error {
	ok, err := s.originatorSameDay(ctx, scope)
	if err != nil {
		return fmt.Errorf("read the same-day setting of merchant %s: %w", scope.MerchantID, err)
	}
	if !ok {
		return &errs.Error{Code: errs.PermissionDenied, Param: "same_day",
			Message: "Same Day ACH is not enabled for this originator; send the payment without same_day, or ask us to enable it."}
	}
	if cents > SameDayEntryLimit {
		return (&errs.Error{Code: errs.LimitExceeded, Param: "amount",
			Message: "A Same Day ACH entry is at most " + money.Format(SameDayEntryLimit) + "; send a larger amount without same_day."}).
			WithDetail("limit", "same_day_entry").WithDetail("remaining", money.Format(SameDayEntryLimit))
	}
	return nil
}

func (s *Service) originatorSameDay(ctx context.Context, scope tenant.Scope) (bool, error) {
	if s.originators == nil {
		return AllActive{}.SameDay(ctx, scope)
	}
	return s.originators.SameDay(ctx, scope)
}
