package payment

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Only authorized money leaves. A pending payment was allowed when it was
// created, but its authority can end before it leaves: a return blocks or
// removes its source, the merchant removes the source, a mandate is
// revoked. Two moments enforce it, and either alone would leave a gap:
//
//   - At revocation: whatever blocks or removes a source or revokes a
//     mandate cancels, in its own transaction, the pending payments that
//     have not left yet (CancelUnsentTx): the source's debits for a
//     block, its debits and credits for a removal, the mandate's debits
//     for a revocation.
//   - At departure: the transaction that claims payments for an ACH file
//     (and, in sandbox, the one that settles them) checks each one again
//     (ReleaseTx) against its Standing, read by the claiming statement.
//
// They cannot both happen to one payment: the claim locks the payment row
// and sets its settle time, the cancellation selects the same row FOR
// UPDATE with "not yet sent" among its conditions (settle_at IS NULL in
// production), which PostgreSQL re-checks on the committed row once the
// claim's lock is released. So a debit is in a file or canceled, never
// both, and a revocation that commits first is seen by the claim.

// Why a payment was canceled (cancel_reason). Blocked, removed and
// revoked are the subscription reasons of the same name.
const (
	CancelSourceBlocked       = "funding_source_blocked" // its source is blocked: debits only
	CancelOriginatorSuspended = "originator_suspended"   // its originator may not send entries
)

// Standing is what a pending payment's authority rests on, as the
// statement that claims it for departure read it.
type Standing struct {
	SourceBlocked  bool
	SourceRemoved  bool
	MandateRevoked bool
	// MandateUsed: its mandate is single and authorized another payment,
	// created before it, that is not failed or canceled (a failed debit
	// leaves room for its reinitiation under the same authorization).
	MandateUsed bool
	// MandateSEC is the SEC code of its mandate (WEB, CCD), which its
	// entry goes out under; "" for a payment without one.
	MandateSEC string
}

// refusal is the cancel_reason for which p may not leave with standing
// st, or "" when it may. A credit needs only a live source.
func (p Payment) refusal(st Standing) string {
	switch {
	case st.SourceRemoved:
		return CancelSourceRemoved
	case p.Direction != Debit:
		return ""
	case st.SourceBlocked:
		return CancelSourceBlocked
	case st.MandateRevoked, st.MandateUsed:
		return CancelMandateRevoked
	}
	return ""
}

// Originators says whether the originator of a scope (a merchant
// environment) may send entries now; a payment of one that may not is
// canceled as it is about to leave (originator_suspended), and a
// production payment of one whose company id is still the placeholder is
// held (originator_company_id). SameDay says whether it may send Same Day
// ACH entries.
type Originators interface {
	State(ctx context.Context, tx Store, scope tenant.Scope) (OriginatorState, error)
	// SameDay reports whether the originator may send Same Day ACH
	// entries (its same_day setting).
	SameDay(ctx context.Context, scope tenant.Scope) (bool, error)
}

// AllActive is the Originators of a service that keeps no originator
// records: every originator is active. The originator resource replaces
// it with its own (WithOriginators).
type AllActive struct{}

// OriginatorState is what an originator's entries may do now: leave at
// all, and under the company id the bank assigned.
type OriginatorState struct {
	Active            bool
	CompanyIDAssigned bool
}

// State reports an active originator with its company id assigned.
func (AllActive) State(context.Context, Store, tenant.Scope) (OriginatorState, error) {
	return OriginatorState{Active: true, CompanyIDAssigned: true}, nil
}

// SameDay reports true in sandbox and false in production, an
// originator's defaults.
func (AllActive) SameDay(_ context.Context, scope tenant.Scope) (bool, error) {
	return scope.Env == tenant.Sandbox, nil
}

// WithOriginators sets who says whether an originator is active.
func (s *Service) WithOriginators(o Originators) *Service {
	s.originators = o
	return s
}

// ReleaseTx decides, in tx, the transaction that claimed the pending
// payment p to send it (an ACH file's assignment; in sandbox its
// settlement), whether p may leave: when its source, mandate (p.Standing,
// read by the claim) or originator no longer allow it, or p is a reversal
// past its window (reversalClosed), p is canceled with the reason,
// payment.canceled fires, and ReleaseTx reports false; a production
// payment whose originator's company id is not assigned, or whose
// customer screening matches, is held instead.
func (s *Service) ReleaseTx(ctx context.Context, tx Store, p Payment) (bool, error) {
	reason := p.refusal(p.Standing)
	if reason == "" && p.ReversalOf != nil {
		closed, err := s.reversalClosed(ctx, tx, p)
		if err != nil {
			return false, err
		}
		if closed {
			reason = CancelReversalWindowClosed
		}
	}
	var state OriginatorState
	if reason == "" {
		var err error
		if state, err = s.originatorState(ctx, tx, p.Scope); err != nil {
			return false, fmt.Errorf("read the originator state of merchant %s: %w", p.Scope.MerchantID, err)
		}
		if !state.Active {
			reason = CancelOriginatorSuspended
		}
	}
	if reason != "" {
		_, err := s.void(ctx, tx, p, reason)
		return false, err
	}
	if !state.CompanyIDAssigned && p.Scope.Env.Live() {
		_, err := s.hold(ctx, tx, p, verdict{reason: HoldOriginatorCompanyID})
		return false, err
	}
	return s.screenTx(ctx, tx, p)
}

func (s *Service) originatorState(ctx context.Context, tx Store, scope tenant.Scope) (OriginatorState, error) {
	if s.originators == nil {
		return AllActive{}.State(ctx, tx, scope)
	}
	return s.originators.State(ctx, tx, scope)
}

// Unsent selects the pending payments that have not left yet (production:
// in no ACH file; sandbox: not settled) of one source, or of one mandate
// when MandateID is set; DebitsOnly leaves credits out.
type Unsent struct {
	SourceID   string
	MandateID  string
	DebitsOnly bool
}

// CancelUnsentTx cancels, in the caller's transaction tx, the payments u
// selects, each with reason and payment.canceled: a block, removal or
// revocation ends the payments it no longer authorizes at once.
func (s *Service) CancelUnsentTx(ctx context.Context, tx Store, scope tenant.Scope, u Unsent, reason string) error {
	ps, err := tx.UnsentPayments(ctx, scope, u)
	if err != nil {
		return fmt.Errorf("list unsent payments of merchant %s: %w", scope.MerchantID, err)
	}
	for _, p := range ps {
		if _, err := s.void(ctx, tx, p, reason); err != nil {
			return err
		}
	}
	return nil
}

// SourceBlockedTx is what a block of a source does to its payments, in
// the block's transaction tx: its unsent debits are canceled
// (funding_source_blocked), then its mandates are revoked with reason
// (RevokeForSourceTx).
func (s *Service) SourceBlockedTx(ctx context.Context, tx Store, scope tenant.Scope, sourceID, reason string) error {
	if err := s.CancelUnsentTx(ctx, tx, scope, Unsent{SourceID: sourceID, DebitsOnly: true}, CancelSourceBlocked); err != nil {
		return err
	}
	return s.RevokeForSourceTx(ctx, tx, scope, sourceID, reason)
}

// void cancels the locked pending payment p in tx with reason, records
// payment.canceled and returns p canceled.
func (s *Service) void(ctx context.Context, tx Store, p Payment, reason string) (Payment, error) {
	now := s.now(ctx).UTC()
	p.Status, p.SettledAt, p.CancelReason = Voided, &now, &reason
	if err := tx.FinishPayment(ctx, p); err != nil {
		return Payment{}, fmt.Errorf("void payment %s: %w", p.ID, err)
	}
	return p, tx.RecordEvent(ctx, event.New(p.Scope, event.PaymentCanceled, p, now))
}
