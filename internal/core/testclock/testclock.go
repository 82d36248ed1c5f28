// Package testclock carries a sandbox test clock through a context: the
// clock a request's or a job's objects live on, and its time. A request
// about a customer on a clock, and each step of the clock's advance, run
// with the clock in their context; the domain services read their time
// from it (Now), the stores scope the work they claim to it (an
// advance's jobs touch the clock's objects only, the wall clock's jobs
// none of them), and an event recorded under it carries the clock and
// its time. A context without a clock is the wall clock's: production,
// and the sandbox outside any clock.
//
// The clock rides in the context rather than in each call because it is
// a fact of the whole request or step, like its deadline: every time
// taken, every row claimed and every event written under it must agree,
// and no service between the handler and the store has to pass it on.
package testclock

import (
	"context"
	"time"
)

// Clock is a test clock as a request or a step sees it.
type Clock struct {
	ID  string    // clk_…
	Now time.Time // the clock's time for this request or step (UTC)
}

type key struct{}

// With returns ctx on clock c.
func With(ctx context.Context, c Clock) context.Context {
	c.Now = c.Now.UTC()
	return context.WithValue(ctx, key{}, c)
}

// From returns the clock ctx is on, if any.
func From(ctx context.Context) (Clock, bool) {
	c, ok := ctx.Value(key{}).(Clock)
	return c, ok
}

// ID is the id of the clock ctx is on, "" for the wall clock.
func ID(ctx context.Context) string {
	c, _ := From(ctx)
	return c.ID
}

// Now is the time of ctx: its clock's, else wall().
func Now(ctx context.Context, wall func() time.Time) time.Time {
	if c, ok := From(ctx); ok {
		return c.Now
	}
	return wall()
}

// Scope returns a time source for a service constructed with wall: the
// clock's time under a clock, else wall's.
func Scope(wall func() time.Time) func(context.Context) time.Time {
	return func(ctx context.Context) time.Time { return Now(ctx, wall) }
}
