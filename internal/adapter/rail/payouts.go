package rail

import (
	"context"
	"errors"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// PayoutFunding is what Payouts needs of the funding service
// (*funding.Service), which owns the rail clients and the accounts they
// credit.
type PayoutFunding interface {
	PayoutRail(ctx context.Context, scope tenant.Scope, sourceID string) (rail string, available bool, err error)
	SendPayout(ctx context.Context, scope tenant.Scope, sourceID, messageID, rail string, cents int64, remittance string) (funding.RailAnswer, error)
}

// Payouts are the funding service's instant rails as the payment service
// sends payouts over them (payment.InstantRails): the rail client's
// errors named in the payment package's terms. A timeout or an
// unreadable answer means the credit may have been made
// (payment.ErrRailNoAnswer); any other unavailability means nothing was
// taken (payment.ErrRailDown). Payment and funding never import each
// other, so the translation lives here, beside the client whose errors it
// reads.
type Payouts struct{ Funding PayoutFunding }

// Reach names the rail the bank of a source receives on and whether the
// environment has a rail.
func (p Payouts) Reach(ctx context.Context, scope tenant.Scope, sourceID string) (string, bool, error) {
	return p.Funding.PayoutRail(ctx, scope, sourceID)
}

// Send sends an instant credit; its errors wrap payment.ErrRailDown or
// payment.ErrRailNoAnswer.
func (p Payouts) Send(ctx context.Context, scope tenant.Scope, o payment.InstantOrder) (payment.InstantAnswer, error) {
	ans, err := p.Funding.SendPayout(ctx, scope, o.SourceID, o.MessageID, o.Rail, o.Cents, o.Remittance)
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
