package funding

import (
	"context"
	"errors"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// ErrRailNoAnswer is wrapped, beside ErrRailUnavailable, by a Rail's
// errors when a message may have reached the rail but no answer came in
// time. A verification treats it as the rail being unavailable (nothing
// was consumed); a payout cannot: the credit may have been made, so it is
// asked again under the same message id, never sent under another.
var ErrRailNoAnswer = errors.New("instant rail gave no answer in time")

// PayoutRail names the instant rail the bank of scope's source id receives
// on ("" for none) and whether scope's environment has a rail at all.
func (s *Service) PayoutRail(ctx context.Context, scope tenant.Scope, id string) (rail string, available bool, err error) {
	src, err := s.store.Source(ctx, scope, id)
	if err != nil {
		return "", false, fmt.Errorf("read the source of an instant credit: %w", err)
	}
	if s.reach != nil {
		rail = s.reach.Rail(src.RoutingNumber)
	}
	return rail, s.rails[scope.Env] != nil, nil
}

// SendPayout sends an instant credit of cents to the account of scope's
// source id over rail, as message messageID; a resend of the same credit
// passes the same messageID (the rail answers it from its record). Errors
// are the Rail's.
func (s *Service) SendPayout(ctx context.Context, scope tenant.Scope, id, messageID, rail string, cents int64, remittance string) (RailAnswer, error) {
	client := s.rails[scope.Env]
	if client == nil {
		return RailAnswer{}, fmt.Errorf("%w: no instant rail in %s", ErrRailUnavailable, scope.Env)
	}
	acct, err := s.BankAccount(ctx, scope, id)
	if err != nil {
		return RailAnswer{}, err
	}
	return client.Credit(ctx, InstantCredit{MessageID: messageID, Rail: rail, RoutingNumber: acct.RoutingNumber,
		AccountNumber: acct.AccountNumber, AccountType: acct.AccountType, AmountCents: int(cents), Remittance: remittance})
}
