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
// use, FinishedTx) in one transaction.
func (s *Service) deliverInstant(ctx context.Context, ic payment.InstantCredit, first bool) (payment.Payment, error) {
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
