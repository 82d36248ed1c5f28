package customer

import (
	"context"
	"errors"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

// MaxPerClock is how many customers one sandbox test clock may carry.
const MaxPerClock = 100

// The store's refusals of a customer on a test clock (InsertCustomer).
var (
	ErrNoClock        = errors.New("insert customer: no such test clock in the scope")
	ErrClockAdvancing = errors.New("insert customer: the test clock is advancing")
	ErrClockFull      = errors.New("insert customer: the test clock has its most customers")
)

// onClock puts c on the test clock id: sandbox only, and the request must
// run on that clock (the API resolves it and puts it in the context), whose
// time is the customer's creation time. Whether the clock still exists,
// is ready and has room is decided by the insert.
func onClock(ctx context.Context, scope tenant.Scope, c Customer, id string) (Customer, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Customer{}, err
	}
	k, ok := testclock.From(ctx)
	if !ok || k.ID != id {
		return Customer{}, clockNotFound()
	}
	c.TestClock, c.CreatedAt = k.ID, k.Now
	return c, nil
}

// clockRefusal turns the store's refusals of a customer on a clock into
// their errors; other errors pass.
func clockRefusal(err error) error {
	switch {
	case errors.Is(err, ErrNoClock):
		return clockNotFound()
	case errors.Is(err, ErrClockAdvancing):
		return &errs.Error{Code: errs.Conflict, Param: "test_clock",
			Message: "This test clock is advancing; create the customer once its status is ready."}
	case errors.Is(err, ErrClockFull):
		return (&errs.Error{Code: errs.LimitExceeded, Param: "test_clock",
			Message: "A test clock carries at most 100 customers; use another clock."}).WithDetail("limit", "customers_per_test_clock")
	}
	return err
}

func clockNotFound() error {
	return &errs.Error{Code: errs.TestClockNotFound, Message: "No test clock with this id exists.", Param: "test_clock"}
}

// OnClocks are the customers of some test clocks, by clock id: up to
// perClock of each, newest first, and how many each clock carries.
type OnClocks struct {
	Newest map[string][]Customer
	Count  map[string]int
}

// OnClocks reads the customers of the scope's clocks named, for the
// dashboard's clocks page: one read for every clock of the page.
func (s *Service) OnClocks(ctx context.Context, scope tenant.Scope, clocks []string, perClock int) (OnClocks, error) {
	out := OnClocks{Newest: map[string][]Customer{}, Count: map[string]int{}}
	if len(clocks) == 0 || scope.Env != tenant.Sandbox {
		return out, nil
	}
	cs, counts, err := s.store.CustomersOnClocks(ctx, scope, clocks, perClock)
	if err != nil {
		return OnClocks{}, err
	}
	for _, c := range cs {
		out.Newest[c.TestClock] = append(out.Newest[c.TestClock], c)
	}
	out.Count = counts
	return out, nil
}
