package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Reinitiation (NACHA's word for presenting a returned debit again) has one
// rule, reinitiation, for one-off debits (Retry) and subscriptions
// (debitReturned, presentNext) alike: only a debit that came back R01 or
// R09, at most twice, within RetryWindow of the original's settlement date.
// A return the service did not apply (one that came too late) leaves the
// payment as it was, so "failed with R01 or R09" is the whole condition on
// the return.
//
// A re-presentment is a payment of its own with the original's amount,
// source and description, described RETRY PYMT in its batch, and its
// receiver name and Individual Identification Number are the source's as
// on every entry, so the receiving bank's stop-payment matching sees the
// same entry. It names the original (retry_of) and its attempt (2 or 3),
// and the schema holds one payment per original and attempt, so two
// concurrent retries store one. It goes out under the original's
// mandate, also a single one already used: NACHA counts a reinitiation as
// the same authorized entry presented again, not as a new debit that
// would need an authorization of its own.

// A new debit (POST /v2/payments) of the same amount from a source whose
// debit came back R01 or R09 within RetryWindow days is that debit
// presented again, whatever the merchant calls it: it is refused
// (reinitiation_required) and goes through Retry, which keeps to the
// rule's count and window, unless the customer authorized it after the
// return (its authorization.accepted_at is later). A debit under a
// mandate named by id is authorized when that mandate was accepted; the
// sandbox's own mandate, created for a debit without an authorization, is
// no authorization. The debit's creation statement decides it
// (Store.CreateDebit, bounded by Reinitiation) so that creation stays one
// statement; Go reads the returned debit it found and explains the
// refusal. Subscriptions' debits and re-presentments are created by the
// service itself, not by that statement, and are not judged by it.

// Reinitiation bounds the rule for one new debit.
type Reinitiation struct {
	Codes []string      // the return codes that make a debit one to present again
	Since calendar.Date // the first day (US Eastern) such a return counts
	// AuthorizedAt is the request's authorization.accepted_at (UTC); nil
	// when the debit names a mandate (its acceptance counts) or brings
	// no authorization.
	AuthorizedAt *time.Time
}

// Returned is a returned debit that a new one would present again.
type Returned struct {
	PaymentID string
	Code      string
	At        time.Time // when the return was applied, UTC
}

// reinitiationBounds is the rule's bounds for a debit created at now
// under fresh, the mandate made of the request's authorization (nil for
// a named mandate).
func reinitiationBounds(now time.Time, fresh *Mandate, authorized bool) Reinitiation {
	r := Reinitiation{Codes: achcode.RetriableCodes, Since: calendar.DateOf(now).AddDate(0, 0, -RetryWindow)}
	if fresh != nil && authorized {
		at := fresh.AcceptedAt
		r.AuthorizedAt = &at
	}
	return r
}

// refusal is reinitiation_required for the returned debit r.
func (r *Returned) refusal() error {
	if r == nil {
		return nil
	}
	return &errs.Error{Code: errs.ReinitiationRequired, Param: "funding_source_id",
		Message: fmt.Sprintf("A debit of this amount from this funding source came back %s on %s (%s); presenting it again is a reinitiation: "+
			"use POST /v2/payments/%s/retry, or send an authorization accepted after the return.",
			r.Code, calendar.DateOf(r.At).Format(time.DateOnly), r.PaymentID, r.PaymentID)}
}

// RetryWindow is how long after the original's settlement date a debit may
// be presented again: 180 calendar days.
const RetryWindow = 180

// EffectiveDate is the effective entry date of an ACH file created at
// created: the next banking day (US Eastern). It is the settlement date of
// the file's entries, from which the retry and reversal windows count.
func EffectiveDate(created time.Time) calendar.Date {
	return calendar.AddBusinessDays(calendar.DateOf(created), 1)
}

// settlementDate is p's settlement date: the one stored when it left; for
// a payment that left before dates were stored, in production its ACH
// file's effective entry date; in sandbox, or for a payment that went in no
// file, the day it settled. ok is false while it has neither.
func (s *Service) settlementDate(ctx context.Context, tx Store, p Payment) (calendar.Date, bool, error) {
	if p.SettlementDate != nil {
		// Stored when it left: a same-day entry's is its file's day.
		if d, err := time.Parse(time.DateOnly, *p.SettlementDate); err == nil {
			return d, true, nil
		}
	}
	if p.Scope.Env.Live() {
		at, err := tx.PaymentFiledAt(ctx, p.Scope, p.ID)
		if err != nil {
			return calendar.Date{}, false, fmt.Errorf("read when payment %s was filed: %w", p.ID, err)
		}
		if at != nil {
			return EffectiveDate(*at), true, nil
		}
	}
	if p.SettledAt == nil {
		return calendar.Date{}, false, nil
	}
	return calendar.DateOf(*p.SettledAt), true, nil
}

// reinitiation is the rule: p, a payment presented for the attempt-th
// time (1 for the original), came back; may it be presented again on day,
// given the original's settlement date settled? It answers the next
// attempt, or retry_not_allowed saying which rule refuses.
func reinitiation(p Payment, attempt int, settled calendar.Date, hasSettled bool, day calendar.Date) (int, error) {
	switch {
	case p.Direction != Debit:
		return 0, retryRefused("Only a debit can be presented again; this payment is a credit.")
	case p.ReversalOf != nil:
		return 0, retryRefused("A reversal is not presented again.")
	case p.Status != Failed || p.FailureCode == nil:
		return 0, retryRefused("This payment is " + string(p.Status) + "; only a debit returned R01 or R09 can be presented again.")
	case !achcode.Retriable(*p.FailureCode):
		return 0, retryRefused("This debit came back " + *p.FailureCode + " (" + achcode.Reason(*p.FailureCode) +
			"); only a debit returned R01 (insufficient funds) or R09 (uncollected funds) can be presented again.")
	case attempt >= achcode.MaxAttempts:
		return 0, retryRefused("This debit was presented again twice already; a third re-presentment is not allowed.")
	case !hasSettled:
		return 0, retryRefused("The original debit has no settlement date, so the 180-day limit cannot be checked.")
	}
	last := settled.AddDate(0, 0, RetryWindow)
	if day.After(last) {
		return 0, retryRefused("The original debit settled on " + settled.Format(time.DateOnly) +
			"; it can be presented again only within 180 days of that, until " + last.Format(time.DateOnly) + ".")
	}
	return attempt + 1, nil
}

// retrySourceRefusal is retry_not_allowed for the source's refusal of a
// new debit named name (SourceInfo.DebitRefusal); nil for "".
func retrySourceRefusal(name string) error {
	switch name {
	case "":
		return nil
	case RefusedRemoved:
		return retryRefused("The funding source was removed; its debits are not presented again.")
	case RefusedBlocked:
		return retryRefused("The funding source is blocked; its debits are not presented again until it is unblocked.")
	case RefusedUnverified:
		return retryRefused("The funding source is not Verified; it takes no debit.")
	}
	return fmt.Errorf("re-presentment refused for %q, which no error explains", name)
}

func retryRefused(msg string) error {
	return errs.New(errs.RetryNotAllowed, msg)
}

// attemptOf is which presentment p is: 1 for an original.
func attemptOf(p Payment) int {
	if p.Attempt != nil {
		return *p.Attempt
	}
	return 1
}

// CanRetry says whether Retry of p would present it again now (a page
// offers the action only then): the same judgment, read without a lock.
func (s *Service) CanRetry(ctx context.Context, scope tenant.Scope, p Payment) (bool, error) {
	if p.Status != Failed || p.Direction != Debit {
		return false, nil
	}
	_, _, err := s.retryJudged(ctx, s.store, scope, p)
	if errs.Is(err, errs.RetryNotAllowed) {
		return false, nil
	}
	return err == nil, err
}

// retryJudged is the judgment of a retry of named, the presentment a
// request names, read in tx: a subscription's debit is not retried here,
// only the latest presentment is, and reinitiation's rule must allow it.
// It answers the original and the next attempt's number.
func (s *Service) retryJudged(ctx context.Context, tx Store, scope tenant.Scope, named Payment) (Payment, int, error) {
	orig := named
	if named.RetryOf != nil {
		var err error
		if orig, err = tx.Payment(ctx, scope, *named.RetryOf); err != nil {
			return Payment{}, 0, fmt.Errorf("load payment %s: %w", *named.RetryOf, err)
		}
	}
	if named.SubscriptionID != nil {
		return Payment{}, 0, retryRefused("A subscription's debit is presented again by its subscription, on the next banking day after the return.")
	}
	later, err := tx.Presentments(ctx, scope, orig.ID)
	if err != nil {
		return Payment{}, 0, fmt.Errorf("list presentments of payment %s: %w", orig.ID, err)
	}
	if n := len(later); n > 0 && later[n-1].ID != named.ID {
		latest := later[n-1]
		if latest.Status == Pending {
			return Payment{}, 0, retryRefused("This debit was presented again already as " + latest.ID + ", which is pending.")
		}
		return Payment{}, 0, retryRefused("This debit was presented again already as " + latest.ID + "; retry that payment if it came back R01 or R09.")
	}
	settled, ok, err := s.settlementDate(ctx, tx, orig)
	if err != nil {
		return Payment{}, 0, err
	}
	attempt, err := reinitiation(named, attemptOf(named), settled, ok, calendar.DateOf(s.now(ctx)))
	return orig, attempt, err
}

// Retry presents a one-off debit that came back R01 or R09 again, under
// the rule above: a new pending debit with retry_of naming the original.
// It names the latest presentment: the original, or its re-presentment
// that came back too. Anything else is 409 retry_not_allowed with the rule
// that refuses it. The original's row is locked first, so concurrent
// retries of one original run one after the other and the second finds
// the first's payment.
func (s *Service) Retry(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		named, err := tx.Payment(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return paymentNotFound()
		}
		if err != nil {
			return fmt.Errorf("load payment %s: %w", id, err)
		}
		origID := named.ID
		if named.RetryOf != nil {
			origID = *named.RetryOf
		}
		if _, err := tx.PaymentForUpdate(ctx, scope, origID); err != nil {
			return fmt.Errorf("lock payment %s: %w", origID, err)
		}
		// Read again after the lock: a statement of its own sees what a
		// concurrent retry committed meanwhile.
		if named, err = tx.Payment(ctx, scope, id); err != nil {
			return fmt.Errorf("reload payment %s: %w", id, err)
		}
		orig, attempt, err := s.retryJudged(ctx, tx, scope, named)
		if err != nil {
			return err
		}
		if err := s.retrySource(ctx, tx, orig); err != nil {
			return err
		}
		p := s.pending(ctx, scope, orig.SourceID, orig.CustomerID, orig.Cents, Debit, orig.Description, nil)
		p.MandateID, p.RetryOf, p.Attempt, p.Purpose = orig.MandateID, &orig.ID, &attempt, orig.Purpose
		if err := tx.InsertPayment(ctx, p); errs.Is(err, errs.Conflict) {
			return retryRefused("This debit was presented again already.")
		} else if err != nil {
			return fmt.Errorf("insert retry %s of payment %s: %w", p.ID, origID, err)
		}
		out, err = s.holdIfHeld(ctx, tx, p)
		return err
	})
	return out, err
}

// retrySource checks, under the source's share lock, that the original's
// source and mandate may still be debited: a source that refuses a new
// debit (SourceInfo.DebitRefusal: removed, blocked, not Verified) or a
// revoked mandate takes no re-presentment.
func (s *Service) retrySource(ctx context.Context, tx Store, orig Payment) error {
	src, err := tx.PaymentSource(ctx, orig.Scope, orig.SourceID)
	if err != nil {
		return fmt.Errorf("load source %s of payment %s: %w", orig.SourceID, orig.ID, err)
	}
	if err := retrySourceRefusal(src.DebitRefusal); err != nil {
		return err
	}
	if orig.MandateID == nil {
		return nil
	}
	m, err := tx.Mandate(ctx, orig.Scope, *orig.MandateID)
	if err != nil {
		return fmt.Errorf("load mandate %s of payment %s: %w", *orig.MandateID, orig.ID, err)
	}
	if m.Status != MandateActive {
		return retryRefused("The debit's mandate " + m.ID + " was revoked; it authorizes no re-presentment.")
	}
	return nil
}

// subscriptionRetry applies the rule to a subscription's debit p that came
// back, with the re-presentment planned for day: it answers the next
// attempt or why there is none.
func (s *Service) subscriptionRetry(ctx context.Context, tx Store, p Payment, day calendar.Date) (int, error) {
	orig, err := s.originalOf(ctx, tx, p)
	if err != nil {
		return 0, fmt.Errorf("find the original of payment %s: %w", p.ID, err)
	}
	settled, ok, err := s.settlementDate(ctx, tx, orig)
	if err != nil {
		return 0, err
	}
	return reinitiation(p, attemptOf(p), settled, ok, day)
}

// originalOf is the first presentment of p: p itself, or the payment it
// presents again.
func (s *Service) originalOf(ctx context.Context, tx Store, p Payment) (Payment, error) {
	switch {
	case p.RetryOf != nil:
		return tx.Payment(ctx, p.Scope, *p.RetryOf)
	case p.SubscriptionID != nil && p.DueDate != nil && attemptOf(p) > 1:
		// A re-presentment stored before retry_of existed.
		return tx.SubscriptionDebit(ctx, p.Scope, *p.SubscriptionID, *p.DueDate, 1)
	}
	return p, nil
}

// Retries returns the re-presentments of an original debit, by attempt.
func (s *Service) Retries(ctx context.Context, scope tenant.Scope, originalID string) ([]Payment, error) {
	return s.store.Presentments(ctx, scope, originalID)
}
