package testclock

import (
	"context"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	core "github.com/fundsource/fundsource/internal/core/testclock"
)

// Objects are the ids a request names, by kind: the objects whose clock
// the request runs on.
type Objects struct {
	Customers, Sources, Payments, Subscriptions, Mandates []string
}

// Add files id under its kind, by its prefix; ids of other kinds (events,
// clocks) are left out.
func (o *Objects) Add(id string) {
	switch {
	case strings.HasPrefix(id, ids.Customer):
		o.Customers = append(o.Customers, id)
	case strings.HasPrefix(id, ids.FundingSource):
		o.Sources = append(o.Sources, id)
	case strings.HasPrefix(id, ids.Payment):
		o.Payments = append(o.Payments, id)
	case strings.HasPrefix(id, ids.Subscription):
		o.Subscriptions = append(o.Subscriptions, id)
	case strings.HasPrefix(id, ids.Mandate):
		o.Mandates = append(o.Mandates, id)
	}
}

// Empty reports whether o names nothing.
func (o Objects) Empty() bool {
	return len(o.Customers)+len(o.Sources)+len(o.Payments)+len(o.Subscriptions)+len(o.Mandates) == 0
}

// Resolved is the clock of a request's objects, with its status.
type Resolved struct {
	Clock  core.Clock
	Status Status
}

// Resolve returns the clock the objects live on, if any (sandbox only).
// Objects on two clocks are refused with invalid_request: one request
// runs on one time.
func (s *Service) Resolve(ctx context.Context, scope tenant.Scope, o Objects) (Resolved, bool, error) {
	if scope.Env != tenant.Sandbox || o.Empty() {
		return Resolved{}, false, nil
	}
	rs, err := s.store.ClocksOf(ctx, scope, o)
	if err != nil {
		return Resolved{}, false, err
	}
	switch len(rs) {
	case 0:
		return Resolved{}, false, nil
	case 1:
		return rs[0], true, nil
	}
	return Resolved{}, false, errs.New(errs.InvalidRequest, "The objects of this request live on different test clocks.")
}
