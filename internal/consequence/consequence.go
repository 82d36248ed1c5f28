// Package consequence is what a payment's return or settlement and a
// source's block or removal set off beyond the domain where they happen,
// in the same transaction:
//
//   - a returned payment: the return policy acts on its source
//     (funding.ApplyReturnTx: kept, blocked or removed), and a returned
//     micro-deposit likewise;
//   - a settled payment, or an instant credit the rail accepted: its
//     account counts one more use (funding.PaidTx, which other
//     merchants' account checks read);
//   - a blocked source: its unsent debits are canceled and its mandates
//     revoked (payment.SourceBlockedTx);
//   - a removed source: its subscriptions end and its unsent payments are
//     canceled (payment.CancelForSourceTx).
//
// The domains report what they did (payment.Finished, funding.Outcome)
// and this package, called explicitly by the code that applies a return,
// a notification of change, a statement, a sandbox simulation or a
// merchant's removal, does the rest; payment and funding never call each
// other. Its store (Tx) is the two domains' stores on one transaction,
// which the postgres adapter and the ACH originator's store both give.
package consequence

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// Tx is the stores of funding and payments on one transaction.
type Tx interface {
	Funding() funding.Store
	Payments() payment.Store
}

// Store runs fn in a transaction (a savepoint of the caller's when the
// store is bound to one).
type Store interface {
	WithTx(ctx context.Context, fn func(tx Tx) error) error
}

// Service applies the consequences.
type Service struct {
	store    Store
	funding  *funding.Service
	payments *payment.Service
}

// NewService returns a Service over the funding and payment services.
func NewService(store Store, f *funding.Service, p *payment.Service) *Service {
	return &Service{store: store, funding: f, payments: p}
}

// On returns the service on tx, a store bound to a caller's transaction
// (an idempotent request's), with the domain services bound to it too.
func (s *Service) On(tx Store, f *funding.Service, p *payment.Service) *Service {
	return &Service{store: tx, funding: f, payments: p}
}

// FinishedTx does what a payment's settlement or return (f) sets off on
// its source, in its transaction tx.
func (s *Service) FinishedTx(ctx context.Context, tx Tx, f payment.Finished) error {
	switch {
	case !f.Done:
		return nil
	case f.Code == "":
		if err := s.funding.PaidTx(ctx, tx.Funding(), f.Scope, f.SourceID); err != nil {
			return fmt.Errorf("record that source %s was paid with: %w", f.SourceID, err)
		}
		return nil
	}
	return s.SourceReturnedTx(ctx, tx, f.Scope, f.SourceID, f.Code)
}

// SourceReturnedTx applies the return policy to a source an entry with
// return code came back from (funding.Service.ApplyReturnTx), and what
// its block or removal sets off, in tx.
func (s *Service) SourceReturnedTx(ctx context.Context, tx Tx, scope tenant.Scope, sourceID, code string) error {
	out, err := s.funding.ApplyReturnTx(ctx, tx.Funding(), scope, sourceID, code)
	if err != nil {
		return fmt.Errorf("apply return %s to source %s: %w", code, sourceID, err)
	}
	return s.SourceChangedTx(ctx, tx, scope, sourceID, out)
}

// SourceChangedTx does what a source's removal or block (out) sets off on
// its payments, in tx.
func (s *Service) SourceChangedTx(ctx context.Context, tx Tx, scope tenant.Scope, sourceID string, out funding.Outcome) error {
	var err error
	switch {
	case out.Removed:
		err = s.payments.CancelForSourceTx(ctx, tx.Payments(), scope, sourceID)
	case out.Blocked != "":
		err = s.payments.SourceBlockedTx(ctx, tx.Payments(), scope, sourceID, blockReason(out.Blocked))
	}
	if err != nil {
		return fmt.Errorf("end the payments of source %s: %w", sourceID, err)
	}
	return nil
}

// blockReason is the reason a block gives the payments and mandates it
// ends: a return code's reason, or the block's own code
// (funding.BlockNOCUnapplicable).
func blockReason(code string) string {
	if achcode.Valid(code) {
		return achcode.ReturnReason(code)
	}
	return code
}

// ReturnTx applies an ACH return with code to payment id in tx, and what
// it sets off.
func (s *Service) ReturnTx(ctx context.Context, tx Tx, scope tenant.Scope, id, code string) error {
	f, err := s.payments.ReturnTx(ctx, tx.Payments(), scope, id, code)
	if err != nil {
		return err
	}
	return s.FinishedTx(ctx, tx, f)
}

// SettledTx records in tx that the bank's statement shows payment id
// settled on date (payment.Service.SettledTx), and what it sets off.
func (s *Service) SettledTx(ctx context.Context, tx Tx, scope tenant.Scope, id string, date calendar.Date) error {
	f, err := s.payments.SettledTx(ctx, tx.Payments(), scope, id, date)
	if err != nil {
		return err
	}
	return s.FinishedTx(ctx, tx, f)
}

// ReturnMicroDepositTx applies an ACH return of a verification's deposits
// (funding.Service.ReturnMicroDepositTx) in tx, and what it sets off.
func (s *Service) ReturnMicroDepositTx(ctx context.Context, tx Tx, scope tenant.Scope, sourceID string, seq int, code string) error {
	out, err := s.funding.ReturnMicroDepositTx(ctx, tx.Funding(), scope, sourceID, seq, code)
	if err != nil {
		return err
	}
	return s.SourceChangedTx(ctx, tx, scope, sourceID, out)
}

// BlockTx blocks a source in tx (funding.Service.BlockTx) and ends its
// unsent debits and mandates; false when it was removed or blocked
// already.
func (s *Service) BlockTx(ctx context.Context, tx Tx, scope tenant.Scope, sourceID, code, reason string) (bool, error) {
	blocked, err := s.funding.BlockTx(ctx, tx.Funding(), scope, sourceID, code, reason)
	if err != nil || !blocked {
		return false, err
	}
	return true, s.SourceChangedTx(ctx, tx, scope, sourceID, funding.Outcome{Blocked: code})
}
