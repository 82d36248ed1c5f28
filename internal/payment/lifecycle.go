package payment

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Finished is what settling or returning a payment did, for what it sets
// off beyond payments (package consequence): Done when the payment
// changed, with its source and the return code it came back with ("" when
// it was processed).
type Finished struct {
	Done     bool
	Scope    tenant.Scope
	SourceID string
	Code     string
}

// finished is p's Finished after finish settled it with code.
func finished(p Payment, code string) Finished {
	return Finished{Done: true, Scope: p.Scope, SourceID: p.SourceID, Code: code}
}

// SettleBatch is how many due sandbox payments one transaction settles.
const SettleBatch = batchSize

// DueTx returns up to limit payments whose sandbox settlement is due,
// locked in tx so that each settles once when several processes settle.
func (s *Service) DueTx(ctx context.Context, tx Store, limit int) ([]Payment, error) {
	due, err := tx.SettlingPayments(ctx, s.now(ctx), limit)
	if err != nil {
		return nil, fmt.Errorf("read payments due to settle: %w", err)
	}
	return due, nil
}

// SettleTx settles the due payment p in tx: processed, or in sandbox
// failed with the return code of a magic amount, checked first as it
// would be as it left (ReleaseTx). stale says that something since p was
// read (an earlier return of the batch) may have canceled it: it is read
// again, and left alone unless still pending.
func (s *Service) SettleTx(ctx context.Context, tx Store, p Payment, stale bool) (Finished, error) {
	if stale {
		cur, err := tx.Payment(ctx, p.Scope, p.ID)
		if err != nil {
			return Finished{}, fmt.Errorf("reload payment %s: %w", p.ID, err)
		}
		if cur.Status != Pending {
			return Finished{}, nil
		}
	}
	code := ""
	if withoutBank(ctx, p.Scope) {
		// A sandbox payment settles where a production one would
		// leave: its authorization is checked as it would be there.
		if ok, err := s.ReleaseTx(ctx, tx, p); err != nil || !ok {
			return Finished{}, err
		}
		code = SandboxReturnCode(p.Cents, p.RetryOf != nil)
	}
	if err := s.finish(ctx, tx, p, code); err != nil {
		return Finished{}, fmt.Errorf("settle payment %s: %w", p.ID, err)
	}
	return finished(p, code), nil
}

// inBatches runs batch, each time in its own transaction, until it handles
// fewer than batchSize rows, and returns the sum of what it counted. A
// failed batch is rolled back and not counted.
func (s *Service) inBatches(ctx context.Context, batch func(ctx context.Context, tx Store) (rows, counted int, err error)) (int, error) {
	total := 0
	for {
		rows, counted := 0, 0
		err := s.store.WithTx(ctx, func(tx Store) (err error) {
			rows, counted, err = batch(ctx, tx)
			return err
		})
		if err != nil {
			return total, err
		}
		total += counted
		if rows < batchSize {
			return total, nil
		}
	}
}

// finish settles p as processed (code "") or failed with an ACH return
// code, and fires payment.success or payment.failed. A returned payment
// that was reversed cancels its reversal or raises an alert
// (originalReturnedTx), a refunded debit returned unauthorized raises one
// (refundedReturnedTx); a returned subscription debit also applies the
// subscription's return rules. What the return or settlement does to the
// source is the caller's (package consequence, from the Finished it gets).
func (s *Service) finish(ctx context.Context, tx Store, p Payment, code string) error {
	now := s.now(ctx).UTC()
	p.SettledAt = &now
	typ := event.PaymentSuccess
	if code == "" {
		p.Status = Processed
	} else {
		reason := achcode.Reason(code)
		p.Status, p.FailureCode, p.FailureReason = Failed, &code, &reason
		typ = event.PaymentFailed
	}
	if err := tx.FinishPayment(ctx, p); err != nil {
		return fmt.Errorf("finish payment %s: %w", p.ID, err)
	}
	if err := s.sentInSandbox(ctx, tx, &p, now); err != nil {
		return err
	}
	if err := tx.RecordEvent(ctx, event.New(p.Scope, typ, p, now)); err != nil {
		return fmt.Errorf("record %s of payment %s: %w", typ, p.ID, err)
	}
	if code != "" && p.ReversalOf == nil {
		if err := s.originalReturnedTx(ctx, tx, p); err != nil {
			return err
		}
		if err := s.refundedReturnedTx(ctx, tx, p, code); err != nil {
			return err
		}
	}
	if code != "" && p.SubscriptionID != nil {
		if err := s.debitReturned(ctx, tx, p, code); err != nil {
			return err
		}
	}
	if code != "" && p.Direction == Debit {
		if _, err := s.recomputeGuardrail(ctx, tx, p.Scope); err != nil {
			return err
		}
	}
	return nil
}

// Cancel cancels a pending payment at the merchant's request
// (cancel_reason requested): in sandbox before it settles, in production
// before it is written into an ACH file (the file's assignment locks the
// payment, so the two never both happen). It records payment.canceled.
// Canceling a canceled payment returns it as it is.
func (s *Service) Cancel(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.lockPayment(ctx, tx, scope, id)
		if err != nil {
			return fmt.Errorf("lock payment %s: %w", id, err)
		}
		out = p
		if p.Status == Voided {
			return nil
		}
		if err := cancelJudged(scope, p); err != nil {
			return err
		}
		out, err = s.void(ctx, tx, p, CancelRequested)
		return err
	})
	return out, err
}

// CanCancel says whether Cancel of p in scope would cancel it now (a page
// offers the action only then): the same judgment, read without a lock.
// A canceled payment is not offered again.
func CanCancel(scope tenant.Scope, p Payment) bool {
	return p.Status != Voided && cancelJudged(scope, p) == nil
}

// cancelJudged is the judgment of a cancel of p in scope: nil when it may
// be canceled, conflict saying why not otherwise. A canceled payment is
// the caller's to answer as it is.
func cancelJudged(scope tenant.Scope, p Payment) error {
	switch {
	case p.Status != Pending && p.Status != Held:
		return errs.Newf(errs.Conflict, "This payment is %s; only a pending payment can be canceled.", p.Status)
	case scope.Env.Live() && p.SettleAt != nil:
		return errs.New(errs.Conflict, "This payment is already in an ACH file sent to the bank; it can no longer be canceled.")
	case instantPayment(p) && (p.RailStatus == nil || *p.RailStatus != RailQueued):
		return errs.New(errs.Conflict, "This instant credit was sent to the rail; it can no longer be canceled.")
	}
	return nil
}

// OriginatedTx records, in the caller's transaction tx, that a payment
// went out in an ACH file, with its dates: unless a return comes first, it
// settles (processed, payment.success) at sent.SettleAt.
func (s *Service) OriginatedTx(ctx context.Context, tx Store, scope tenant.Scope, id string, sent Sent) error {
	return tx.SetPaymentSent(ctx, scope, id, sent)
}

// SettledTx records, in the caller's transaction tx, that the bank's
// statement shows payment id settled on date (the booking date): that is
// its settlement date from now on, and its return windows follow from it.
// A pending payment is processed now, as at its SettleAt (payment.success,
// and an individual's debit counts as at risk from then); one processed
// before (the statement came after SettleAt) only takes the date; a
// failed or canceled one is left as it is.
func (s *Service) SettledTx(ctx context.Context, tx Store, scope tenant.Scope, id string, date calendar.Date) (Finished, error) {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil {
		return Finished{}, fmt.Errorf("lock payment %s: %w", id, err)
	}
	if p.Status != Pending && p.Status != Processed {
		return Finished{}, nil
	}
	// Whether the unauthorized window applies was decided when it left.
	sent := Sent{Settlement: date, Individual: p.UnauthorizedReturnWindowClosesAt != nil}
	if err := tx.SetPaymentSettlement(ctx, scope, id, date, sent.UnauthorizedUntil()); err != nil {
		return Finished{}, fmt.Errorf("date payment %s settled on %s: %w", id, date, err)
	}
	if p.Status == Processed {
		return Finished{}, nil
	}
	if p, err = tx.PaymentForUpdate(ctx, scope, id); err != nil { // with its new dates, for the event
		return Finished{}, fmt.Errorf("read payment %s again: %w", id, err)
	}
	if err := s.finish(ctx, tx, p, ""); err != nil {
		return Finished{}, fmt.Errorf("settle payment %s: %w", id, err)
	}
	return finished(p, ""), nil
}

// ReturnTx applies an ACH return in the caller's transaction tx: the
// payment fails with the code and fires payment.failed, even after it was
// processed (returns can come later). A payment already failed or
// canceled is left as it is.
func (s *Service) ReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) (Finished, error) {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil {
		return Finished{}, fmt.Errorf("lock payment %s: %w", id, err)
	}
	if p.Status == Failed || p.Status == Voided {
		return Finished{}, nil
	}
	if err := s.finish(ctx, tx, p, code); err != nil {
		return Finished{}, fmt.Errorf("return payment %s with %s: %w", id, code, err)
	}
	return finished(p, code), nil
}

// CheckSimulatedReturn refuses a sandbox return that cannot be
// simulated, before anything is read: a production scope, or a code that
// is not an ACH return code.
func CheckSimulatedReturn(scope tenant.Scope, code string) error {
	if err := tenant.SandboxOnly(scope); err != nil {
		return err
	}
	if !achcode.Valid(code) {
		return errs.Invalid("code", `code must be an ACH return code, "R" and two digits, like "R10"`)
	}
	return nil
}

// SimulateReturnTx is the sandbox's return, in tx (checked first with
// CheckSimulatedReturn): a pending or processed payment comes back with
// code (like "R10") exactly as an ACH return would. Any other status is
// 409 conflict.
func (s *Service) SimulateReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) (Finished, error) {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil {
		return Finished{}, fmt.Errorf("lock payment %s: %w", id, err)
	}
	if err := simulatedReturnJudged(p); err != nil {
		return Finished{}, err
	}
	if err := s.finish(ctx, tx, p, code); err != nil {
		return Finished{}, fmt.Errorf("return payment %s with %s: %w", id, code, err)
	}
	return finished(p, code), nil
}

// GetTx reads payment id in tx as Get answers it.
func (s *Service) GetTx(ctx context.Context, tx Store, scope tenant.Scope, id string) (Payment, error) {
	p, err := tx.Payment(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Payment{}, paymentNotFound()
	}
	return p, err
}

// lockPayment reads a payment and locks it until the transaction ends;
// payment_not_found when unknown.
func (s *Service) lockPayment(ctx context.Context, tx Store, scope tenant.Scope, id string) (Payment, error) {
	p, err := tx.PaymentForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Payment{}, paymentNotFound()
	}
	return p, err
}

// CanSimulateReturn says whether the sandbox's return of p in scope
// (SimulateReturnTx) would take it back now (a page offers the action only
// then): the same judgment, read without a lock.
func CanSimulateReturn(scope tenant.Scope, p Payment) bool {
	return tenant.SandboxOnly(scope) == nil && simulatedReturnJudged(p) == nil
}

// simulatedReturnJudged is the judgment of a sandbox return of p: an
// instant credit is final (not_reversible); only a pending or processed
// payment can come back (conflict).
func simulatedReturnJudged(p Payment) error {
	if instantPayment(p) {
		return notReversible()
	}
	if p.Status != Pending && p.Status != Processed {
		return errs.Newf(errs.Conflict, "This payment is %s; only a pending or processed payment can come back.", p.Status)
	}
	return nil
}
