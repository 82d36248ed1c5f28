package funding

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Micro-deposit rules (README: "Funding sources and micro-deposits").
const (
	MaxInitiations  = 3
	MaxAttempts     = 3
	ArrivalDays     = 2                   // business days
	VerificationTTL = 10 * 24 * time.Hour // from initiation
)

// Micro-deposit verification states.
const (
	DepositPending   = "pending"
	DepositSucceeded = "succeeded"
	DepositFailed    = "failed"
	DepositExpired   = "expired"
)

// MicroDeposit is one pair of deposits sent to verify a source.
type MicroDeposit struct {
	Scope             tenant.Scope
	SourceID          string
	Seq               int    // 1 to MaxInitiations
	Amounts           Sealed // "12,34" in cents, padded to amountsBlock and sealed with source id and seq
	Status            string
	InitiatedAt       time.Time
	ExpectedArrival   calendar.Date
	ExpiresAt         time.Time
	AttemptsRemaining int
	FinishedAt        *time.Time
	// ReturnCode is the ACH return code when a deposit came back.
	ReturnCode string
}

// Verification is the API view of m.
func (m MicroDeposit) Verification() *Verification {
	return &Verification{
		Method: "micro_deposits", Status: m.Status, InitiatedAt: m.InitiatedAt,
		ExpectedArrivalDate: m.ExpectedArrival.Format(time.DateOnly),
		ExpiresAt:           m.ExpiresAt, AttemptsRemaining: m.AttemptsRemaining, ReturnCode: m.ReturnCode,
		Seq: m.Seq,
	}
}

// amountsBlock is the length every amounts plaintext is padded to before
// sealing ("1,1" and "99,99" alike), so a ciphertext's length says nothing
// about the amounts.
const amountsBlock = 16

func amountsAAD(sourceID string, seq int) []byte {
	return []byte(sourceID + ":" + strconv.Itoa(seq))
}

// InitiateVerification sends two micro-deposits to an Unverified source.
func (s *Service) InitiateVerification(ctx context.Context, scope tenant.Scope, id string) (Source, error) {
	var out Source
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.unverifiedSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		// The source's row carries its current verification (kept by a
		// trigger) and is locked: no verification changes under us.
		now := s.now()
		seq := 1
		if last := src.Verification; last != nil {
			if last.Status == DepositPending {
				if now.Before(last.ExpiresAt) {
					return errs.New(errs.VerificationPending,
						"Micro-deposits were already sent and are still open; verify them or wait until they expire.").
						WithDetail("attempts_remaining", last.AttemptsRemaining)
				}
				// Expired, and the sweeper has not run yet.
				m, err := tx.LatestMicroDepositForUpdate(ctx, scope, id)
				if err != nil {
					return err
				}
				if err := s.expire(ctx, tx, src, m, now); err != nil {
					return err
				}
			}
			if last.Seq >= MaxInitiations {
				return errs.Newf(errs.VerificationLimitReached,
					"Micro-deposits were already sent %d times to this funding source; no more can be sent.", MaxInitiations)
			}
			seq = last.Seq + 1
		}
		a, b := s.draw(), s.draw()
		m := MicroDeposit{
			Scope: scope, SourceID: id, Seq: seq, Status: DepositPending, InitiatedAt: now,
			ExpectedArrival:   calendar.AddBusinessDays(calendar.DateOf(now), ArrivalDays),
			ExpiresAt:         now.Add(VerificationTTL),
			AttemptsRemaining: MaxAttempts,
		}
		m.Amounts.KeyID, m.Amounts.Data = s.vault.SealPadded([]byte(fmt.Sprintf("%d,%d", a, b)), amountsAAD(id, seq), amountsBlock)
		src.Verification = m.Verification()
		out = src
		return tx.InsertMicroDeposit(ctx, m, s.event(src, event.FundingSourceVerificationPending, PendingVerified))
	})
	return out, err
}

// VerifyMicroDeposits checks two amounts (in cents, either order) against the
// open deposits. A match verifies the source; a mismatch uses one of the
// attempts, which are counted under the source's row lock, so parallel
// guesses can never exceed MaxAttempts. The attempt is committed even though
// a mismatch returns verification_failed.
func (s *Service) VerifyMicroDeposits(ctx context.Context, scope tenant.Scope, id string, amounts [2]int) (Source, error) {
	var out Source
	var refusal error // committed outcome that is still an error for the caller
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.unverifiedSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		m, err := tx.LatestMicroDepositForUpdate(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return errs.New(errs.VerificationNotInitiated,
				"No micro-deposits were sent to this funding source yet; initiate verification first.")
		}
		if err != nil {
			return err
		}
		now := s.now()
		switch m.Status {
		case DepositFailed:
			return errs.New(errs.VerificationAttemptsExceeded,
				"All attempts to verify these micro-deposits were used; initiate a new verification.").
				WithDetail("attempts_remaining", 0)
		case DepositExpired:
			return expired()
		case DepositPending:
		default:
			return fmt.Errorf("verify micro-deposits: unexpected state %q", m.Status)
		}
		if !now.Before(m.ExpiresAt) {
			refusal = expired()
			return s.expire(ctx, tx, src, m, now)
		}
		want, err := s.openAmounts(m)
		if err != nil {
			return err
		}
		if sameAmounts(want, amounts) {
			m.Status, m.FinishedAt = DepositSucceeded, &now
			if err := tx.UpdateMicroDeposit(ctx, m); err != nil {
				return err
			}
			src.Verification = m.Verification()
			out, err = s.markVerified(ctx, tx, src)
			return err
		}
		m.AttemptsRemaining--
		refusal = (&errs.Error{Code: errs.VerificationFailed, Param: "amounts",
			Message: "The amounts do not match the micro-deposits."}).WithDetail("attempts_remaining", m.AttemptsRemaining)
		if m.AttemptsRemaining > 0 {
			return tx.UpdateMicroDeposit(ctx, m)
		}
		m.Status, m.FinishedAt = DepositFailed, &now
		src.Verification = m.Verification()
		return tx.UpdateMicroDeposit(ctx, m, s.event(src, event.FundingSourceVerificationFailed, src.Status))
	})
	if err != nil {
		return Source{}, err
	}
	if refusal != nil {
		return Source{}, refusal
	}
	return out, nil
}

// SandboxAmounts returns the open (or latest) micro-deposit amounts of a
// sandbox source, in cents.
func (s *Service) SandboxAmounts(ctx context.Context, scope tenant.Scope, id string) ([2]int, *Verification, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return [2]int{}, nil, err
	}
	if _, err := s.Get(ctx, scope, id); err != nil {
		return [2]int{}, nil, err
	}
	m, err := s.store.LatestMicroDeposit(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return [2]int{}, nil, errs.New(errs.VerificationNotInitiated, "No micro-deposits were sent to this funding source yet.")
	}
	if err != nil {
		return [2]int{}, nil, err
	}
	a, err := s.openAmounts(m)
	return a, m.Verification(), err
}

// ExpireDue marks open verifications past their expiry as expired, with
// their events, in batches. Several processes may run it at once.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	total := 0
	for {
		n := 0
		err := s.store.WithTx(ctx, func(tx Store) error {
			now := s.now()
			due, err := tx.ExpiringMicroDeposits(ctx, now, 100)
			if err != nil {
				return err
			}
			for _, m := range due {
				src, err := tx.SourceForUpdate(ctx, m.Scope, m.SourceID)
				if err != nil {
					return err
				}
				if err := s.expire(ctx, tx, src, m, now); err != nil {
					return err
				}
			}
			n = len(due)
			return nil
		})
		total += n
		if err != nil || n < 100 {
			return total, err
		}
	}
}

func (s *Service) expire(ctx context.Context, tx Store, src Source, m MicroDeposit, now time.Time) error {
	m.Status, m.FinishedAt = DepositExpired, &now
	src.Verification = m.Verification()
	return tx.UpdateMicroDeposit(ctx, m, s.event(src, event.FundingSourceVerificationExpired, src.Status))
}

func (s *Service) openAmounts(m MicroDeposit) ([2]int, error) {
	// Rows sealed before amounts were padded open unchanged.
	plain, err := s.vault.OpenPadded(m.Amounts.KeyID, m.Amounts.Data, amountsAAD(m.SourceID, m.Seq))
	if err != nil {
		return [2]int{}, fmt.Errorf("open micro-deposit amounts of %s: %w", m.SourceID, err)
	}
	a, b, ok := strings.Cut(string(plain), ",")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return [2]int{}, fmt.Errorf("micro-deposit amounts of %s are malformed", m.SourceID)
	}
	return [2]int{x, y}, nil
}

func sameAmounts(want, got [2]int) bool {
	return (want[0] == got[0] && want[1] == got[1]) || (want[0] == got[1] && want[1] == got[0])
}

// randomCents draws one amount uniformly from MinDeposit to MaxDeposit.
func randomCents() int {
	n, err := rand.Int(rand.Reader, big.NewInt(MaxDeposit-MinDeposit+1))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return int(n.Int64()) + MinDeposit
}

// unverifiedSource locks a live source that micro-deposits can still verify.
func (s *Service) unverifiedSource(ctx context.Context, tx Store, scope tenant.Scope, id string) (Source, error) {
	src, err := s.liveSource(ctx, tx, scope, id)
	if err == nil && src.Status == Verified {
		return Source{}, errs.New(errs.FundingSourceAlreadyVerified, "This funding source is already Verified.")
	}
	return src, err
}

func expired() error {
	return errs.New(errs.VerificationExpired,
		"These micro-deposits expired; initiate a new verification.").WithDetail("attempts_remaining", 0)
}
