package customer

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// Sanctions screening of customers. A customer's names (first and last
// name together, and its business name) are screened against the SDN
// list when they are written, at creation and when an update changes a
// name: a potential match marks the customer, fires
// customer.screening_match, and holds its payments (package payment)
// until an operator clears it. A customer an operator cleared of an entry
// stays cleared of that entry when its names change; a match with another
// entry marks it again.

// WithSanctions sets the list names are screened against.
func (s *Service) WithSanctions(l *sanctions.List) *Service {
	s.sanctions = l
	return s
}

// screen is c's screening, given the one it had (prev).
func (s *Service) screen(prev sanctions.Screening, c Customer) sanctions.Screening {
	if s.sanctions == nil {
		return sanctions.Screening{Status: sanctions.Clear}
	}
	return s.sanctions.Of(prev, Names(c)...)
}

// Names are what a customer is screened by: its first and last name as
// a person's, and its business name when it has one.
func Names(c Customer) []sanctions.Name {
	names := []sanctions.Name{sanctions.Person(c.FirstName, c.LastName)}
	if c.BusinessName != nil {
		names = append(names, sanctions.Business(*c.BusinessName))
	}
	return names
}

// matched fires customer.screening_match in tx when c became a potential
// match (it was not before: prev).
func (s *Service) matched(ctx context.Context, tx Store, prev sanctions.Screening, c Customer) error {
	if c.Screening.Status != sanctions.PotentialMatch || prev.Status == sanctions.PotentialMatch {
		return nil
	}
	if err := tx.RecordEvent(ctx, event.New(c.Scope, event.CustomerScreeningMatch, c, s.now(ctx).UTC())); err != nil {
		return fmt.Errorf("record customer.screening_match of %s: %w", c.ID, err)
	}
	return nil
}
