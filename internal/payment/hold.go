package payment

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Held payments. A payment that sanctions screening, the originator's
// return rates or a fraud rule stops is created 'held' rather than
// refused: nothing is originated (production) or settled (sandbox) until
// an operator releases it to pending or rejects it (canceled,
// rejected_by_review). Both claims take only pending payments, so a hold
// needs no check where entries leave. A block, removal or revocation
// cancels held payments as it cancels pending ones (Store.UnsentPayments
// selects both): a held debit of a blocked source must not come back to
// life on release.

// Why a payment is held (hold_reason).
const (
	HoldSanctions                = "sanctions_screening"
	HoldReturnRateUnauthorized   = "return_rate_unauthorized"
	HoldReturnRateAdministrative = "return_rate_administrative"
	HoldReturnRateOverall        = "return_rate_overall"
	// HoldOriginatorCompanyID: the originator is active but its company
	// id is still the placeholder (package originator); released when an
	// operator sets it (ReleaseCompanyIDHoldsTx).
	HoldOriginatorCompanyID = "originator_company_id"
	// HoldFraudPrefix prefixes a fraud rule's id: "fraud_rule:daily_velocity".
	HoldFraudPrefix = "fraud_rule:"
)

// CancelRejected is the cancel_reason of a held payment an operator rejected.
const CancelRejected = "rejected_by_review"

// Audit actions of the review.
const (
	AuditReleased         = "payment.released"
	AuditRejected         = "payment.rejected"
	AuditScreeningCleared = "customer.screening_cleared"
)

// MaxNote is the longest review note, in characters.
const MaxNote = 500

// hold marks the just-created pending payment p held with v's reason in
// tx, stores v's alerts and fires payment.held.
func (s *Service) hold(ctx context.Context, tx Store, p Payment, v verdict) (Payment, error) {
	p.Status, p.HoldReason = Held, &v.reason
	if err := tx.HoldPayment(ctx, p); err != nil {
		return Payment{}, fmt.Errorf("hold payment %s: %w", p.ID, err)
	}
	for _, a := range v.alerts {
		a.ID, a.PaymentID = ids.New("alrt_"), p.ID
		if err := tx.InsertAlert(ctx, a); err != nil {
			return Payment{}, fmt.Errorf("insert alert of payment %s: %w", p.ID, err)
		}
	}
	return p, tx.RecordEvent(ctx, event.New(p.Scope, event.PaymentHeld, p, s.now(ctx).UTC()))
}

// holdIfHeld holds p, just inserted in tx by the service itself, when
// sanctions screening or the originator's return rates hold it
// (assessStanding).
func (s *Service) holdIfHeld(ctx context.Context, tx Store, p Payment) (Payment, error) {
	v, err := s.assessStanding(ctx, tx, p)
	if err != nil || v.reason == "" {
		return p, err
	}
	return s.hold(ctx, tx, p, v)
}

// ReleaseCompanyIDHoldsTx releases, in tx (the transaction that set the
// originator's company id), scope's payments held for want of it: each
// is pending again and fires payment.released. They are judged again as
// they leave (ReleaseTx), as every payment is.
func (s *Service) ReleaseCompanyIDHoldsTx(ctx context.Context, tx Store, scope tenant.Scope) error {
	held, err := tx.HeldOfCustomer(ctx, scope, "", HoldOriginatorCompanyID)
	if err != nil {
		return fmt.Errorf("release payments held for the company id of %s/%s: %w", scope.MerchantID, scope.Env, err)
	}
	for _, p := range held {
		if _, err := s.releaseTx(ctx, tx, p, "company id assigned"); err != nil {
			return err
		}
	}
	return nil
}

// ReviewNote checks an operator's note: at most MaxNote characters, no
// control characters; "" is none.
func ReviewNote(note string) (string, error) {
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxNote || strings.ContainsFunc(note, isControl) {
		return "", errs.Invalid("note", "note must be at most 500 characters without control characters.")
	}
	return note, nil
}

// Held lists held payments, oldest first, of every originator (the
// operator's queue) when scope is nil, else of one.
func (s *Service) Held(ctx context.Context, scope *tenant.Scope, limit int) ([]Payment, error) {
	return s.store.HeldPayments(ctx, scope, limit)
}

// released is the event data of payment.released: the payment, pending
// again, with the reason it was held for and the reviewer's note.
type released struct {
	Payment
	ReleasedHold string  `json:"released_hold_reason"`
	Note         *string `json:"note"`
}

// Release sends a held payment on its way (pending; in sandbox it settles
// after the usual delay from now) and fires payment.released, audited as
// the operator's. A payment that is not held is 409 conflict.
func (s *Service) Release(ctx context.Context, id, note string, by audit.Actor) (Payment, error) {
	return s.review(ctx, id, note, by, true)
}

// Reject cancels a held payment (rejected_by_review, payment.canceled),
// audited as the operator's.
func (s *Service) Reject(ctx context.Context, id, note string, by audit.Actor) (Payment, error) {
	return s.review(ctx, id, note, by, false)
}

func (s *Service) review(ctx context.Context, id, note string, by audit.Actor, release bool) (Payment, error) {
	note, err := ReviewNote(note)
	if err != nil {
		return Payment{}, err
	}
	var out Payment
	err = s.store.WithTx(ctx, func(tx Store) error {
		p, err := tx.HeldPaymentForUpdate(ctx, id)
		if errs.Is(err, errs.NotFound) {
			return paymentNotFound()
		}
		if err != nil {
			return fmt.Errorf("lock held payment %s: %w", id, err)
		}
		if p.Status != Held {
			return errs.Newf(errs.Conflict, "This payment is %s; only a held payment is reviewed.", p.Status)
		}
		reason := ""
		if p.HoldReason != nil {
			reason = *p.HoldReason
		}
		action := AuditRejected
		if release {
			action = AuditReleased
			out, err = s.releaseTx(ctx, tx, p, note)
		} else {
			out, err = s.void(ctx, tx, p, CancelRejected)
		}
		if err != nil {
			return err
		}
		details := map[string]string{"payment_id": p.ID, "hold_reason": reason}
		if note != "" {
			details["note"] = note
		}
		return tx.RecordAudit(ctx, audit.In(p.Scope, action, by, details))
	})
	return out, err
}

// releaseTx makes the held payment p pending again in tx and fires
// payment.released.
func (s *Service) releaseTx(ctx context.Context, tx Store, p Payment, note string) (Payment, error) {
	now := s.now(ctx).UTC()
	reason := ""
	if p.HoldReason != nil {
		reason = *p.HoldReason
	}
	p.Status, p.HoldReason = Pending, nil
	p.SettleAt = s.sandboxSettleAt(ctx, p.Scope, now)
	if err := tx.ReleaseHeld(ctx, p); err != nil {
		return Payment{}, fmt.Errorf("release held payment %s: %w", p.ID, err)
	}
	r := released{Payment: p, ReleasedHold: reason}
	if note != "" {
		r.Note = &note
	}
	return p, tx.RecordEvent(ctx, event.New(p.Scope, event.PaymentReleased, r, now))
}

// Review is the platform's annual review of its fraud-monitoring
// processes.
type Review struct {
	ID         string    `json:"review_id"`
	Year       int       `json:"year"`
	ReviewedBy string    `json:"reviewed_by"`
	Note       *string   `json:"note"`
	CreatedAt  time.Time `json:"created_at"`
}

// Attest records the annual review of year by name.
func (s *Service) Attest(ctx context.Context, year int, by, note string) (Review, error) {
	by = strings.TrimSpace(by)
	if year < 2000 || year > 9999 {
		return Review{}, errs.Invalid("year", "year must be a year like 2026.")
	}
	if by == "" || utf8.RuneCountInString(by) > 200 || strings.ContainsFunc(by, isControl) {
		return Review{}, errs.Invalid("by", "by must name the reviewer in 1 to 200 characters.")
	}
	note, err := ReviewNote(note)
	if err != nil {
		return Review{}, err
	}
	r := Review{ID: ids.New("rvw_"), Year: year, ReviewedBy: by, CreatedAt: s.now(ctx).UTC()}
	if note != "" {
		r.Note = &note
	}
	return r, s.store.InsertReview(ctx, r)
}
