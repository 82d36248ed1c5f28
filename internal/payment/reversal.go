package payment

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// A reversal corrects an erroneous entry (a duplicate, a wrong amount,
// account or date) with an entry in the opposite direction for the same
// amount to the same account, described REVERSAL. It is a payment of its
// own (reversal_of, reversal_reason) so that it goes out through the
// normal origination path, in the next file and exactly once, and can
// settle or come back like any entry. It needs no mandate: it undoes an
// entry rather than moving money the customer agreed to. The schema holds
// one reversal per payment; the reversed payment shows it (Reversal), read
// from the reversal's row.

// Reversal is how a payment was reversed.
type Reversal struct {
	PaymentID string    `json:"payment_id"` // the reversing payment
	Reason    string    `json:"reason"`     // one of ReverseReasons
	CreatedAt time.Time `json:"created_at"` // UTC
}

// ReverseReasons are the reasons NACHA allows a reversal for.
var ReverseReasons = []string{"duplicate", "wrong_amount", "wrong_account", "wrong_date"}

// ReversalWindow is until which banking day after its settlement date a
// payment may be reversed: the fifth.
const ReversalWindow = 5

// Why a reversal was canceled (cancel_reason).
const (
	// CancelReversalWindowClosed: its file was assigned after the last
	// banking day of the window.
	CancelReversalWindowClosed = "reversal_window_closed"
	// CancelOriginalReturned: the payment it reverses came back before it
	// left, so there is nothing left to undo.
	CancelOriginalReturned = "original_returned"
)

// The window is judged twice: when the reversal is asked for, against the
// day of the file that will carry it (in production the next window of
// the schedule, so a request after the last window of the fifth banking
// day is refused at once rather than accepted and canceled), and again
// when a file takes it (ReleaseTx), since a file may leave later than
// planned (an outage, a run that was not due).

// ReversalLastDay is the last day a reversal of an entry settled on
// settled may leave: the fifth banking day after it.
func ReversalLastDay(settled calendar.Date) calendar.Date {
	return calendar.AddBusinessDays(settled, ReversalWindow)
}

// ReversalLeaves is the day a reversal asked for at now leaves: in
// production the day of the schedule's next window, in sandbox today.
func ReversalLeaves(sched calendar.Schedule, live bool, now time.Time) calendar.Date {
	if !live {
		return calendar.DateOf(now)
	}
	return sched.Next(now).Date
}

// ReverseInput is a reversal request.
type ReverseInput struct {
	Reason string `json:"reason"`
}

// Reverse reverses a payment that went out: in production one whose entry
// is in an ACH file (pending or processed), in sandbox a processed one
// (a pending sandbox payment is canceled instead). It stores the reversing
// payment, fires payment.reversed with the reversed payment and answers
// that payment, its reversal named. Past the fifth banking day after the
// settlement date it is 409 reversal_window_closed; a payment reversed
// already, a reversal, or one that never went out is 409 conflict.
func (s *Service) Reverse(ctx context.Context, scope tenant.Scope, id string, in ReverseInput) (Payment, error) {
	if !slices.Contains(ReverseReasons, in.Reason) {
		return Payment{}, errs.Invalid("reason", `reason must be "duplicate", "wrong_amount", "wrong_account" or "wrong_date"`)
	}
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		if _, err := s.lockPayment(ctx, tx, scope, id); err != nil {
			return fmt.Errorf("lock payment %s: %w", id, err)
		}
		// Read again after the lock: a statement of its own sees a
		// reversal that a concurrent request committed meanwhile.
		p, err := tx.Payment(ctx, scope, id)
		if err != nil {
			return fmt.Errorf("reload payment %s: %w", id, err)
		}
		if err := s.reverseJudged(ctx, tx, scope, p); err != nil {
			return err
		}
		d := Credit
		if p.Direction == Credit {
			d = Debit
		}
		// The source's share lock holds off its removal until the
		// reversal is stored. A reversal goes out under the original's
		// authority, so it needs what every payment needs to leave
		// (Payment.refusal: a live source, and one no return blocked for
		// a debit), not a Verified one: it is refused now exactly when it
		// would be canceled as it leaves.
		src, err := tx.PaymentSource(ctx, scope, p.SourceID)
		if err != nil {
			return fmt.Errorf("load source %s of payment %s: %w", p.SourceID, p.ID, err)
		}
		switch (Payment{Direction: d}).refusal(Standing{SourceRemoved: src.Removed, SourceBlocked: src.Blocked}) {
		case CancelSourceRemoved:
			return sourceRefused(RefusedRemoved)
		case CancelSourceBlocked:
			return sourceRefused(RefusedBlocked)
		}
		r := s.pending(ctx, scope, p.SourceID, p.CustomerID, p.Cents, d, p.Description, nil)
		r.ReversalOf, r.ReversalReason, r.Purpose = &p.ID, &in.Reason, p.Purpose
		if err := tx.InsertPayment(ctx, r); errs.Is(err, errs.Conflict) {
			return errs.New(errs.Conflict, "This payment was reversed already.")
		} else if err != nil {
			return fmt.Errorf("insert reversal %s of payment %s: %w", r.ID, p.ID, err)
		}
		p.Reversal = &Reversal{PaymentID: r.ID, Reason: in.Reason, CreatedAt: r.CreatedAt}
		out = p
		return tx.RecordEvent(ctx, event.New(scope, event.PaymentReversed, p, r.CreatedAt))
	})
	return out, err
}

// CanReverse says whether Reverse of p would reverse it now (a page
// offers the action only then): the same judgment, read without a lock.
func (s *Service) CanReverse(ctx context.Context, scope tenant.Scope, p Payment) (bool, error) {
	err := s.reverseJudged(ctx, s.store, scope, p)
	if errs.Is(err, errs.Conflict) || errs.Is(err, errs.NotReversible) || errs.Is(err, errs.ReversalWindowClosed) {
		return false, nil
	}
	return err == nil, err
}

// reverseJudged is the judgment of a reversal of p in scope, read in tx:
// p may be reversed at all (reversible), and a reversal asked for now
// leaves within the window after its settlement date.
func (s *Service) reverseJudged(ctx context.Context, tx Store, scope tenant.Scope, p Payment) error {
	settled, err := s.reversible(ctx, tx, p)
	if err != nil {
		return err
	}
	last := ReversalLastDay(settled)
	if leaves := ReversalLeaves(s.cfg.Schedule, scope.Env.Live(), s.now(ctx)); leaves.After(last) {
		return errs.Newf(errs.ReversalWindowClosed, "This payment settled on %s; a reversal must leave by the fifth banking day after that, %s, and the next file leaves on %s.",
			settled.Format(time.DateOnly), last.Format(time.DateOnly), leaves.Format(time.DateOnly))
	}
	return nil
}

// reversible answers p's settlement date when p may be reversed at all,
// and conflict saying why not otherwise.
func (s *Service) reversible(ctx context.Context, tx Store, p Payment) (calendar.Date, error) {
	switch {
	case instantPayment(p):
		return calendar.Date{}, notReversible()
	case p.Reversal != nil:
		return calendar.Date{}, errs.Newf(errs.Conflict, "This payment was reversed already by %s.", p.Reversal.PaymentID)
	case p.ReversalOf != nil:
		return calendar.Date{}, errs.New(errs.Conflict, "This payment is a reversal; a reversal is not reversed.")
	case p.Status == Failed || p.Status == Voided:
		return calendar.Date{}, errs.Newf(errs.Conflict, "This payment is %s; it moved no money, so there is nothing to reverse.", p.Status)
	case p.Status == Held:
		return calendar.Date{}, errs.New(errs.Conflict, "This payment is held for review and was never sent; cancel it instead of reversing it.")
	case p.Status == Pending && !p.Scope.Env.Live():
		return calendar.Date{}, errs.New(errs.Conflict, "This payment is pending; cancel it instead of reversing it.")
	}
	settled, ok, err := s.settlementDate(ctx, tx, p)
	switch {
	case err != nil:
		return calendar.Date{}, err
	case !ok:
		return calendar.Date{}, errs.New(errs.Conflict, "This payment is pending and not yet in an ACH file; cancel it instead of reversing it.")
	}
	return settled, nil
}

// reversalClosed reports whether reversal p, about to leave, is past its
// window: its original settled more than ReversalWindow banking days
// before today.
func (s *Service) reversalClosed(ctx context.Context, tx Store, p Payment) (bool, error) {
	orig, err := tx.Payment(ctx, p.Scope, *p.ReversalOf)
	if err != nil {
		return false, fmt.Errorf("check the window of reversal %s: %w", p.ID, err)
	}
	settled, ok, err := s.settlementDate(ctx, tx, orig)
	if err != nil || !ok {
		return false, err
	}
	return calendar.DateOf(s.now(ctx)).After(ReversalLastDay(settled)), nil
}

// originalReturnedTx is what the return of p does to p's reversal, in the
// return's transaction tx. A reversal that has not left (production: in
// no ACH file; sandbox: not settled) is canceled (original_returned): the
// return undid the entry already, and sending the reversal too would move
// the money back a second time. One that left cannot be called back, so
// the return raises a reversal_then_return alert for an operator, who
// must see that the customer may have been paid back twice.
func (s *Service) originalReturnedTx(ctx context.Context, tx Store, p Payment) error {
	cur, err := tx.Payment(ctx, p.Scope, p.ID)
	if err != nil || cur.Reversal == nil {
		return err
	}
	r, err := tx.PaymentForUpdate(ctx, p.Scope, cur.Reversal.PaymentID)
	if err != nil {
		return fmt.Errorf("lock reversal %s of returned %s: %w", cur.Reversal.PaymentID, p.ID, err)
	}
	left := r.Status == Processed || (p.Scope.Env.Live() && r.SettleAt != nil)
	switch {
	case r.Status == Failed || r.Status == Voided:
		return nil
	case !left:
		_, err := s.void(ctx, tx, r, CancelOriginalReturned)
		return err
	}
	a := Alert{Scope: p.Scope, ID: ids.New("alrt_"), RuleID: AlertReversalThenReturn, RuleVersion: 1,
		PaymentID: p.ID, SourceID: p.SourceID, CreatedAt: s.now(ctx).UTC()}
	if err := tx.InsertAlert(ctx, a); err != nil {
		return fmt.Errorf("alert the return of reversed %s: %w", p.ID, err)
	}
	return nil
}
