package funding

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
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

// Micro-deposit rules (docs/walkthrough.md: "Funding sources and micro-deposits").
const (
	MaxInitiations  = 3
	MaxAttempts     = 3
	VerificationTTL = 10 * 24 * time.Hour // from initiation
)

// Micro-deposit verification states.
const (
	DepositPending   = "pending"
	DepositSucceeded = "succeeded"
	DepositFailed    = "failed"
	DepositExpired   = "expired"
	// DepositCanceled: the source was removed or blocked before the
	// deposits left; nothing was sent.
	DepositCanceled = "canceled"
)

// Verification methods. MethodAuto is a request, never a stored method:
// instant where a rail reaches the bank, else micro-deposits.
const (
	MethodMicroDeposits = "micro_deposits"
	MethodInstant       = "instant"
	MethodAuto          = "auto"
)

// Why an "auto" verification fell back to micro-deposits.
const (
	FallbackInstantUnavailable = "instant_unavailable" // no rail reaches the bank
	FallbackRailUnavailable    = "rail_unavailable"    // the rail is down or timed out
)

// MicroDeposit is one verification of a source: a pair of micro-deposits,
// or one instant credit whose remittance line carries a code. Both go
// through the same states, attempts and expiry; only the proof differs.
type MicroDeposit struct {
	Scope    tenant.Scope
	SourceID string
	Seq      int    // 1 to MaxInitiations
	Method   string // MethodMicroDeposits or MethodInstant
	// Amounts is the sealed proof: "12,34" in cents, or the code, padded
	// to amountsBlock and sealed with source id and seq.
	Amounts           Sealed
	Status            string
	InitiatedAt       time.Time
	ExpectedArrival   calendar.Date // instant: the day of initiation
	ExpiresAt         time.Time
	AttemptsRemaining int
	FinishedAt        *time.Time
	// ReturnCode is the ACH return code when a deposit came back.
	ReturnCode string
	// Rail, RailMessageID and ArrivedAt describe an instant credit;
	// FailureCode is the rail's rejection reason (AC03, AC04, AC06).
	Rail          string
	RailMessageID string
	ArrivedAt     *time.Time
	FailureCode   string
	// FallbackReason says why an "auto" request got micro-deposits.
	FallbackReason string
}

// Verification is the API view of m.
func (m MicroDeposit) Verification() *Verification {
	v := &Verification{
		Method: m.Method, Status: m.Status, InitiatedAt: m.InitiatedAt,
		ExpectedArrivalDate: m.ExpectedArrival.Format(time.DateOnly),
		ExpiresAt:           m.ExpiresAt, AttemptsRemaining: m.AttemptsRemaining, ReturnCode: m.ReturnCode,
		Rail: m.Rail, ArrivedAt: m.ArrivedAt, FailureCode: m.FailureCode, FallbackReason: m.FallbackReason,
		Seq: m.Seq,
	}
	if v.Method == "" {
		v.Method = MethodMicroDeposits
	}
	return v
}

// Lapsed reports whether v, pending, is past its expiry at now: expired,
// whether or not the sweeper (ExpireDue) has marked it so yet.
func (v *Verification) Lapsed(now time.Time) bool { return lapsed(v.Status, v.ExpiresAt, now) }

// Lapsed is Verification.Lapsed of m.
func (m MicroDeposit) Lapsed(now time.Time) bool { return lapsed(m.Status, m.ExpiresAt, now) }

// lapsed is the expiry rule: a pending verification expires at ExpiresAt.
func lapsed(status string, expiresAt, now time.Time) bool {
	return status == DepositPending && !now.Before(expiresAt)
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
	return s.InitiateVerificationBy(ctx, scope, id, MethodMicroDeposits)
}

// InitiateVerificationBy starts a verification of an Unverified source by
// method: MethodMicroDeposits, MethodInstant or MethodAuto ("" is
// micro-deposits). An instant credit leaves outside any transaction: its
// intent is committed first, the rail is asked, and its answer is
// recorded after (intent.go). When the rail gives none, "instant" fails
// with rail_unavailable and nothing is stored, and "auto" sends
// micro-deposits with a fallback_reason.
//
// On a service bound to a caller's transaction (On) an instant credit is
// only written: the source comes back with PendingVerification, and its
// verification as it stands if the credit's answer never came (rail
// status unknown); the caller sends it with DeliverVerification once the
// transaction committed.
func (s *Service) InitiateVerificationBy(ctx context.Context, scope tenant.Scope, id, method string) (Source, error) {
	switch method {
	case "":
		method = MethodMicroDeposits
	case MethodMicroDeposits, MethodInstant, MethodAuto:
	default:
		return Source{}, errs.Invalid("method", `method must be "micro_deposits", "instant" or "auto"`)
	}
	var out Source
	var pending *PendingVerification
	var refusal error
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, seq, err := s.nextVerification(ctx, tx, scope, id)
		if errs.Is(err, errs.VerificationPending) {
			// Committed: a dead sender's credit it resolved stays resolved.
			refusal = err
			return nil
		}
		if err != nil {
			return err
		}
		now := s.now(ctx)
		m := MicroDeposit{
			Scope: scope, SourceID: id, Seq: seq, Method: MethodMicroDeposits, Status: DepositPending, InitiatedAt: now,
			ExpiresAt: now.Add(VerificationTTL), AttemptsRemaining: MaxAttempts,
		}
		if method != MethodMicroDeposits {
			p, err := s.instantIntent(ctx, tx, src, m, method)
			switch {
			case err != nil:
				return err
			case p != nil:
				pending, out = p, p.src
				return nil
			case method == MethodInstant:
				return errs.New(errs.InstantUnavailable,
					`No instant rail reaches this bank; use method "micro_deposits", or "auto" to fall back by itself.`)
			}
			m.FallbackReason = FallbackInstantUnavailable
		}
		out, err = s.insertMicroDeposits(ctx, tx, src, m)
		return err
	})
	switch {
	case err == nil && refusal != nil:
		return Source{}, refusal
	case err != nil:
		return Source{}, err
	case pending == nil:
		return s.checked(ctx, out), nil
	case s.inTx:
		out.PendingVerification = pending
		return s.checked(ctx, out), nil
	}
	return s.DeliverVerification(ctx, *pending)
}

// insertMicroDeposits draws and stores m, a pair of micro-deposits of src,
// with verification_pending, and returns src with its verification.
func (s *Service) insertMicroDeposits(ctx context.Context, tx Store, src Source, m MicroDeposit) (Source, error) {
	a, b := s.draw(), s.draw()
	m.ExpectedArrival = s.depositArrival(m.InitiatedAt)
	m.Amounts.KeyID, m.Amounts.Data = s.vault.SealPadded([]byte(fmt.Sprintf("%d,%d", a, b)), amountsAAD(m.SourceID, m.Seq), amountsBlock)
	src.Verification = m.Verification()
	if err := tx.InsertMicroDeposit(ctx, m, s.pendingEvent(ctx, src)); err != nil {
		return src, fmt.Errorf("store micro-deposits %d of source %s: %w", m.Seq, m.SourceID, err)
	}
	return src, nil
}

// nextVerification locks a source that can take a new verification and
// returns its next sequence number: the latest must be finished (an open
// one past its expiry is expired here) and fewer than MaxInitiations made.
func (s *Service) nextVerification(ctx context.Context, tx Store, scope tenant.Scope, id string) (Source, int, error) {
	src, err := s.unverifiedSource(ctx, tx, scope, id)
	if err != nil {
		return Source{}, 0, err
	}
	// The source's row carries its current verification (kept by a
	// trigger) and is locked: no verification changes under us. A credit
	// being sent is an open verification.
	if src, err = s.settleIntent(ctx, tx, src, true); err != nil {
		return Source{}, 0, err
	}
	last := src.Verification
	if last == nil {
		return src, 1, nil
	}
	if last.Status == DepositPending {
		now := s.now(ctx)
		if !last.Lapsed(now) {
			return Source{}, 0, errs.New(errs.VerificationPending,
				"A verification is already open on this funding source; complete it or wait until it expires.").
				WithDetail("attempts_remaining", last.AttemptsRemaining)
		}
		// Expired, and the sweeper has not run yet.
		m, err := tx.LatestMicroDepositForUpdate(ctx, scope, id)
		if err != nil {
			return Source{}, 0, fmt.Errorf("lock the latest verification of source %s: %w", id, err)
		}
		if _, err := s.expire(ctx, tx, src, m, now); err != nil {
			return Source{}, 0, err
		}
	}
	if last.Seq >= MaxInitiations {
		return Source{}, 0, errs.Newf(errs.VerificationLimitReached,
			"Verification was already initiated %d times on this funding source; it cannot be initiated again.", MaxInitiations)
	}
	return src, last.Seq + 1, nil
}

// VerifyMicroDeposits checks two amounts (in cents, either order) against the
// open deposits (see verify).
func (s *Service) VerifyMicroDeposits(ctx context.Context, scope tenant.Scope, id string, amounts [2]int) (Source, error) {
	return s.verify(ctx, scope, id, proof{amounts: &amounts})
}

// VerifyCode checks the code of an instant verification, typed with or
// without its FS prefix, in any case, spaces ignored (see verify).
// A code that cannot be one (wrong length or letters) is invalid_request
// and uses no attempt, as amounts out of range do.
func (s *Service) VerifyCode(ctx context.Context, scope tenant.Scope, id, code string) (Source, error) {
	c := NormalizeCode(code)
	if !ValidCode(c) {
		return Source{}, errs.Invalid("code", "code must be the deposit's code: "+CodeFormat()+", like "+CodeExample)
	}
	return s.verify(ctx, scope, id, proof{code: c})
}

// proof is what the customer read on the statement: two amounts or a code.
type proof struct {
	amounts *[2]int
	code    string
}

// verify checks a proof against the open verification: one set of rules
// for both methods. A match verifies the source; a mismatch uses one of the
// attempts, which are counted under the source's row lock, so parallel
// guesses can never exceed MaxAttempts. The attempt is committed even
// though a mismatch returns verification_failed. A proof of the other
// method's kind is invalid_request and counts nothing.
//
// A refusal (verification_failed, verification_attempts_exceeded,
// verification_expired) comes with the source as the refusal left it,
// read under the lock, its verification's attempts and state updated, so
// a caller that shows the source (the hosted page) need not read it
// again. Any other error comes with a zero Source.
func (s *Service) verify(ctx context.Context, scope tenant.Scope, id string, p proof) (Source, error) {
	var out Source
	var refusal error // committed outcome that is still an error for the caller; out is the source it left
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.unverifiedSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		// A credit whose sender died may be on the statement: its code
		// verifies.
		if src, err = s.settleIntent(ctx, tx, src, false); err != nil {
			return err
		}
		m, err := tx.LatestMicroDepositForUpdate(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return errs.New(errs.VerificationNotInitiated,
				"No verification was initiated on this funding source yet; initiate verification first.")
		}
		if err != nil {
			return fmt.Errorf("lock the latest verification of source %s: %w", id, err)
		}
		instant := m.Method == MethodInstant
		switch {
		case instant && p.amounts != nil:
			return errs.Invalid("amounts", "This funding source is verified by an instant deposit: send the code from its description, not amounts.")
		case !instant && p.amounts == nil:
			return errs.Invalid("code", "This funding source is verified by micro-deposits: send the two amounts, not a code.")
		}
		now := s.now(ctx)
		switch m.Status {
		case DepositFailed:
			refusal, out = errs.New(errs.VerificationAttemptsExceeded,
				"This verification failed and takes no more attempts; initiate a new verification.").
				WithDetail("attempts_remaining", 0), src
			return nil
		case DepositExpired:
			refusal, out = expired(), src
			return nil
		case DepositCanceled:
			refusal, out = errs.New(errs.Conflict,
				"This verification was canceled before its deposits were sent; initiate a new verification."), src
			return nil
		case DepositPending:
		default:
			return fmt.Errorf("verify: unexpected state %q", m.Status)
		}
		if m.Lapsed(now) {
			refusal = expired()
			out, err = s.expire(ctx, tx, src, m, now)
			return err
		}
		match, err := s.matches(m, p)
		if err != nil {
			return err
		}
		if match {
			m.Status, m.FinishedAt = DepositSucceeded, &now
			if err := tx.UpdateMicroDeposit(ctx, m); err != nil {
				return fmt.Errorf("record the match of verification %d of source %s: %w", m.Seq, id, err)
			}
			src.Verification = m.Verification()
			out, err = s.markVerified(ctx, tx, src)
			return err
		}
		m.AttemptsRemaining--
		mismatch := &errs.Error{Code: errs.VerificationFailed, Param: "amounts", Message: "The amounts do not match the micro-deposits."}
		if instant {
			mismatch = &errs.Error{Code: errs.VerificationFailed, Param: "code", Message: "The code does not match the one on the deposit."}
		}
		refusal = mismatch.WithDetail("attempts_remaining", m.AttemptsRemaining)
		if m.AttemptsRemaining > 0 {
			src.Verification = m.Verification()
			out = src
			return tx.UpdateMicroDeposit(ctx, m)
		}
		m.Status, m.FinishedAt = DepositFailed, &now
		src.Verification = m.Verification()
		out = src
		return tx.UpdateMicroDeposit(ctx, m, s.event(ctx, src, event.FundingSourceVerificationFailed, src.Status))
	})
	if err != nil {
		return Source{}, err
	}
	return s.checked(ctx, out), refusal
}

// matches compares a proof with the verification's sealed one.
func (s *Service) matches(m MicroDeposit, p proof) (bool, error) {
	if p.amounts != nil {
		want, err := s.openAmounts(m)
		return err == nil && sameAmounts(want, *p.amounts), err
	}
	want, err := s.openCode(m)
	return err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(p.code)) == 1, err
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
		return [2]int{}, nil, fmt.Errorf("read the latest micro-deposits of source %s: %w", id, err)
	}
	if m.Method == MethodInstant {
		return [2]int{}, nil, errs.New(errs.Conflict, "This funding source is verified by an instant deposit with a code, not by amounts.")
	}
	a, err := s.openAmounts(m)
	return a, m.Verification(), err
}

// ExpireDue marks open verifications past their expiry as expired, with
// their events, in batches, after recording the instant credits whose
// sender's lease ran out (ResolveStaleIntents). Several processes may run
// it at once.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	if _, err := s.ResolveStaleIntents(ctx); err != nil {
		return 0, err
	}
	total := 0
	for {
		n := 0
		err := s.store.WithTx(ctx, func(tx Store) error {
			now := s.now(ctx)
			due, err := tx.ExpiringMicroDeposits(ctx, now, 100)
			if err != nil {
				return fmt.Errorf("find the verifications to expire: %w", err)
			}
			for _, m := range due {
				src, err := tx.SourceForUpdate(ctx, m.Scope, m.SourceID)
				if err != nil {
					return fmt.Errorf("lock source %s: %w", m.SourceID, err)
				}
				if _, err := s.expire(ctx, tx, src, m, now); err != nil {
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

// expire marks m, src's open verification, expired at now with its event,
// and returns src with its verification so. Its expires_at becomes when it
// expired: ended before its deadline (the sandbox's expiry) that is now,
// never a deadline it no longer has; swept after the deadline it stays
// the deadline it passed.
func (s *Service) expire(ctx context.Context, tx Store, src Source, m MicroDeposit, now time.Time) (Source, error) {
	m.Status, m.FinishedAt = DepositExpired, &now
	if now.Before(m.ExpiresAt) {
		m.ExpiresAt = now
	}
	src.Verification = m.Verification()
	if err := tx.UpdateMicroDeposit(ctx, m, s.event(ctx, src, event.FundingSourceVerificationExpired, src.Status)); err != nil {
		return src, fmt.Errorf("expire verification %d of source %s: %w", m.Seq, src.ID, err)
	}
	return src, nil
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
		"This verification expired; initiate a new verification.").WithDetail("attempts_remaining", 0)
}
