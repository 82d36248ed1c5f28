package funding

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// BankAccount is a source's account in clear, for ACH origination only:
// it must never be logged, rendered or returned by the API.
type BankAccount struct {
	RoutingNumber string
	AccountNumber string
	AccountType   string // checking or savings
}

// BankAccount opens a source's account number for origination.
func (s *Service) BankAccount(ctx context.Context, scope tenant.Scope, id string) (BankAccount, error) {
	src, err := s.store.Source(ctx, scope, id)
	if err != nil {
		return BankAccount{}, fmt.Errorf("load source %s for origination: %w", id, err)
	}
	number, err := s.vault.Open(src.Account.KeyID, src.Account.Data, []byte(src.ID))
	if err != nil {
		return BankAccount{}, fmt.Errorf("open account number of %s: %w", id, err)
	}
	return BankAccount{RoutingNumber: src.RoutingNumber, AccountNumber: string(number), AccountType: src.AccountType}, nil
}

// AccountFingerprint is the fingerprint of an account number as a
// source keeps it (Source.Fingerprint, Receiver.AccountFP): what an
// answer from the bank names is compared with it, never in clear.
func (s *Service) AccountFingerprint(number string) []byte {
	return s.vault.Fingerprint(fingerprintLabel, number)
}

// SealRecord seals a bank record that carries an account number (an
// answer kept for an operator), bound to aad; OpenRecord opens it.
func (s *Service) SealRecord(record []byte, aad string) (keyID string, sealed []byte) {
	return s.vault.Seal(record, []byte(aad))
}

// OpenRecord opens a record SealRecord sealed with the same aad.
func (s *Service) OpenRecord(keyID string, sealed []byte, aad string) ([]byte, error) {
	b, err := s.vault.Open(keyID, sealed, []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("open sealed bank record: %w", err)
	}
	return b, nil
}

// DepositAmounts returns the two amounts (cents) of a source's seq-th
// micro-deposits, for origination.
func (s *Service) DepositAmounts(ctx context.Context, scope tenant.Scope, id string, seq int) ([2]int, error) {
	m, err := s.store.MicroDeposit(ctx, scope, id, seq)
	if err != nil {
		return [2]int{}, fmt.Errorf("load micro-deposits %d of source %s: %w", seq, id, err)
	}
	return s.openAmounts(m)
}

// CancelDepositsTx cancels, in the caller's transaction tx, a
// verification whose deposits have not left, because its source was
// removed or blocked since it was initiated: it becomes canceled and its
// deposits are never sent. A verification no longer open is left as it
// is.
func (s *Service) CancelDepositsTx(ctx context.Context, tx Store, scope tenant.Scope, id string, seq int) error {
	m, err := tx.MicroDeposit(ctx, scope, id, seq)
	if err != nil || m.Status != DepositPending {
		return err
	}
	now := s.now(ctx)
	m.Status, m.FinishedAt, m.AttemptsRemaining = DepositCanceled, &now, 0
	if err := tx.UpdateMicroDeposit(ctx, m); err != nil {
		return fmt.Errorf("cancel the micro-deposits of %s: %w", id, err)
	}
	return nil
}

// ReturnMicroDepositTx applies an ACH return of one of a verification's
// deposits in the caller's transaction, tx: the code is recorded and, when
// the verification is still open, it fails with
// funding_source.verification_failed (the event's verification carries
// return_code); then the return policy acts on the source (Outcome).
// Applying it again changes nothing.
func (s *Service) ReturnMicroDepositTx(ctx context.Context, tx Store, scope tenant.Scope, id string, seq int, code string) (Outcome, error) {
	src, err := tx.SourceForUpdate(ctx, scope, id)
	if err != nil {
		return Outcome{}, fmt.Errorf("lock source %s for its deposits' return: %w", id, err)
	}
	m, err := tx.MicroDeposit(ctx, scope, id, seq)
	if err != nil {
		return Outcome{}, fmt.Errorf("read deposits %d of source %s: %w", seq, id, err)
	}
	if m.ReturnCode != "" {
		return Outcome{}, nil
	}
	return s.depositReturned(ctx, tx, src, m, code)
}

// depositReturned records a deposit's return code on m and, when the
// verification is still open, fails it with
// funding_source.verification_failed; then the return policy acts on the
// source (ApplyReturnTx). Call it under the source's lock.
func (s *Service) depositReturned(ctx context.Context, tx Store, src Source, m MicroDeposit, code string) (Outcome, error) {
	m.ReturnCode = code
	open := m.Status == DepositPending
	if open {
		now := s.now(ctx)
		m.Status, m.FinishedAt, m.AttemptsRemaining = DepositFailed, &now, 0
	}
	var err error
	if !open {
		err = tx.UpdateMicroDeposit(ctx, m)
	} else {
		src.Verification = m.Verification()
		err = tx.UpdateMicroDeposit(ctx, m, s.event(ctx, src, event.FundingSourceVerificationFailed, src.Status))
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("record return %s of source %s's deposits: %w", code, src.ID, err)
	}
	return s.ApplyReturnTx(ctx, tx, src.Scope, src.ID, code)
}
