package funding

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Instant verification credits leave outside any transaction, as instant
// payouts do (payment package): no transaction or row lock is held while
// the rail is asked.
//
//  1. Under the source's row lock, the initiation's checks pass and an
//     intent is written: the verification's sequence number, the rail,
//     a message id and the sealed code, held under a lease
//     (intentLease). It commits.
//  2. The credit is sent, once, with that message id.
//  3. Under the source's row lock again, the intent is replaced by the
//     answer: the verification pending with arrived_at, failed with
//     failure_code, or pending with its rail status unknown. When the
//     rail took nothing, the intent is deleted: "instant" answers
//     rail_unavailable with nothing stored, "auto" stores micro-deposits
//     with fallback_reason rail_unavailable.
//
// A source has at most one intent (its key), and an intent counts as an
// open verification: a second initiation while a credit is being sent is
// refused as verification_pending. A process that dies between 1 and 3
// leaves an intent whose lease runs out; the credit may have reached the
// customer's statement, so the intent is then resolved as a sent credit
// whose rail status is unknown, exactly as a timeout is: a pending
// instant verification whose code verifies, expiring as any other. It is
// resolved by the next initiation or verification of the source, or by
// the expiry sweep (ExpireDue), whichever comes first; the credit itself
// is never sent again. A sender whose answer comes after its intent was
// so resolved records nothing: the verification stands as resolved.
//
// The lease outlasts the rail client's attempts, so a live sender is
// never taken for a dead one.
const intentLease = 30 * time.Second

// VerificationIntent is an instant verification credit being sent.
type VerificationIntent struct {
	Scope     tenant.Scope
	SourceID  string
	Seq       int
	Method    string // the request: MethodInstant or MethodAuto
	Rail      string
	MessageID string
	// Code is the credit's code, sealed as a verification's (amountsAAD).
	Code        Sealed
	InitiatedAt time.Time
	LeaseUntil  time.Time
}

// PendingVerification is an instant credit written but not sent yet.
type PendingVerification struct {
	intent VerificationIntent
	src    Source // the source as initiated: its account and routing number
}

// instantIntent writes the intent of an instant credit to src for m, the
// verification being initiated, and returns it with src showing m as a
// credit whose answer never came. It returns nil when no rail reaches
// the bank.
func (s *Service) instantIntent(ctx context.Context, tx Store, src Source, m MicroDeposit, method string) (*PendingVerification, error) {
	railName := ""
	if s.reach != nil {
		railName = s.reach.Rail(src.RoutingNumber)
	}
	if railName == "" || s.rails[src.Scope.Env] == nil {
		return nil, nil
	}
	in := VerificationIntent{Scope: src.Scope, SourceID: src.ID, Seq: m.Seq, Method: method, Rail: railName,
		MessageID: ids.New("msg_"), InitiatedAt: m.InitiatedAt, LeaseUntil: m.InitiatedAt.Add(intentLease)}
	in.Code.KeyID, in.Code.Data = s.vault.SealPadded([]byte(newCode()), amountsAAD(src.ID, m.Seq), amountsBlock)
	if err := tx.InsertVerificationIntent(ctx, in); err != nil {
		return nil, fmt.Errorf("write instant credit intent: %w", err)
	}
	src.Verification = in.deposit(m.InitiatedAt).Verification()
	return &PendingVerification{intent: in, src: src}, nil
}

// deposit is the verification of a credit sent by in, its answer not read
// yet: pending, its rail status unknown.
func (in VerificationIntent) deposit(now time.Time) MicroDeposit {
	return MicroDeposit{
		Scope: in.Scope, SourceID: in.SourceID, Seq: in.Seq, Method: MethodInstant, Amounts: in.Code,
		Status: DepositPending, InitiatedAt: in.InitiatedAt, ExpectedArrival: calendar.DateOf(now),
		ExpiresAt: in.InitiatedAt.Add(VerificationTTL), AttemptsRemaining: MaxAttempts,
		Rail: in.Rail, RailMessageID: in.MessageID,
	}
}

// DeliverVerification sends p's credit and records the rail's answer (see
// InitiateVerificationBy). It runs on the pool's store.
func (s *Service) DeliverVerification(ctx context.Context, p PendingVerification) (Source, error) {
	in := p.intent
	ans, sendErr := s.sendCredit(ctx, p)
	unknown := errors.Is(sendErr, ErrRailAnswerUnknown)
	tookNothing := !unknown && (errors.Is(sendErr, ErrRailUnavailable) ||
		(sendErr == nil && !ans.Accepted && !accountReason(ans.Reason)))
	var out Source
	var refusal error // the answer, committed with the intent's removal
	// The answer is recorded even when the caller went away meanwhile:
	// the credit may be on its way.
	ctx = context.WithoutCancel(ctx)
	err := s.store.WithTx(ctx, func(tx Store) error {
		locked, err := tx.SourceForUpdate(ctx, in.Scope, in.SourceID)
		if err != nil {
			return fmt.Errorf("lock source %s: %w", in.SourceID, err)
		}
		out = locked
		switch cur, err := tx.VerificationIntent(ctx, in.Scope, in.SourceID); {
		case errs.Is(err, errs.NotFound) || (err == nil && cur.MessageID != in.MessageID):
			// Resolved as unknown after the lease ran out: it stands.
			return nil
		case err != nil:
			return fmt.Errorf("read the instant credit intent of source %s: %w", in.SourceID, err)
		}
		if err := tx.DeleteVerificationIntent(ctx, in); err != nil {
			return fmt.Errorf("delete the instant credit intent of source %s: %w", in.SourceID, err)
		}
		now := s.now(ctx)
		switch {
		case sendErr != nil && !unknown && !tookNothing:
			refusal = fmt.Errorf("send instant credit: %w", sendErr)
			return nil
		case tookNothing && in.Method == MethodInstant:
			refusal = errs.New(errs.RailUnavailable,
				"The instant rail did not answer; nothing was sent and no initiation was counted. Retry shortly, "+
					`or use method "auto" to fall back to micro-deposits.`).WithDetail("retry_after", strconv.Itoa(railRetryAfter))
			return nil
		case tookNothing:
			live, err := s.unverifiedSource(ctx, tx, in.Scope, in.SourceID)
			if err != nil {
				refusal = err
				return nil
			}
			m := MicroDeposit{
				Scope: in.Scope, SourceID: in.SourceID, Seq: in.Seq, Method: MethodMicroDeposits, Status: DepositPending,
				InitiatedAt: in.InitiatedAt, ExpiresAt: in.InitiatedAt.Add(VerificationTTL), AttemptsRemaining: MaxAttempts,
				FallbackReason: FallbackRailUnavailable,
			}
			out, err = s.insertMicroDeposits(ctx, tx, live, m)
			return err
		}
		m := in.deposit(now)
		switch {
		case unknown:
			// The rail took the credit and its answer says nothing readable:
			// the code may be on the customer's statement. The verification
			// stays pending, its rail status unknown, and the code verifies it.
		case ans.Accepted:
			m.ArrivedAt = &now
		default:
			// The rail refused the account: an answer at once, and a fact
			// about the account.
			m.Status, m.FailureCode, m.AttemptsRemaining, m.FinishedAt = DepositFailed, ans.Reason, 0, &now
			locked.Verification = m.Verification()
			if err := s.recordFact(ctx, tx, locked, FactRejected, m.FailureCode); err != nil {
				return err
			}
			locked.Facts = withCode(locked.Facts, m.FailureCode, now)
			out = locked
			return tx.InsertMicroDeposit(ctx, m, s.event(ctx, locked, event.FundingSourceVerificationFailed, locked.Status))
		}
		locked.Verification = m.Verification()
		out = locked
		return tx.InsertMicroDeposit(ctx, m, s.pendingEvent(ctx, locked))
	})
	if err == nil {
		err = refusal
	}
	if err != nil {
		return Source{}, err
	}
	return s.checked(ctx, out), nil
}

// sendCredit sends p's credit over the rail, outside any transaction.
func (s *Service) sendCredit(ctx context.Context, p PendingVerification) (RailAnswer, error) {
	in, src := p.intent, p.src
	client := s.rails[in.Scope.Env]
	if client == nil {
		return RailAnswer{}, ErrRailUnavailable
	}
	number, err := s.vault.Open(src.Account.KeyID, src.Account.Data, []byte(src.ID))
	if err != nil {
		return RailAnswer{}, fmt.Errorf("open account number of %s: %w", src.ID, err)
	}
	code, err := s.vault.OpenPadded(in.Code.KeyID, in.Code.Data, amountsAAD(in.SourceID, in.Seq))
	if err != nil {
		return RailAnswer{}, fmt.Errorf("open the code of %s: %w", in.SourceID, err)
	}
	return client.Credit(ctx, InstantCredit{MessageID: in.MessageID, Rail: in.Rail, RoutingNumber: src.RoutingNumber,
		AccountNumber: string(number), AccountType: src.AccountType, AmountCents: InstantCents, Remittance: string(code)})
}

// settleIntent looks at src's credit being sent, src locked: none, or one
// whose sender holds its lease, leaves src as it is (refused as an open
// verification when refuseOpen); one whose lease ran out is recorded as
// sent with its rail status unknown, and src comes back with it.
func (s *Service) settleIntent(ctx context.Context, tx Store, src Source, refuseOpen bool) (Source, error) {
	// The locked row carries the intent's lease: most sources have none,
	// and cost no read of the intents.
	switch {
	case src.IntentUntil == nil:
		return src, nil
	case s.now(ctx).Before(*src.IntentUntil) && refuseOpen:
		return Source{}, errs.New(errs.VerificationPending,
			"A verification is already open on this funding source; complete it or wait until it expires.").
			WithDetail("attempts_remaining", MaxAttempts)
	case s.now(ctx).Before(*src.IntentUntil):
		return src, nil
	}
	in, err := tx.VerificationIntent(ctx, src.Scope, src.ID)
	switch {
	case errs.Is(err, errs.NotFound):
		return src, nil
	case err != nil:
		return Source{}, fmt.Errorf("read the instant credit intent of source %s: %w", src.ID, err)
	}
	src.IntentUntil = nil
	if err := tx.DeleteVerificationIntent(ctx, in); err != nil {
		return Source{}, fmt.Errorf("delete the instant credit intent of source %s: %w", src.ID, err)
	}
	m := in.deposit(in.InitiatedAt)
	src.Verification = m.Verification()
	return src, tx.InsertMicroDeposit(ctx, m, s.pendingEvent(ctx, src))
}

// ResolveStaleIntents records the instant credits whose sender's lease ran
// out as sent with their rail status unknown (see intentLease), in
// batches. Several processes may run it at once.
func (s *Service) ResolveStaleIntents(ctx context.Context) (int, error) {
	total := 0
	for {
		stale, err := s.store.StaleVerificationIntents(ctx, s.now(ctx), 100)
		if err != nil {
			return total, fmt.Errorf("find stale instant credit intents: %w", err)
		}
		if len(stale) == 0 {
			return total, nil
		}
		for _, in := range stale {
			err := s.store.WithTx(ctx, func(tx Store) error {
				src, err := tx.SourceForUpdate(ctx, in.Scope, in.SourceID)
				if err != nil {
					return fmt.Errorf("lock source %s: %w", in.SourceID, err)
				}
				_, err = s.settleIntent(ctx, tx, src, false)
				return err
			})
			if err != nil {
				return total, err
			}
			total++
		}
		if len(stale) < 100 {
			return total, nil
		}
	}
}
