package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// A refund pays a customer back for a debit: a credit of its own to the
// same source naming the debit (refund_of). Unlike a reversal it corrects
// no error and needs no NACHA reason, so it is a new payment the merchant
// sends: it goes through the one creation path (the originator's limits,
// sanctions screening and the fraud rules judge it as any credit, and may
// refuse or hold it), and it may be partial. A debit may have several
// refunds; their total, counting those that may still move money (not
// canceled or failed), stays within the debit's amount. That sum is read
// under the debit's row lock, so two refunds racing for the last dollar
// take turns and the second sees the first.
//
// The debit must be processed (its money arrived) and settled at most
// RefundDays calendar days ago. A refunded debit that is later returned
// as unauthorized means the customer's bank paid the customer back too, a
// second time: the return raises a refund_then_return alert for an
// operator, as a reversal that left does.

// RefundDays is how many calendar days after its settlement date a debit
// may be refunded.
const RefundDays = 180

// MaxRefundReason is the longest refund reason, in characters.
const MaxRefundReason = 500

// AlertRefundThenReturn is the alert of a debit that came back as
// unauthorized after a refund of it was sent: the customer may have been
// paid back twice. Like AlertReversalThenReturn it holds nothing and has
// no threshold.
const AlertRefundThenReturn = "refund_then_return"

// Why a refund is refused (the refund_not_allowed error's reason).
const (
	RefundNotDebit      = "not_a_debit"
	RefundNotProcessed  = "not_processed"
	RefundWindowClosed  = "refund_window_closed"
	RefundOverRemaining = "over_remaining_amount"
)

// RefundInput is a refund request: amount (the whole remaining amount
// when absent) and the merchant's reason.
type RefundInput struct {
	Amount json.RawMessage `json:"amount"`
	Reason *string         `json:"reason"`
}

// RefundFacts are what the refund rule judges: the payment as read under
// its lock, its settlement date (ok false: none yet), today and the
// amount asked for.
type RefundFacts struct {
	Payment   Payment
	Settled   calendar.Date
	HasSettle bool
	Today     calendar.Date
	Cents     int64
}

// RefundRule is the rule: a processed debit, settled at most RefundDays
// days before today, with at least cents not refunded yet; otherwise
// refund_not_allowed with the reason.
func RefundRule(f RefundFacts) error {
	p := f.Payment
	refuse := func(reason, msg string) *errs.Error {
		return errs.New(errs.RefundNotAllowed, msg).WithDetail("reason", reason)
	}
	switch {
	case p.Direction != Debit:
		return refuse(RefundNotDebit, "Only a debit is refunded; this payment is a credit.")
	case p.Status != Processed || !f.HasSettle:
		return refuse(RefundNotProcessed, fmt.Sprintf("This debit is %s; only a processed debit is refunded (cancel a pending one instead).", p.Status))
	}
	last := f.Settled.AddDate(0, 0, RefundDays)
	if f.Today.After(last) {
		return refuse(RefundWindowClosed, fmt.Sprintf("This debit settled on %s; it may be refunded until %s, %d days after.",
			f.Settled.Format(time.DateOnly), last.Format(time.DateOnly), RefundDays))
	}
	if remaining := p.Cents - p.RefundedCents; f.Cents > remaining {
		return refuse(RefundOverRemaining, fmt.Sprintf("%s of this debit's %s remains to refund.", money.Format(remaining), p.Amount)).
			WithDetail("remaining", money.Format(remaining))
	}
	return nil
}

// Refund refunds a processed debit: it creates the refund credit through
// Create's path with method auto (instant where the bank and the
// originator allow, else ACH), in a transaction that holds the debit's row
// lock, and fires payment.refunded with the debit and its
// refunded_amount. An instant refund is sent once that transaction
// commits. It answers the refund credit.
func (s *Service) Refund(ctx context.Context, scope tenant.Scope, id string, in RefundInput) (Payment, error) {
	reason, err := refundReason(in.Reason)
	if err != nil {
		return Payment{}, err
	}
	var cents int64
	if len(in.Amount) > 0 {
		if cents, err = s.amount(in.Amount); err != nil {
			return Payment{}, err
		}
	}
	var out Payment
	err = s.store.WithTx(ctx, func(tx Store) error {
		if _, err := s.lockPayment(ctx, tx, scope, id); err != nil {
			return err
		}
		// Read again after the lock: a statement of its own sees the
		// refunds a concurrent request committed meanwhile.
		p, err := tx.Payment(ctx, scope, id)
		if err != nil {
			return err
		}
		settled, ok, err := s.settlementDate(ctx, tx, p)
		if err != nil {
			return err
		}
		if cents == 0 {
			cents = max(p.Cents-p.RefundedCents, 0)
		}
		if err := RefundRule(RefundFacts{Payment: p, Settled: settled, HasSettle: ok, Today: calendar.DateOf(s.now(ctx)), Cents: cents}); err != nil {
			return err
		}
		if cents == 0 {
			return errs.New(errs.RefundNotAllowed, "This debit was refunded in full.").WithDetail("reason", RefundOverRemaining).
				WithDetail("remaining", money.Format(0))
		}
		amount, _ := json.Marshal(money.Format(cents))
		purpose, method := string(p.Purpose), MethodAuto
		r, err := s.On(tx).createWith(ctx, scope, Input{SourceID: p.SourceID, Amount: amount, Direction: Credit,
			Description: p.Description, Purpose: &purpose, Method: &method}, Ledger{RefundOf: &p.ID, RefundReason: reason})
		if err != nil {
			return fmt.Errorf("refund %s: %w", p.ID, err)
		}
		p.RefundedCents += cents
		refunded := money.Format(p.RefundedCents)
		p.RefundedAmount = &refunded
		out = r
		return tx.RecordEvent(ctx, event.New(scope, event.PaymentRefunded, p, r.CreatedAt))
	})
	// An instant refund leaves once this commits: the caller sends it
	// (Payment.PendingInstant).
	return out, err
}

func refundReason(r *string) (*string, error) { return optionalText("reason", r, MaxRefundReason) }

// refundedReturnedTx is what an unauthorized return of debit p does when
// p was refunded, in the return's transaction tx: a refund that left
// cannot be called back, so it raises a refund_then_return alert. A refund
// that has not left stays: the merchant decides (cancel it).
func (s *Service) refundedReturnedTx(ctx context.Context, tx Store, p Payment, code string) error {
	if p.Direction != Debit || !slices.Contains(achcode.UnauthorizedCodes, code) {
		return nil
	}
	left, err := tx.RefundsLeft(ctx, p.Scope, p.ID)
	if err != nil || left == 0 {
		return err
	}
	a := Alert{Scope: p.Scope, ID: ids.New("alrt_"), RuleID: AlertRefundThenReturn, RuleVersion: 1,
		PaymentID: p.ID, SourceID: p.SourceID, CreatedAt: s.now(ctx).UTC()}
	if err := tx.InsertAlert(ctx, a); err != nil {
		return fmt.Errorf("alert the return of refunded %s: %w", p.ID, err)
	}
	return nil
}

// UpdateInput is a change of a payment's or a subscription's metadata.
type UpdateInput struct {
	Metadata metadata.Metadata `json:"metadata"`
}

// Update merges in's metadata into the payment's (a key set to "" is
// removed) and answers the payment.
func (s *Service) Update(ctx context.Context, scope tenant.Scope, id string, in UpdateInput) (Payment, error) {
	if in.Metadata == nil {
		return Payment{}, errs.Invalid("metadata", "Send metadata, the keys to set (a key set to \"\" is removed).")
	}
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.lockPayment(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		next, err := metadata.Apply(p.Metadata, in.Metadata)
		if err != nil {
			return err
		}
		if err := tx.SetPaymentMetadata(ctx, scope, id, next); err != nil {
			return fmt.Errorf("update the metadata of %s: %w", id, err)
		}
		p.Metadata = next
		out = p
		return nil
	})
	return out, err
}

// UpdateSubscription merges in's metadata into the subscription's (a key
// set to "" is removed) and answers the subscription.
func (s *Service) UpdateSubscription(ctx context.Context, scope tenant.Scope, id string, in UpdateInput) (Subscription, error) {
	if in.Metadata == nil {
		return Subscription{}, errs.Invalid("metadata", "Send metadata, the keys to set (a key set to \"\" is removed).")
	}
	var out Subscription
	err := s.store.WithTx(ctx, func(tx Store) error {
		sub, err := tx.SubscriptionForUpdate(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return subscriptionNotFound()
		}
		if err != nil {
			return err
		}
		next, err := metadata.Apply(sub.Metadata, in.Metadata)
		if err != nil {
			return err
		}
		if err := tx.SetSubscriptionMetadata(ctx, scope, id, next); err != nil {
			return fmt.Errorf("update the metadata of %s: %w", id, err)
		}
		sub.Metadata = next
		out = sub
		return nil
	})
	return out, err
}
