package rail_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// sender is a funding service whose SendPayout answers ans, err.
type sender struct {
	ans funding.RailAnswer
	err error
}

func (s sender) PayoutRail(context.Context, tenant.Scope, string) (string, bool, error) {
	return funding.RailRTP, true, nil
}

func (s sender) SendPayout(context.Context, tenant.Scope, string, string, string, int64, string) (funding.RailAnswer, error) {
	return s.ans, s.err
}

// TestPayoutsNameTheRailsErrors: a payout's send says nothing was taken
// (ErrRailDown) only when the rail was unavailable without the message
// possibly reaching it; a timeout, an unreadable answer or any other
// failure may have made the credit (ErrRailNoAnswer). An answer passes
// as it came.
func TestPayoutsNameTheRailsErrors(t *testing.T) {
	timeout := fmt.Errorf("%w: %w: %w", rail.ErrTimeout, funding.ErrRailUnavailable, funding.ErrRailNoAnswer)
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"down", fmt.Errorf("%w: %w", rail.ErrDown, funding.ErrRailUnavailable), payment.ErrRailDown},
		{"no rail in the environment", fmt.Errorf("%w: no instant rail in production", funding.ErrRailUnavailable), payment.ErrRailDown},
		{"timed out", timeout, payment.ErrRailNoAnswer},
		{"unreadable", fmt.Errorf("%w: %w", rail.ErrUnreadable, funding.ErrRailAnswerUnknown), payment.ErrRailNoAnswer},
		{"context ended", context.Canceled, payment.ErrRailNoAnswer},
		{"source unreadable", errors.New("read source: connection reset"), payment.ErrRailNoAnswer},
	} {
		_, err := rail.Payouts{Funding: sender{err: c.err}}.Send(context.Background(), tenant.Scope{}, payment.InstantOrder{})
		if !errors.Is(err, c.want) || !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v wrapping the rail's error", c.name, err, c.want)
		}
		if other := map[error]error{payment.ErrRailDown: payment.ErrRailNoAnswer, payment.ErrRailNoAnswer: payment.ErrRailDown}[c.want]; errors.Is(err, other) {
			t.Errorf("%s: %v is %v too", c.name, err, other)
		}
	}
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	got, err := rail.Payouts{Funding: sender{ans: funding.RailAnswer{Accepted: false, Reason: "AC03", At: at}}}.
		Send(context.Background(), tenant.Scope{}, payment.InstantOrder{})
	if err != nil || got != (payment.InstantAnswer{Reason: "AC03", At: at}) {
		t.Errorf("an answer: %+v, %v", got, err)
	}
}
