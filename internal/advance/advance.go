// Package advance runs a sandbox test clock's advance: from the clock's
// time to the time the merchant asked for, it stops at every instant the
// production service would act at and does there what production does,
// on the clock's time and to the clock's customers only
// (internal/core/testclock carries the clock in each step's context):
//
//   - the start of each day, US Eastern: the simulated bank answers what
//     it would have answered by then (returns, notifications of change,
//     dishonor contests, on the banking days the network delivers them),
//     and the originator imports them; micro-deposits past their expiry
//     expire; subscriptions due that day make their debits;
//   - each ACH window of each banking day: the originator builds the
//     window's file and delivers it to the simulated bank, which reads it
//     that day (a file settles on its effective date);
//   - noon UTC of each day: payments whose settlement time has come
//     settle (what a return did not take back becomes processed), the
//     same job the wall clock runs every second;
//   - and the target itself.
//
// Each step is the production code on the clock's time: the ACH
// originator (its own instance per clock, whose transport is the clock's
// exchange with its simulated bank), the funding and payment services,
// and the consequences of what the bank answers. Events are recorded at
// each step with its time, so they come in clock order.
//
// An advance is one process's at a time, under a lease on the clock
// (Store.ClaimAdvance). Its time moves on after each step, so a process
// that dies mid-advance leaves the clock at its last finished step; the
// next claim redoes the step it was in, whose jobs claim only what is
// still due (each writes in its own transactions, as in production), so
// nothing happens twice.
package advance

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

// Claim is an advancing clock, leased to the process that runs it.
type Claim struct {
	Scope   tenant.Scope
	ClockID string
	Now     time.Time // the clock's time: its last finished step
	Target  time.Time // where the merchant asked it to go
}

// Store keeps the clocks' advances.
type Store interface {
	// ClaimAdvance leases an advancing clock whose lease is free to owner
	// until until; false when none is.
	ClaimAdvance(ctx context.Context, owner string, now, until time.Time) (Claim, bool, error)
	// StepDone records, under owner's lease, that clock id's steps up to
	// t are done (t is its time now) and extends the lease to until.
	// false when the lease was lost.
	StepDone(ctx context.Context, id, owner string, t, until time.Time) (bool, error)
}

// Ready ends the advance of clock id of scope after its last step (the
// target): the clock is ready at its target, holds no lease, and
// test_clock.ready fires (testclock.Service.MarkReady).
type Ready func(ctx context.Context, scope tenant.Scope, id string) error

// World is what production does, run on a clock: the jobs of one step.
type World interface {
	// Morning: the simulated bank's answers due by the day of the step's
	// time, imported; micro-deposits expired; subscriptions due.
	Morning(ctx context.Context) error
	// Window builds and delivers the ACH window due at the step's time.
	Window(ctx context.Context) error
	// Settle settles the payments whose time has come.
	Settle(ctx context.Context) error
}

// Runner runs advances.
type Runner struct {
	store    Store
	ready    Ready
	world    func(clockID string) World
	schedule calendar.Schedule
	now      func() time.Time
	owner    string
	lease    time.Duration
}

// NewRunner returns a Runner whose owner is this process; world gives a
// clock's jobs.
func NewRunner(store Store, ready Ready, world func(clockID string) World, schedule calendar.Schedule, owner string, now func() time.Time) *Runner {
	return &Runner{store: store, ready: ready, world: world, schedule: schedule, now: now, owner: owner, lease: time.Minute}
}

// RunDue runs the advances waiting, one clock at a time, to their
// targets, and returns how many it finished.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	n := 0
	for {
		now := r.now()
		c, ok, err := r.store.ClaimAdvance(ctx, r.owner, now, now.Add(r.lease))
		if err != nil {
			return n, fmt.Errorf("claim a test clock's advance: %w", err)
		}
		if !ok {
			return n, nil
		}
		if err := r.Run(ctx, c); err != nil {
			return n, err
		}
		n++
	}
}

// Run advances claimed clock c to its target, step by step.
func (r *Runner) Run(ctx context.Context, c Claim) error {
	w := r.world(c.ClockID)
	steps := Steps(r.schedule, c.Now, c.Target)
	for i, s := range steps {
		sctx := testclock.With(ctx, testclock.Clock{ID: c.ClockID, Now: s.At})
		if err := s.run(sctx, w); err != nil {
			return fmt.Errorf("advance test clock %s at %s: %w", c.ClockID, s.At.Format(time.RFC3339), err)
		}
		if i == len(steps)-1 {
			break // the target: Ready moves the clock there
		}
		ok, err := r.store.StepDone(ctx, c.ClockID, r.owner, s.At, r.now().Add(r.lease))
		if err != nil {
			return fmt.Errorf("record test clock %s at %s: %w", c.ClockID, s.At.Format(time.RFC3339), err)
		}
		if !ok {
			return nil // another process took the advance over
		}
	}
	if err := r.ready(ctx, c.Scope, c.ClockID); err != nil {
		return fmt.Errorf("end the advance of test clock %s: %w", c.ClockID, err)
	}
	return nil
}
