package consequence

import (
	"context"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// The merchant's requests and the sandbox's jobs whose effects cross
// domains: each runs its domain's step and what it sets off in one
// transaction.

// Remove removes a source (funding.Service.RemoveTx); its subscriptions
// end and its unsent payments are canceled with it.
func (s *Service) Remove(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	return s.removal(ctx, scope, func(tx Tx) (funding.Source, bool, error) {
		return s.funding.RemoveTx(ctx, tx.Funding(), scope, id)
	})
}

// RemoveAccount removes the customer's source holding an account number
// (funding.Service.RemoveAccountTx), as Remove does.
func (s *Service) RemoveAccount(ctx context.Context, scope tenant.Scope, customerID, number string) (funding.Source, error) {
	return s.removal(ctx, scope, func(tx Tx) (funding.Source, bool, error) {
		return s.funding.RemoveAccountTx(ctx, tx.Funding(), scope, customerID, number)
	})
}

// removal runs remove and, when it removed the source now, what that
// sets off, in one transaction.
func (s *Service) removal(ctx context.Context, scope tenant.Scope, remove func(tx Tx) (funding.Source, bool, error)) (funding.Source, error) {
	var out funding.Source
	err := s.store.WithTx(ctx, func(tx Tx) error {
		src, removed, err := remove(tx)
		out = src
		if err != nil || !removed {
			return err
		}
		return s.SourceChangedTx(ctx, tx, scope, src.ID, funding.Outcome{Removed: true})
	})
	return out, err
}

// SimulateReturn is the sandbox's return of a payment
// (payment.Service.SimulateReturnTx), with what it sets off; it answers
// the payment as it then is.
func (s *Service) SimulateReturn(ctx context.Context, scope tenant.Scope, id, code string) (payment.Payment, error) {
	if err := payment.CheckSimulatedReturn(scope, code); err != nil {
		return payment.Payment{}, err
	}
	var out payment.Payment
	err := s.store.WithTx(ctx, func(tx Tx) error {
		f, err := s.payments.SimulateReturnTx(ctx, tx.Payments(), scope, id, code)
		if err != nil {
			return err
		}
		if err := s.FinishedTx(ctx, tx, f); err != nil {
			return err
		}
		out, err = s.payments.GetTx(ctx, tx.Payments(), scope, id)
		return err
	})
	return out, err
}

// SimulateDepositReturn is the sandbox's return of a source's open
// micro-deposits (funding.Service.SimulateDepositReturnTx), with what it
// sets off; it answers the source as it then is.
func (s *Service) SimulateDepositReturn(ctx context.Context, scope tenant.Scope, id, code string) (funding.Source, error) {
	if err := funding.CheckSimulatedDepositReturn(scope, code); err != nil {
		return funding.Source{}, err
	}
	err := s.store.WithTx(ctx, func(tx Tx) error {
		out, err := s.funding.SimulateDepositReturnTx(ctx, tx.Funding(), scope, id, code)
		if err != nil {
			return err
		}
		return s.SourceChangedTx(ctx, tx, scope, id, out)
	})
	if err != nil {
		return funding.Source{}, err
	}
	return s.funding.Get(ctx, scope, id)
}

// SettleDue settles sandbox payments whose delay has passed
// (payment.Service.SettleTx), each with what it sets off, in batches of
// payment.SettleBatch per transaction. Several processes may run it at
// once; each payment settles once.
func (s *Service) SettleDue(ctx context.Context) (int, error) {
	total := 0
	for {
		n := 0
		err := s.store.WithTx(ctx, func(tx Tx) error {
			due, err := s.payments.DueTx(ctx, tx.Payments(), payment.SettleBatch)
			if err != nil {
				return err
			}
			n = len(due)
			returned := false
			for _, p := range due {
				// An earlier return of this batch may have canceled p (its
				// source blocked or removed).
				f, err := s.payments.SettleTx(ctx, tx.Payments(), p, returned)
				if err != nil {
					return err
				}
				if err := s.FinishedTx(ctx, tx, f); err != nil {
					return err
				}
				returned = returned || f.Code != ""
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < payment.SettleBatch {
			return total, nil
		}
	}
}
