package testclock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func at(t time.Time) *time.Time { return &t }

// TestCheckAdvance is the advance rule at its edges: later than the frozen
// time, at most two calendar years after it, from a ready clock only.
func TestCheckAdvance(t *testing.T) {
	t.Parallel()
	frozen := time.Date(2027, 2, 28, 9, 0, 0, 0, time.UTC)
	ready := testclock.Clock{ID: "clk_a", FrozenTime: frozen, Status: testclock.Ready}
	for _, c := range []struct {
		name  string
		clock testclock.Clock
		to    time.Time
		want  errs.Code
	}{
		{"one second later", ready, frozen.Add(time.Second), ""},
		{"two years exactly", ready, time.Date(2029, 2, 28, 9, 0, 0, 0, time.UTC), ""},
		{"two years and a second", ready, time.Date(2029, 2, 28, 9, 0, 1, 0, time.UTC), errs.InvalidRequest},
		{"730 days is within two calendar years here", ready, frozen.AddDate(0, 0, 730), ""},
		{"equal time", ready, frozen, errs.InvalidRequest},
		{"backwards", ready, frozen.Add(-time.Second), errs.InvalidRequest},
		{"an advancing clock", testclock.Clock{ID: "clk_a", FrozenTime: frozen, Status: testclock.Advancing}, frozen.Add(time.Hour), errs.Conflict},
	} {
		err := testclock.CheckAdvance(c.clock, c.to)
		if got := errs.CodeOf(err); got != c.want {
			t.Errorf("%s: got %v, want code %q", c.name, err, c.want)
		}
		if c.want == errs.InvalidRequest {
			if e, _ := errs.As(err); e.Param != "frozen_time" {
				t.Errorf("%s: param = %q, want frozen_time", c.name, e.Param)
			}
		}
	}
}

func TestCreateRefusesThePastAProductionKeyAndABadName(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	now := f.Clock.Now()
	for _, c := range []struct {
		name string
		in   testclock.Input
		want errs.Code
	}{
		{"no frozen_time", testclock.Input{}, errs.InvalidRequest},
		{"a second in the past", testclock.Input{FrozenTime: at(now.Add(-time.Second))}, errs.InvalidRequest},
		{"a name too long", testclock.Input{FrozenTime: at(now), Name: new(strings.Repeat("n", testclock.MaxNameLen+1))}, errs.InvalidRequest},
		{"an empty name", testclock.Input{FrozenTime: at(now), Name: new("")}, errs.InvalidRequest},
	} {
		if _, err := f.TestClocks.Create(ctx, scope, c.in); errs.CodeOf(err) != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
	prod := tenant.Scope{MerchantID: scope.MerchantID, Env: tenant.Production}
	if _, err := f.TestClocks.Create(ctx, prod, testclock.Input{FrozenTime: at(now)}); !errs.Is(err, errs.PermissionDenied) {
		t.Errorf("production: got %v, want permission_denied", err)
	}
	for name, call := range map[string]func() error{
		"get":  func() error { _, err := f.TestClocks.Get(ctx, prod, "clk_x"); return err },
		"list": func() error { _, _, err := f.TestClocks.List(ctx, prod, paging.Page{Limit: 10}); return err },
		"advance": func() error {
			_, err := f.TestClocks.Advance(ctx, prod, "clk_x", testclock.AdvanceInput{FrozenTime: at(now)})
			return err
		},
		"delete": func() error { _, err := f.TestClocks.Delete(ctx, prod, "clk_x"); return err },
	} {
		if err := call(); !errs.Is(err, errs.PermissionDenied) {
			t.Errorf("production %s: got %v, want permission_denied", name, err)
		}
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM test_clocks`); err != nil || n != 0 {
		t.Fatalf("refused creations stored %d clocks (%v)", n, err)
	}

	// Now itself, to the second, is not in the past; the name is kept.
	k, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: at(now), Name: new("Renewals")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.ID, "clk_") || k.Status != testclock.Ready || !k.FrozenTime.Equal(now) || *k.Name != "Renewals" {
		t.Errorf("created %+v", k)
	}
	got, err := f.TestClocks.Get(ctx, scope, k.ID)
	if err != nil || got.ID != k.ID || !got.FrozenTime.Equal(now) || got.AdvanceTo != nil {
		t.Errorf("get = %+v, %v", got, err)
	}
}

// TestTwentyClocksPerMerchant: the 20th clock is created, the 21st is
// limit_exceeded, another merchant is not counted; racing creations at 19
// make exactly one.
func TestTwentyClocksPerMerchant(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Other")
	in := testclock.Input{FrozenTime: at(f.Clock.Now().Add(time.Hour))}
	for i := range testclock.MaxClocks - 1 {
		if _, err := f.TestClocks.Create(ctx, scope, in); err != nil {
			t.Fatalf("clock %d: %v", i+1, err)
		}
	}
	errc := make(chan error, 2)
	for range 2 {
		go func() { _, err := f.TestClocks.Create(ctx, scope, in); errc <- err }()
	}
	var limited int
	for range 2 {
		err := <-errc
		switch {
		case err == nil:
		case errs.Is(err, errs.LimitExceeded):
			limited++
			if e, _ := errs.As(err); e.Details["limit"] != "test_clocks" {
				t.Errorf("limit = %v, want test_clocks", e.Details["limit"])
			}
		default:
			t.Fatal(err)
		}
	}
	if limited != 1 {
		t.Fatalf("racing 20th and 21st clocks: %d refused, want 1", limited)
	}
	if _, err := f.TestClocks.Create(ctx, scope, in); !errs.Is(err, errs.LimitExceeded) {
		t.Errorf("22nd clock: got %v, want limit_exceeded", err)
	}
	if _, err := f.TestClocks.Create(ctx, other, in); err != nil {
		t.Errorf("another merchant's first clock: %v", err)
	}
	page, more, err := f.TestClocks.List(ctx, scope, paging.Page{Limit: 100})
	if err != nil || len(page) != testclock.MaxClocks || more {
		t.Errorf("list: %d clocks, more %v, %v; want 20", len(page), more, err)
	}
}

func TestAdvanceThenMarkReadyRecordsTheReadyEventOnTheClock(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Other")
	frozen := f.Clock.Now().Add(24 * time.Hour).Truncate(time.Second)
	k, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: at(frozen)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.TestClocks.Get(ctx, other, k.ID); !errs.Is(err, errs.TestClockNotFound) {
		t.Errorf("another merchant's clock: got %v, want test_clock_not_found", err)
	}
	if _, err := f.TestClocks.Advance(ctx, other, k.ID, testclock.AdvanceInput{FrozenTime: at(frozen.Add(time.Hour))}); !errs.Is(err, errs.TestClockNotFound) {
		t.Errorf("advance another merchant's clock: got %v, want test_clock_not_found", err)
	}
	if _, err := f.TestClocks.MarkReady(ctx, scope, k.ID); !errs.Is(err, errs.Conflict) {
		t.Errorf("mark a ready clock ready: got %v, want conflict", err)
	}
	over := frozen.AddDate(2, 0, 0).Add(time.Second)
	if _, err := f.TestClocks.Advance(ctx, scope, k.ID, testclock.AdvanceInput{FrozenTime: &over}); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("two years and a second: got %v, want invalid_request", err)
	}
	to := frozen.AddDate(0, 1, 0)
	adv, err := f.TestClocks.Advance(ctx, scope, k.ID, testclock.AdvanceInput{FrozenTime: &to})
	if err != nil {
		t.Fatal(err)
	}
	if adv.Status != testclock.Advancing || !adv.FrozenTime.Equal(frozen) || adv.AdvanceTo == nil || !adv.AdvanceTo.Equal(to) {
		t.Errorf("advance answered %+v", adv)
	}
	if _, err := f.TestClocks.Advance(ctx, scope, k.ID, testclock.AdvanceInput{FrozenTime: at(to.Add(time.Hour))}); !errs.Is(err, errs.Conflict) {
		t.Errorf("advance an advancing clock: got %v, want conflict", err)
	}
	if _, err := f.TestClocks.Delete(ctx, scope, k.ID); !errs.Is(err, errs.Conflict) {
		t.Errorf("delete an advancing clock: got %v, want conflict", err)
	}

	ready, err := f.TestClocks.MarkReady(ctx, scope, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ready.Status != testclock.Ready || !ready.FrozenTime.Equal(to) || ready.AdvanceTo != nil {
		t.Errorf("ready = %+v", ready)
	}
	evs, _, err := f.Webhooks.Events(ctx, scope, event.TestClockReady, paging.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].TestClock != k.ID || !evs[0].ClockTime.Equal(to) {
		t.Fatalf("test_clock.ready events: %+v", evs)
	}
	env := evs[0].Envelope()
	if env.TestClock != k.ID || env.ClockTime == nil || !env.ClockTime.Equal(to) {
		t.Errorf("envelope clock = %q %v", env.TestClock, env.ClockTime)
	}
	// The clock reads back ready at its new time.
	if got, err := f.TestClocks.Get(ctx, scope, k.ID); err != nil || got.Status != testclock.Ready || !got.FrozenTime.Equal(to) {
		t.Errorf("get after ready = %+v, %v", got, err)
	}
}

// TestEventsRecordedOffAClockCarryNoClock: the writer leaves both columns
// NULL for a context without a clock, and the envelope has neither member.
func TestEventsRecordedOffAClockCarryNoClock(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	f.Customer(scope)
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE test_clock_id IS NOT NULL OR clock_time IS NOT NULL`); err != nil || n != 0 {
		t.Fatalf("%d events on a clock (%v), want none", n, err)
	}
	evs, _, err := f.Webhooks.Events(ctx, scope, "", paging.Page{Limit: 10})
	if err != nil || len(evs) == 0 {
		t.Fatalf("events: %v %v", evs, err)
	}
	b, _ := evs[0].MarshalJSON()
	if s := string(b); strings.Contains(s, "test_clock") || strings.Contains(s, "clock_time") {
		t.Errorf("envelope off a clock: %s", s)
	}
}

// TestResolveFindsTheClockOfTheObjectsNamed: a customer's clock through
// the customer or its source; none for the wall clock's, another
// merchant's or an unknown object; objects of two clocks are refused.
func TestResolveFindsTheClockOfTheObjectsNamed(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Other")
	frozen := f.Clock.Now().Add(time.Hour).Truncate(time.Second)
	onClock := func(scope tenant.Scope) (testclock.Clock, string) {
		k, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: &frozen})
		if err != nil {
			t.Fatal(err)
		}
		in := customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", TestClock: &k.ID}
		c, err := f.Customers.Create(k.Context(ctx), scope, in)
		if err != nil {
			t.Fatal(err)
		}
		return k, c.ID
	}
	a, userA := onClock(scope)
	_, userB := onClock(scope)
	_, theirs := onClock(other)
	srcA := f.Source(scope, userA, "123456789").ID
	wall := f.Customer(scope)
	objects := func(ids ...string) testclock.Objects {
		var o testclock.Objects
		for _, id := range ids {
			o.Add(id)
		}
		return o
	}
	for _, c := range []struct {
		name  string
		o     testclock.Objects
		clock string
	}{
		{"the customer", objects(userA), a.ID},
		{"its source", objects(srcA), a.ID},
		{"the customer and its source", objects(userA, srcA), a.ID},
		{"a wall-clock customer", objects(wall), ""},
		{"another merchant's customer on a clock", objects(theirs), ""},
		{"an unknown source", objects("fs_unknown"), ""},
		{"no object", objects("evt_x", "clk_x"), ""},
	} {
		r, ok, err := f.TestClocks.Resolve(ctx, scope, c.o)
		if err != nil || ok != (c.clock != "") || r.Clock.ID != c.clock {
			t.Errorf("%s: %+v %v %v, want clock %q", c.name, r, ok, err, c.clock)
			continue
		}
		if ok && (!r.Clock.Now.Equal(frozen) || r.Status != testclock.Ready) {
			t.Errorf("%s: resolved %+v, want ready at %v", c.name, r, frozen)
		}
	}
	if _, _, err := f.TestClocks.Resolve(ctx, scope, objects(userA, userB)); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("objects of two clocks: got %v, want invalid_request", err)
	}
}
