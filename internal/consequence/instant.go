package consequence

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/payment"
)

// DeliverInstant sends an instant credit whose intent a creation or a
// refund wrote (payment.Payment.PendingInstant), once that committed, and
// answers the payment as the rail did: the creating request's send, so a
// rail that took nothing undoes an "instant" credit or sends an "auto"
// one over ACH.
func (s *Service) DeliverInstant(ctx context.Context, ic payment.InstantCredit) (payment.Payment, error) {
	return s.deliverInstant(ctx, ic, true)
}

// ResolveInstant sends the instant credits that are due (payment.Service
// DueInstant: queued ones, and those without an answer whose lease ran
// out) and records their answers. It returns how many it sent. Several
// processes may run it at once; each credit is claimed by one.
func (s *Service) ResolveInstant(ctx context.Context) (int, error) {
	due, err := s.payments.DueInstant(ctx)
	if err != nil {
		return 0, err
	}
	for _, ic := range due {
		if _, err := s.deliverInstant(ctx, ic, false); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// deliverInstant sends ic under its lease, outside any transaction, then
// records the answer and what an accepted credit sets off (its account's
// use, FinishedTx) in one transaction. A credit that never left (queued)
// first passes the departure check (leaveInstant) and is not sent when it
// fails it.
func (s *Service) deliverInstant(ctx context.Context, ic payment.InstantCredit, first bool) (payment.Payment, error) {
	if ic.State == payment.RailQueued {
		leaves, err := s.leaveInstant(ctx, ic)
		if err != nil {
			return payment.Payment{}, err
		}
		if !leaves {
			return s.payments.Get(ctx, ic.Scope, ic.PaymentID)
		}
	}
	ans, err := s.payments.SendInstant(ctx, ic)
	if err != nil {
		return s.payments.Unanswered(ctx, ic, first, err)
	}
	if err := s.store.WithTx(ctx, func(tx Tx) error {
		f, err := s.payments.AnsweredTx(ctx, tx.Payments(), ic, ans)
		if err != nil {
			return err
		}
		return s.FinishedTx(ctx, tx, f)
	}); err != nil {
		return payment.Payment{}, fmt.Errorf("record the answer to instant credit %s: %w", ic.PaymentID, err)
	}
	return s.payments.Get(ctx, ic.Scope, ic.PaymentID)
}

// leaveInstant decides in a transaction of its own whether ic may leave
// (payment.Service.LeaveInstantTx), screening the account holder's name
// its source's entries carry (funding.Receiver: a notification of change
// may have corrected the customer's).
func (s *Service) leaveInstant(ctx context.Context, ic payment.InstantCredit) (bool, error) {
	r, err := s.funding.Receiver(ctx, ic.Scope, ic.SourceID)
	if err != nil {
		return false, fmt.Errorf("read the account holder of instant credit %s: %w", ic.PaymentID, err)
	}
	var leaves bool
	if err := s.store.WithTx(ctx, func(tx Tx) (err error) {
		leaves, err = s.payments.LeaveInstantTx(ctx, tx.Payments(), ic, r.Name, r.Company)
		return err
	}); err != nil {
		return false, fmt.Errorf("let instant credit %s leave: %w", ic.PaymentID, err)
	}
	return leaves, nil
}
