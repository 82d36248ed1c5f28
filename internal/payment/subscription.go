package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Interval between a subscription's debits.
type Interval string

// Intervals. Monthly debits fall on the start date's day of the month, or
// the month's last day when it is shorter.
const (
	Weekly  Interval = "weekly"
	Monthly Interval = "monthly"
)

// Subscription states.
const (
	Active   = "active"
	Canceled = "canceled"
)

// Why a subscription, or a payment, was canceled (cancel_reason).
const (
	CancelRequested       = "requested"              // POST /v2/subscriptions/{id}/cancel, POST /v2/payments/{id}/cancel
	CancelSourceRemoved   = "funding_source_removed" // its source was removed
	CancelPaymentReturned = "payment_returned"       // a debit came back for good
	CancelMandateRevoked  = "mandate_revoked"        // its mandate was revoked
)

// MaxStartAhead is how far in the future a subscription may start.
const MaxStartAhead = 366 * 24 * time.Hour

// Subscription debits a Verified source on a schedule: one payment per due
// date, created by the scheduler.
type Subscription struct {
	Scope        tenant.Scope `json:"-"`
	ID           string       `json:"subscription_id"`
	SourceID     string       `json:"funding_source_id"`
	CustomerID   string       `json:"user_id"`
	Amount       string       `json:"amount"`
	Currency     string       `json:"currency"`
	Interval     Interval     `json:"interval"`
	Description  *string      `json:"description"`
	Status       string       `json:"status"`     // active or canceled
	StartDate    string       `json:"start_date"` // YYYY-MM-DD (US Eastern)
	NextDate     *string      `json:"next_payment_date"`
	PaymentCount int          `json:"payment_count"` // debits created so far
	CancelReason *string      `json:"cancel_reason"` // CancelRequested, CancelSourceRemoved, CancelPaymentReturned or CancelMandateRevoked
	MandateID    *string      `json:"mandate_id"`    // the recurring mandate its debits go out under
	// Purpose is what its debits are for (purpose.go); each has it.
	Purpose    Purpose    `json:"purpose"`
	CreatedAt  time.Time  `json:"created_at"`
	CanceledAt *time.Time `json:"canceled_at"`
	// RetryDate is the business day a returned debit (R01, R09) is
	// presented again, when one is scheduled.
	RetryDate *string `json:"retry_date"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`

	Cents        int64   `json:"-"`
	RetryDue     *string `json:"-"` // the due date the scheduled re-presentment is for
	RetryAttempt int     `json:"-"` // its attempt, 2 or 3
}

// DueDate is the date of a subscription's n-th debit (from 0), YYYY-MM-DD.
func DueDate(s Subscription, n int) string {
	start, _ := time.Parse(time.DateOnly, s.StartDate)
	if s.Interval == Weekly {
		return start.AddDate(0, 0, 7*n).Format(time.DateOnly)
	}
	y, m, d := start.Date()
	first := time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(d, last), 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// SubscriptionInput is a subscription request.
type SubscriptionInput struct {
	SourceID    string          `json:"funding_source_id"`
	Amount      json.RawMessage `json:"amount"`
	Interval    Interval        `json:"interval"`
	StartDate   string          `json:"start_date"`
	Description *string         `json:"description"`
	// The customer's authorization of the schedule: an existing recurring
	// mandate, or the consent from which one is created.
	MandateID     *string        `json:"mandate_id"`
	Authorization *Authorization `json:"authorization"`
	// Purpose is what its debits are for; nil: the originator's
	// default_purpose.
	Purpose *string `json:"purpose"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
}

// Subscribe creates a subscription on a Verified source (403
// debit_not_allowed on an Unverified one) under a recurring mandate (see
// authorize) and fires subscription.created.
func (s *Service) Subscribe(ctx context.Context, scope tenant.Scope, in SubscriptionInput) (Subscription, error) {
	if in.SourceID == "" {
		return Subscription{}, errs.Invalid("funding_source_id", "funding_source_id is required")
	}
	cents, err := s.amount(in.Amount)
	if err != nil {
		return Subscription{}, err
	}
	if in.Interval != Weekly && in.Interval != Monthly {
		return Subscription{}, errs.Invalid("interval", `interval must be "weekly" or "monthly"`)
	}
	now := s.now(ctx).UTC()
	today := calendar.DateOf(now)
	start, err := time.Parse(time.DateOnly, in.StartDate)
	switch {
	case err != nil:
		return Subscription{}, errs.Invalid("start_date", "start_date must be a date like 2026-12-01")
	case start.Before(today):
		return Subscription{}, errs.Invalid("start_date", "start_date must be today ("+today.Format(time.DateOnly)+", US Eastern) or later")
	case start.After(today.Add(MaxStartAhead)):
		return Subscription{}, errs.Invalid("start_date", "start_date must be within a year")
	}
	desc, err := description(in.Description)
	if err != nil {
		return Subscription{}, err
	}
	purpose, err := ParsePurpose("purpose", in.Purpose)
	if err != nil {
		return Subscription{}, err
	}
	meta, err := metadata.New(in.Metadata)
	if err != nil {
		return Subscription{}, err
	}
	var out Subscription
	err = s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.usableSource(ctx, tx, scope, in.SourceID, Debit)
		if err != nil {
			return err
		}
		terms, err := s.subscriptionTerms(ctx, tx, scope, cents)
		if err != nil {
			return err
		}
		purpose = purposeOr(purpose, terms.DefaultPurpose)
		mandate, err := s.authorize(ctx, tx, scope, in.SourceID, src, Recurring, in.MandateID, in.Authorization)
		if err != nil {
			return err
		}
		next := in.StartDate
		out = Subscription{MandateID: &mandate,
			Scope: scope, ID: ids.New(ids.Subscription), SourceID: in.SourceID, CustomerID: src.CustomerID,
			Amount: money.Format(cents), Currency: "USD", Cents: cents, Interval: in.Interval, Description: desc,
			Status: Active, StartDate: in.StartDate, NextDate: &next, CreatedAt: now, Purpose: purpose, Metadata: meta,
		}
		if err := tx.InsertSubscription(ctx, out); err != nil {
			return fmt.Errorf("insert subscription %s: %w", out.ID, err)
		}
		return tx.RecordEvent(ctx, event.New(scope, event.SubscriptionCreated, out, now))
	})
	return out, err
}

// GetSubscription returns a subscription.
func (s *Service) GetSubscription(ctx context.Context, scope tenant.Scope, id string) (Subscription, error) {
	sub, err := s.store.Subscription(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Subscription{}, subscriptionNotFound()
	}
	return sub, err
}

// ListSubscriptions returns a page of subscriptions, newest first, of one
// source when sourceID is not "".
func (s *Service) ListSubscriptions(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]Subscription, bool, error) {
	return s.SearchSubscriptions(ctx, scope, Filter{SourceID: sourceID}, p)
}

// SearchSubscriptions returns a page of subscriptions, newest first, that
// match f; an unknown status is invalid_request.
func (s *Service) SearchSubscriptions(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Subscription, bool, error) {
	if f.Status != "" && f.Status != Active && f.Status != Canceled {
		return nil, false, errs.Invalid("status", "status must be active or canceled")
	}
	f.Direction = ""
	items, err := s.store.ListSubscriptions(ctx, scope, f, p)
	return paging.Result(items, err, p)
}

// CancelSubscription stops future debits; payments already created go on.
// Canceling twice answers the canceled subscription.
func (s *Service) CancelSubscription(ctx context.Context, scope tenant.Scope, id string) (Subscription, error) {
	var out Subscription
	err := s.store.WithTx(ctx, func(tx Store) error {
		sub, err := s.lockSubscription(ctx, tx, scope, id)
		if err != nil {
			return fmt.Errorf("lock subscription %s: %w", id, err)
		}
		if sub.Status == Active {
			if err := s.cancel(ctx, tx, &sub, CancelRequested); err != nil {
				return err
			}
		}
		out = sub
		return nil
	})
	return out, err
}

// CancelForSourceTx cancels the active subscriptions of a source that is
// being removed, in the removal's transaction tx, each with
// subscription.canceled, and then its payments not sent yet, debits and
// credits (funding_source_removed, see CancelUnsentTx).
func (s *Service) CancelForSourceTx(ctx context.Context, tx Store, scope tenant.Scope, sourceID string) error {
	subs, err := tx.ActiveSubscriptionsOfSource(ctx, scope, sourceID)
	if err != nil {
		return fmt.Errorf("list active subscriptions of source %s: %w", sourceID, err)
	}
	for _, sub := range subs {
		if err := s.cancel(ctx, tx, &sub, CancelSourceRemoved); err != nil {
			return err
		}
	}
	return s.CancelUnsentTx(ctx, tx, scope, Unsent{SourceID: sourceID}, CancelSourceRemoved)
}

// debitReturned applies a subscription's return rules to its debit p that
// came back with code, in the return's transaction: R01 and R09 are
// presented again on the next business day under the reinitiation rule
// (at most achcode.MaxAttempts presentments in all, within RetryWindow of
// the original's settlement date); a return the rule refuses, or a second
// retriable return while a re-presentment is already scheduled, cancels
// the subscription (payment_returned). A subscription no longer active is
// left as it is.
func (s *Service) debitReturned(ctx context.Context, tx Store, p Payment, code string) error {
	sub, err := tx.SubscriptionForUpdate(ctx, p.Scope, *p.SubscriptionID)
	if err != nil || sub.Status != Active {
		return err
	}
	if sub.RetryDate != nil || p.DueDate == nil {
		return s.cancel(ctx, tx, &sub, CancelPaymentReturned)
	}
	retryOn := calendar.AddBusinessDays(calendar.DateOf(s.now(ctx)), 1)
	next, err := s.subscriptionRetry(ctx, tx, p, retryOn)
	if errs.Is(err, errs.RetryNotAllowed) {
		return s.cancel(ctx, tx, &sub, CancelPaymentReturned)
	}
	if err != nil {
		return err
	}
	day := retryOn.Format(time.DateOnly)
	sub.RetryDate, sub.RetryDue, sub.RetryAttempt = &day, p.DueDate, next
	return tx.UpdateSubscription(ctx, sub)
}

// cancel ends an active subscription for reason, stores it and records
// subscription.canceled; call it in the change's transaction.
func (s *Service) cancel(ctx context.Context, tx Store, sub *Subscription, reason string) error {
	now := s.now(ctx).UTC()
	sub.Status, sub.NextDate, sub.CanceledAt, sub.CancelReason = Canceled, nil, &now, &reason
	sub.RetryDate, sub.RetryDue, sub.RetryAttempt = nil, nil, 0
	if err := tx.UpdateSubscription(ctx, *sub); err != nil {
		return fmt.Errorf("update subscription %s: %w", sub.ID, err)
	}
	return tx.RecordEvent(ctx, event.New(sub.Scope, event.SubscriptionCanceled, *sub, now))
}

// RunDue creates the debit of every due date that has come (US Eastern),
// catching up on missed dates, and every re-presentment whose day has come,
// each exactly once: subscriptions are locked with SKIP LOCKED while one
// process works on them, and a unique index on (subscription, due date,
// attempt) backs that up. A subscription whose source was removed is
// canceled instead.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	return s.inBatches(ctx, func(ctx context.Context, tx Store) (int, int, error) {
		today := calendar.DateOf(s.now(ctx)).Format(time.DateOnly)
		due, err := tx.DueSubscriptions(ctx, today, batchSize)
		if err != nil {
			return 0, 0, fmt.Errorf("list subscriptions due %s: %w", today, err)
		}
		created := 0
		for _, sub := range due {
			k, err := s.runOne(ctx, tx, sub, today)
			if err != nil {
				return 0, 0, err
			}
			created += k
		}
		return len(due), created, nil
	})
}

func (s *Service) runOne(ctx context.Context, tx Store, sub Subscription, today string) (int, error) {
	created := 0
	for sub.Status == Active {
		retry := sub.RetryDate != nil && *sub.RetryDate <= today
		if !retry && (sub.NextDate == nil || *sub.NextDate > today) {
			break
		}
		if _, err := s.presentNext(ctx, tx, &sub, retry); err != nil || sub.Status != Active {
			return created, err
		}
		created++
	}
	return created, tx.UpdateSubscription(ctx, sub)
}

// presentNext creates the subscription's next debit, the scheduled
// re-presentment when retry is true and the next due date's otherwise, and
// moves sub on; sub is stored by the caller. When the source can no longer
// be debited the subscription is canceled (and stored) instead, and the
// payment is the zero value.
func (s *Service) presentNext(ctx context.Context, tx Store, sub *Subscription, retry bool) (Payment, error) {
	_, err := s.usableSource(ctx, tx, sub.Scope, sub.SourceID, Debit)
	if code := errs.CodeOf(err); code == errs.FundingSourceRemoved || code == errs.FundingSourceNotFound || code == errs.DebitNotAllowed {
		return Payment{}, s.cancel(ctx, tx, sub, CancelSourceRemoved)
	}
	if errs.Is(err, errs.FundingSourceBlocked) {
		return Payment{}, s.cancel(ctx, tx, sub, CancelMandateRevoked)
	}
	if err != nil {
		return Payment{}, err
	}
	of := &debitOf{subscriptionID: sub.ID, attempt: 1, mandateID: sub.MandateID, purpose: sub.Purpose}
	if retry {
		// The rule again on the day it goes out: the 180 days may have
		// run out while it waited.
		returned, err := tx.SubscriptionDebit(ctx, sub.Scope, sub.ID, *sub.RetryDue, sub.RetryAttempt-1)
		if err != nil {
			return Payment{}, fmt.Errorf("load the returned debit of subscription %s: %w", sub.ID, err)
		}
		_, err = s.subscriptionRetry(ctx, tx, returned, calendar.DateOf(s.now(ctx)))
		if errs.Is(err, errs.RetryNotAllowed) {
			return Payment{}, s.cancel(ctx, tx, sub, CancelPaymentReturned)
		}
		if err != nil {
			return Payment{}, err
		}
		orig, err := s.originalOf(ctx, tx, returned)
		if err != nil {
			return Payment{}, fmt.Errorf("find the original of payment %s: %w", returned.ID, err)
		}
		of.dueDate, of.attempt, of.retryOf = *sub.RetryDue, sub.RetryAttempt, &orig.ID
		sub.RetryDate, sub.RetryDue, sub.RetryAttempt = nil, nil, 0
	} else {
		of.dueDate = *sub.NextDate
		sub.PaymentCount++
		next := DueDate(*sub, sub.PaymentCount)
		sub.NextDate = &next
	}
	return s.insert(ctx, tx, sub.Scope, sub.SourceID, sub.CustomerID, sub.Cents, Debit, sub.Description, of)
}

// Advance is the sandbox's clock for one subscription: it creates the next
// debit now, the scheduled re-presentment if there is one and the next due
// date's otherwise, and answers it. A canceled subscription is 409
// conflict; one whose source can no longer be debited is canceled and
// answered with 409 too.
func (s *Service) Advance(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Payment{}, err
	}
	var out Payment
	canceled, reason := false, ""
	err := s.store.WithTx(ctx, func(tx Store) error {
		sub, err := s.lockSubscription(ctx, tx, scope, id)
		if err != nil {
			return fmt.Errorf("lock subscription %s: %w", id, err)
		}
		if sub.Status != Active {
			return errs.New(errs.Conflict, "This subscription is canceled; it creates no more debits.")
		}
		if out, err = s.presentNext(ctx, tx, &sub, sub.RetryDate != nil); err != nil {
			return err
		}
		canceled = sub.Status != Active
		if canceled {
			reason = *sub.CancelReason
			return nil
		}
		return tx.UpdateSubscription(ctx, sub)
	})
	switch {
	case err == nil && canceled && reason == CancelPaymentReturned:
		err = errs.New(errs.Conflict, "The returned debit may no longer be presented again (180 days after its settlement have passed); the subscription was canceled.")
	case err == nil && canceled:
		err = errs.New(errs.Conflict, "This subscription's funding source can no longer be debited; the subscription was canceled.")
	}
	return out, err
}

// lockSubscription reads a subscription and locks it until the
// transaction ends; subscription_not_found when unknown.
func (s *Service) lockSubscription(ctx context.Context, tx Store, scope tenant.Scope, id string) (Subscription, error) {
	sub, err := tx.SubscriptionForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Subscription{}, subscriptionNotFound()
	}
	return sub, err
}

func subscriptionNotFound() error {
	return &errs.Error{Code: errs.SubscriptionNotFound, Message: "No subscription with this id exists."}
}
