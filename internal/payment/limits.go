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

// An originator's limits. Every merchant environment is an originator
// with three limits: the largest single debit, and the debits and credits
// created on one banking day (US Eastern; a payment created on a weekend
// or holiday counts toward the next banking day, when it would leave).
//
// The statement that creates a payment checks them: it locks the
// originator's row FOR UPDATE, which hands it the latest committed usage
// of the day even when it had to wait for a concurrent payment, stores
// the payment only when it fits, and adds it to the usage. Two payments
// racing for the last dollar are ordered by that lock: the second sees
// the first's total. A refusal writes nothing and is explained from the
// Terms the same statement read.
//
// A subscription's scheduled debits, re-presentments and reversals are
// counted into the day's usage but never refused by a daily total: the
// customer authorized them already and refusing one would break the
// schedule. A subscription whose amount is above the per-entry limit is
// refused when it is created instead. A canceled payment keeps its place
// in the day's usage: the total counts what was asked of the bank's
// exposure that day, not what left.

// Originator statuses: only an active originator sends entries.
const (
	OriginatorPendingReview = "pending_review"
	OriginatorActive        = "active"
	OriginatorSuspended     = "suspended"
)

// Limit names, as limit_exceeded names them.
const (
	LimitPerEntryDebit = "per_entry_debit"
	LimitDailyDebit    = "daily_debit"
	LimitDailyCredit   = "daily_credit"
)

// Terms are an originator's status, limits and usage of one banking day,
// in cents, as a payment's creation read them.
type Terms struct {
	Status        string
	PerEntryDebit int64
	DailyDebit    int64
	DailyCredit   int64
	// UsedDebit and UsedCredit are the totals of the banking day's
	// debits and credits created so far.
	UsedDebit  int64
	UsedCredit int64
	// CompanyIDAssigned: an operator set the originator's company id
	// (package originator); false while it is the placeholder.
	CompanyIDAssigned bool
	// DefaultPurpose is the purpose of its payments and subscriptions
	// that name none (purpose.go).
	DefaultPurpose string
	// Refusal is the limits' refusal of the debit a read of the terms
	// was for (Store.OriginatorTerms: RefusedNotActive or a limit's
	// name), "" when they take it; decided by the statement, as at a
	// payment's creation.
	Refusal string
}

// BankingDay is the banking day a payment created at t counts toward: its
// US Eastern date, or the next banking day after a weekend or holiday.
func BankingDay(t time.Time) calendar.Date {
	d := calendar.DateOf(t)
	if calendar.IsBusinessDay(d) {
		return d
	}
	return calendar.AddBusinessDays(d, 1)
}

// refusal is the error of the originator's refusal named name (as the
// creating statement decided it: originator_not_active, or a limit's
// name), limit_exceeded naming the limit and what remains of it.
func (t Terms) refusal(name string) error {
	switch name {
	case LimitPerEntryDebit:
		return limitExceeded(LimitPerEntryDebit, t.PerEntryDebit, "A single debit may be at most "+money.Format(t.PerEntryDebit)+".")
	case LimitDailyDebit:
		return limitExceeded(LimitDailyDebit, max(0, t.DailyDebit-t.UsedDebit),
			"This debit would pass today's debit limit of "+money.Format(t.DailyDebit)+".")
	case LimitDailyCredit:
		return limitExceeded(LimitDailyCredit, max(0, t.DailyCredit-t.UsedCredit),
			"This credit would pass today's credit limit of "+money.Format(t.DailyCredit)+".")
	}
	return notActive()
}

func notActive() error {
	return errs.New(errs.OriginatorNotActive,
		"This environment's originator is not active (pending review or suspended); no payment can be created until it is.")
}

// limitExceeded is limit_exceeded for the limit name with remaining
// cents left of it.
func limitExceeded(name string, remaining int64, message string) error {
	return errs.New(errs.LimitExceeded, message+" Remaining: "+money.Format(remaining)+".").
		WithDetail("limit", name).WithDetail("remaining", money.Format(remaining))
}

// subscriptionTerms reads the terms of the originator of a new
// subscription of cents per debit, refusing one that is not active or
// whose amount no single debit may reach (subscriptionRefusal).
func (s *Service) subscriptionTerms(ctx context.Context, tx Store, scope tenant.Scope, cents int64) (Terms, error) {
	t, err := tx.OriginatorTerms(ctx, scope, BankingDay(s.now(ctx)).Format(time.DateOnly), cents)
	if err == nil {
		err = t.subscriptionRefusal()
	}
	if err != nil {
		return Terms{}, fmt.Errorf("read the subscription terms of merchant %s: %w", scope.MerchantID, err)
	}
	return t, nil
}

// subscriptionRefusal is the error of the limits' refusal of a new
// subscription's debit (t.Refusal, which the read decided): an originator
// that is not active, or a debit above the per-entry limit, refuses it; a
// daily total never does, since its scheduled debits are counted but
// never refused by one.
func (t Terms) subscriptionRefusal() error {
	switch t.Refusal {
	case "", LimitDailyDebit:
		return nil
	case RefusedNotActive:
		return notActive()
	case LimitPerEntryDebit:
		return limitExceeded(LimitPerEntryDebit, t.PerEntryDebit,
			"Each debit of a subscription may be at most "+money.Format(t.PerEntryDebit)+".")
	}
	return fmt.Errorf("subscription refused for %q, which no error explains", t.Refusal)
}

// SameDay reports whether the originator of scope may send Same Day ACH
// entries.
func (s *Service) SameDay(ctx context.Context, scope tenant.Scope) (bool, error) {
	if s.originators == nil {
		return AllActive{}.SameDay(ctx, scope)
	}
	return s.originators.SameDay(ctx, scope)
}
