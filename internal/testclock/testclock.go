// Package testclock holds a merchant's sandbox test clocks: a frozen time
// its customers on the clock (and everything of theirs: funding sources,
// verifications, payments, subscriptions, mandates) live on, which the
// merchant moves forward to rehearse what days, months or years of time
// would do. The clock a request or a step runs on travels in its context
// (internal/core/testclock); this package is the clocks themselves: their
// creation, advance requests, deletion and the end of an advance.
//
// Rules, decided here: clocks are sandbox only (a production key gets
// permission_denied); a new clock's frozen_time is not before now; an
// advance goes forward, by at most two calendar years from the current
// frozen time, and only from a ready clock (an advancing one answers
// conflict); a merchant has at most MaxClocks clocks (limit_exceeded,
// counted in the insert's statement under a lock of the merchant's
// environment so that concurrent creations cannot pass it); a clock
// carries at most customer.MaxPerClock customers (decided by the
// customer's insert). A clock of another merchant is unknown
// (test_clock_not_found).
//
// An advance is asked for here (Advance: status advancing, the target
// kept) and carried out by the engine that runs the clock's due work on
// its time; when it has run everything due up to the target it calls
// MarkReady, which moves the frozen time to the target and records
// test_clock.ready in the same transaction.
//
// Delete removes the clock and everything on it, in one transaction of
// the store: its customers, their funding sources (with their account
// numbers' registry rows, account facts, micro-deposits, verification
// intents, processor tokens and account changes), mandates,
// subscriptions, payments (with their instant credits, fraud alerts and
// ACH entries) and the events recorded on the clock (their deliveries go
// with them). What belongs to the whole merchant or the platform stays:
// the request log, idempotency records, the audit log, the originator's
// counters, and the ACH files and settlements that other merchants'
// entries share.
package testclock

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	core "github.com/fundsource/fundsource/internal/core/testclock"
)

// Prefix is the prefix of clock ids.
const Prefix = "clk_"

// Limits of the clocks.
const (
	// MaxClocks is how many clocks one merchant may have.
	MaxClocks = 20
	// MaxNameLen bounds a clock's name, in characters.
	MaxNameLen = 100
)

// Status is a clock's state.
type Status string

// The statuses of a clock.
const (
	Ready     Status = "ready"
	Advancing Status = "advancing"
)

// Clock is one test clock of a merchant's sandbox. Its JSON form is the
// API resource and the test_clock.ready event's data.
type Clock struct {
	Scope tenant.Scope `json:"-"`
	ID    string       `json:"test_clock_id"`
	Name  *string      `json:"name"`
	// FrozenTime is the clock's time (UTC).
	FrozenTime time.Time `json:"frozen_time"`
	Status     Status    `json:"status"`
	// AdvanceTo is the target of the advance under way (UTC); nil when
	// ready.
	AdvanceTo *time.Time `json:"advance_to,omitempty"`
	CreatedAt time.Time  `json:"created_at"` // UTC, the wall clock's
}

// Context returns ctx on the clock, at its frozen time.
func (c Clock) Context(ctx context.Context) context.Context {
	return core.With(ctx, core.Clock{ID: c.ID, Now: c.FrozenTime})
}

// Input is what a merchant sends to create a clock.
type Input struct {
	FrozenTime *time.Time `json:"frozen_time"`
	Name       *string    `json:"name"`
}

// AdvanceInput is what a merchant sends to advance a clock.
type AdvanceInput struct {
	FrozenTime *time.Time `json:"frozen_time"`
}

// Store is the persistence of clocks.
type Store interface {
	// InsertClock stores c unless its scope has max clocks already,
	// counted under a lock of the scope; it reports whether it stored it.
	InsertClock(ctx context.Context, c Clock, max int) (bool, error)
	// Clock returns errs.NotFound for an id unknown in the scope.
	Clock(ctx context.Context, scope tenant.Scope, id string) (Clock, error)
	// ClockForUpdate is Clock with the row locked until the transaction
	// ends.
	ClockForUpdate(ctx context.Context, scope tenant.Scope, id string) (Clock, error)
	// UpdateClock stores c's frozen time, status and advance target.
	UpdateClock(ctx context.Context, c Clock) error
	// ListClocks returns up to p.Limit+1 clocks, newest first;
	// errs.NotFound when p.StartingAfter is unknown.
	ListClocks(ctx context.Context, scope tenant.Scope, p paging.Page) ([]Clock, error)
	// DeleteClock deletes the clock and everything on it (see the
	// package documentation), in one transaction; errs.NotFound when
	// the scope has no such clock.
	DeleteClock(ctx context.Context, scope tenant.Scope, id string) error
	// ClocksOf returns the clocks the objects named live on (at most
	// two: more than one is already an error), with their status.
	ClocksOf(ctx context.Context, scope tenant.Scope, o Objects) ([]Resolved, error)
	// WithTx runs fn in one transaction, on the store bound to it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	event.Recorder
}

// Service applies the clock rules.
type Service struct {
	store Store
	now   func() time.Time
	// created runs after a clock is created (the merchant's resolved keys,
	// which say whether it has clocks, are forgotten); nil: nothing.
	created func()
}

// NewService returns a Service; now is the wall clock.
func NewService(store Store, now func() time.Time) *Service {
	return &Service{store: store, now: now}
}

// OnCreated sets what runs after a clock is created.
func (s *Service) OnCreated(fn func()) *Service {
	s.created = fn
	return s
}

// On returns the service on tx, a store bound to a caller's transaction.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store = tx
	return &c
}

// Create validates in and stores a new ready clock.
func (s *Service) Create(ctx context.Context, scope tenant.Scope, in Input) (Clock, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Clock{}, err
	}
	now := s.now().UTC()
	if in.FrozenTime == nil {
		return Clock{}, errs.Invalid("frozen_time", "frozen_time is required: the clock's start, in RFC 3339 (2027-01-15T09:00:00Z).")
	}
	frozen := in.FrozenTime.UTC()
	if frozen.Before(now.Truncate(time.Second)) {
		return Clock{}, errs.Invalid("frozen_time", "frozen_time must not be in the past.")
	}
	c := Clock{Scope: scope, ID: ids.New(Prefix), FrozenTime: frozen, Status: Ready, CreatedAt: now}
	if in.Name != nil {
		if n := utf8.RuneCountInString(*in.Name); n == 0 || n > MaxNameLen {
			return Clock{}, errs.Invalid("name", "name must be 1 to 100 characters.")
		}
		name := *in.Name
		c.Name = &name
	}
	ok, err := s.store.InsertClock(ctx, c, MaxClocks)
	if err != nil {
		return Clock{}, err
	}
	if !ok {
		return Clock{}, errs.New(errs.LimitExceeded, "A merchant has at most 20 test clocks; delete one first.").
			WithDetail("limit", "test_clocks")
	}
	if s.created != nil {
		s.created()
	}
	return c, nil
}

// Get returns one clock, or test_clock_not_found.
func (s *Service) Get(ctx context.Context, scope tenant.Scope, id string) (Clock, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Clock{}, err
	}
	c, err := s.store.Clock(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Clock{}, NotFound("id")
	}
	return c, err
}

// List returns a page of clocks, newest first, and whether more follow.
func (s *Service) List(ctx context.Context, scope tenant.Scope, p paging.Page) ([]Clock, bool, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return nil, false, err
	}
	cs, err := s.store.ListClocks(ctx, scope, p)
	return paging.Result(cs, err, p)
}

// MaxAdvance is how far one advance may move a clock: two calendar years.
func MaxAdvance(from time.Time) time.Time { return from.AddDate(2, 0, 0) }

// CheckAdvance is the advance rule: a ready clock moves forward to a later
// time at most two calendar years after its frozen time.
func CheckAdvance(c Clock, to time.Time) error {
	if c.Status != Ready {
		return errs.New(errs.Conflict, "This test clock is advancing; wait until its status is ready.")
	}
	if !to.After(c.FrozenTime) {
		return errs.Invalid("frozen_time", "frozen_time must be later than the clock's frozen_time "+c.FrozenTime.Format(time.RFC3339)+".")
	}
	if to.After(MaxAdvance(c.FrozenTime)) {
		return errs.Invalid("frozen_time", "An advance moves a clock at most two years: frozen_time must be at most "+
			MaxAdvance(c.FrozenTime).Format(time.RFC3339)+".")
	}
	return nil
}

// lockClock reads clock id of scope locked for tx's transaction;
// test_clock_not_found when the scope has none.
func lockClock(ctx context.Context, tx Store, scope tenant.Scope, id string) (Clock, error) {
	c, err := tx.ClockForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Clock{}, NotFound("id")
	}
	return c, err
}

// Advance starts moving a clock to in.FrozenTime: the clock answers
// advancing until the engine has run everything due up to that time and
// marked it ready.
func (s *Service) Advance(ctx context.Context, scope tenant.Scope, id string, in AdvanceInput) (Clock, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Clock{}, err
	}
	if in.FrozenTime == nil {
		return Clock{}, errs.Invalid("frozen_time", "frozen_time is required: the clock's new time, in RFC 3339.")
	}
	to := in.FrozenTime.UTC()
	var out Clock
	err := s.store.WithTx(ctx, func(tx Store) error {
		c, err := lockClock(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if err := CheckAdvance(c, to); err != nil {
			return err
		}
		c.Status, c.AdvanceTo = Advancing, &to
		out = c
		return tx.UpdateClock(ctx, c)
	})
	if err != nil {
		return Clock{}, err
	}
	return out, nil
}

// MarkReady ends a clock's advance: its frozen time becomes the advance's
// target, its status ready, and test_clock.ready is recorded on the clock
// at its new time, in one transaction. The engine calls it once it has run
// everything due up to the target; a clock that is not advancing answers
// conflict.
func (s *Service) MarkReady(ctx context.Context, scope tenant.Scope, id string) (Clock, error) {
	var out Clock
	err := s.store.WithTx(ctx, func(tx Store) error {
		c, err := lockClock(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if c.Status != Advancing || c.AdvanceTo == nil {
			return errs.New(errs.Conflict, "This test clock is not advancing.")
		}
		c.FrozenTime, c.Status, c.AdvanceTo = *c.AdvanceTo, Ready, nil
		if err := tx.UpdateClock(ctx, c); err != nil {
			return err
		}
		out = c
		on := c.Context(ctx)
		return tx.RecordEvent(on, event.New(scope, event.TestClockReady, c, s.now().UTC()))
	})
	if err != nil {
		return Clock{}, err
	}
	return out, nil
}

// Delete deletes a clock and everything on it (see the package
// documentation). An advancing clock answers conflict: its engine is
// working on its objects.
func (s *Service) Delete(ctx context.Context, scope tenant.Scope, id string) (Clock, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Clock{}, err
	}
	var out Clock
	err := s.store.WithTx(ctx, func(tx Store) error {
		c, err := lockClock(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if c.Status != Ready {
			return errs.New(errs.Conflict, "This test clock is advancing; delete it once its status is ready.")
		}
		out = c
		return tx.DeleteClock(ctx, scope, id)
	})
	if err != nil {
		return Clock{}, err
	}
	return out, nil
}

// NotFound is the test_clock_not_found error, about param.
func NotFound(param string) error {
	return &errs.Error{Code: errs.TestClockNotFound, Message: "No test clock with this id exists.", Param: param}
}
