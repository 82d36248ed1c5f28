package wiring

import (
	"context"
	"errors"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// payoutRails are the funding service's instant rails as the payment
// service sends payouts over them: the rail client's errors named in the
// payment package's terms (a timeout or an unreadable answer: the credit
// may have been made; any other unavailability: nothing was taken).
type payoutRails struct{ fund *funding.Service }

func (r payoutRails) Reach(ctx context.Context, scope tenant.Scope, sourceID string) (string, bool, error) {
	return r.fund.PayoutRail(ctx, scope, sourceID)
}

func (r payoutRails) Send(ctx context.Context, scope tenant.Scope, o payment.InstantOrder) (payment.InstantAnswer, error) {
	ans, err := r.fund.SendPayout(ctx, scope, o.SourceID, o.MessageID, o.Rail, o.Cents, o.Remittance)
	switch {
	case err == nil:
		return payment.InstantAnswer{Accepted: ans.Accepted, Reason: ans.Reason, At: ans.At}, nil
	case errors.Is(err, funding.ErrRailNoAnswer), errors.Is(err, funding.ErrRailAnswerUnknown):
		return payment.InstantAnswer{}, fmt.Errorf("%w: %w", payment.ErrRailNoAnswer, err)
	case errors.Is(err, funding.ErrRailUnavailable):
		return payment.InstantAnswer{}, fmt.Errorf("%w: %w", payment.ErrRailDown, err)
	}
	// The caller's context ended or the source could not be read: the
	// message may have left, so it counts as no answer.
	return payment.InstantAnswer{}, fmt.Errorf("%w: %w", payment.ErrRailNoAnswer, err)
}
