package funding

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// CheckSimulatedDepositReturn refuses a sandbox deposit return that
// cannot be simulated, before anything is read: a production scope, or a
// code that is not an ACH return code.
func CheckSimulatedDepositReturn(scope tenant.Scope, code string) error {
	if err := tenant.SandboxOnly(scope); err != nil {
		return err
	}
	if !achcode.Valid(code) {
		return errs.Invalid("code", `code must be an ACH return code, "R" and two digits, like "R03"`)
	}
	return nil
}

// SimulateDepositReturnTx is the sandbox's micro-deposit return, in tx
// (checked first with CheckSimulatedDepositReturn): the open deposits of
// an Unverified source come back with code (like "R03"), the verification
// fails with that return_code and funding_source.verification_failed is
// fired, exactly as when the bank's return file says so; then the return
// policy acts on the source (Outcome).
func (s *Service) SimulateDepositReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) (Outcome, error) {
	var out Outcome
	err := s.openDepositsTx(ctx, tx, scope, id, func(ctx context.Context, tx Store, src Source, m MicroDeposit) (err error) {
		if m.Method == MethodInstant {
			return errs.New(errs.Conflict, "An instant deposit settles at once and cannot come back as an ACH return.")
		}
		out, err = s.depositReturned(ctx, tx, src, m, code)
		return err
	})
	return out, err
}

// SimulateDepositExpiry is the sandbox's clock for a verification: the
// open deposits expire now, with funding_source.verification_expired, and
// a verify afterwards answers 409 verification_expired.
func (s *Service) SimulateDepositExpiry(ctx context.Context, scope tenant.Scope, id string) (Source, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Source{}, err
	}
	return s.onOpenDeposits(ctx, scope, id, func(ctx context.Context, tx Store, src Source, m MicroDeposit) error {
		now := s.now(ctx)
		m.ExpiresAt = now
		_, err := s.expire(ctx, tx, src, m, now)
		return err
	})
}

// onOpenDeposits runs fn on the open micro-deposits of a source (its
// callers have refused production scopes), under the source's lock, and answers the source as it then is. A source without
// open deposits is 409: verification_not_initiated when none were ever
// sent, conflict when the latest ones are finished.
func (s *Service) onOpenDeposits(ctx context.Context, scope tenant.Scope, id string,
	fn func(ctx context.Context, tx Store, src Source, m MicroDeposit) error) (Source, error) {
	err := s.store.WithTx(ctx, func(tx Store) error { return s.openDepositsTx(ctx, tx, scope, id, fn) })
	if err != nil {
		return Source{}, err
	}
	return s.Get(ctx, scope, id)
}

// openDepositsTx runs fn in tx as onOpenDeposits does.
func (s *Service) openDepositsTx(ctx context.Context, tx Store, scope tenant.Scope, id string,
	fn func(ctx context.Context, tx Store, src Source, m MicroDeposit) error) error {
	src, err := s.unverifiedSource(ctx, tx, scope, id)
	if err != nil {
		return err
	}
	m, err := tx.LatestMicroDepositForUpdate(ctx, scope, id)
	switch {
	case errs.Is(err, errs.NotFound):
		return errs.New(errs.VerificationNotInitiated, "No micro-deposits were sent to this funding source yet.")
	case err != nil:
		return fmt.Errorf("lock the latest verification of source %s: %w", id, err)
	case m.Status != DepositPending:
		return errs.Newf(errs.Conflict, "This funding source's latest micro-deposits are %s; only open ones can be simulated.", m.Status)
	}
	return fn(ctx, tx, src, m)
}
