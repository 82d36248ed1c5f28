package payment

import (
	"context"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// SettleDue settles sandbox payments whose delay has passed: processed, or
// failed with the return code of a magic amount. Several processes may run
// it at once; each payment settles once.
func (s *Service) SettleDue(ctx context.Context) (int, error) {
	return s.inBatches(ctx, func(ctx context.Context, tx Store) (int, int, error) {
		due, err := tx.SettlingPayments(ctx, s.now(), batchSize)
		if err != nil {
			return 0, 0, err
		}
		returned := false
		for _, p := range due {
			if returned {
				// An earlier return of this batch may have canceled p
				// (its source blocked or removed): read it again.
				cur, err := tx.Payment(ctx, p.Scope, p.ID)
				if err != nil {
					return 0, 0, err
				}
				if cur.Status != Pending {
					continue
				}
			}
			code := ""
			if p.Scope.Env == tenant.Sandbox {
				// A sandbox payment settles where a production one would
				// leave: its authorization is checked as it would be there.
				if ok, err := s.ReleaseTx(ctx, tx, p); err != nil || !ok {
					if err != nil {
						return 0, 0, err
					}
					continue
				}
				code = SandboxReturnCode(p.Cents, p.RetryOf != nil)
			}
			if err := s.finish(ctx, tx, p, code); err != nil {
				return 0, 0, err
			}
			returned = returned || code != ""
		}
		return len(due), len(due), nil
	})
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
// (originalReturnedTx); a returned subscription debit also applies the subscription's return rules, and
// any return the return policy on its source (onReturn); a processed one
// tells the source's account (onProcessed).
func (s *Service) finish(ctx context.Context, tx Store, p Payment, code string) error {
	now := s.now().UTC()
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
		return err
	}
	if err := s.sentInSandbox(ctx, tx, &p, now); err != nil {
		return err
	}
	if err := tx.RecordEvent(ctx, event.New(p.Scope, typ, p, now)); err != nil {
		return err
	}
	if code != "" && p.ReversalOf == nil {
		if err := s.originalReturnedTx(ctx, tx, p); err != nil {
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
	if code != "" && s.onReturn != nil {
		return s.onReturn(ctx, tx, p.Scope, p.SourceID, code)
	}
	if code == "" && s.onProcessed != nil {
		return s.onProcessed(ctx, tx, p.Scope, p.SourceID)
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
			return err
		}
		out = p
		switch {
		case p.Status == Voided:
			return nil
		case p.Status != Pending && p.Status != Held:
			return errs.Newf(errs.Conflict, "This payment is %s; only a pending payment can be canceled.", p.Status)
		case scope.Env.Live() && p.SettleAt != nil:
			return errs.New(errs.Conflict, "This payment is already in an ACH file sent to the bank; it can no longer be canceled.")
		}
		out, err = s.void(ctx, tx, p, CancelRequested)
		return err
	})
	return out, err
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
func (s *Service) SettledTx(ctx context.Context, tx Store, scope tenant.Scope, id string, date calendar.Date) error {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil || (p.Status != Pending && p.Status != Processed) {
		return err
	}
	// Whether the unauthorized window applies was decided when it left.
	sent := Sent{Settlement: date, Individual: p.UnauthorizedReturnWindowClosesAt != nil}
	if err := tx.SetPaymentSettlement(ctx, scope, id, date, sent.UnauthorizedUntil()); err != nil {
		return err
	}
	if p.Status == Processed {
		return nil
	}
	if p, err = tx.PaymentForUpdate(ctx, scope, id); err != nil { // with its new dates, for the event
		return err
	}
	return s.finish(ctx, tx, p, "")
}

// ReturnTx applies an ACH return in the caller's transaction tx: the
// payment fails with the code and fires payment.failed, even after it was
// processed (returns can come later). A payment already failed or
// canceled is left as it is.
func (s *Service) ReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) error {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil || p.Status == Failed || p.Status == Voided {
		return err
	}
	return s.finish(ctx, tx, p, code)
}

// SimulateReturn is the sandbox's return: a pending or processed payment
// comes back with code (like "R10") exactly as an ACH return would, and the
// payment is answered as it now is. Any other status is 409 conflict.
func (s *Service) SimulateReturn(ctx context.Context, scope tenant.Scope, id, code string) (Payment, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Payment{}, err
	}
	if !achcode.Valid(code) {
		return Payment{}, errs.Invalid("code", `code must be an ACH return code, "R" and two digits, like "R10"`)
	}
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.lockPayment(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if p.Status != Pending && p.Status != Processed {
			return errs.Newf(errs.Conflict, "This payment is %s; only a pending or processed payment can come back.", p.Status)
		}
		if err := s.finish(ctx, tx, p, code); err != nil {
			return err
		}
		out, err = tx.Payment(ctx, scope, id)
		return err
	})
	return out, err
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
