package advance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/advance"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	core "github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

var ctx = context.Background()

// clocked is a sandbox merchant with a clock at fixture.Start and a
// customer on it.
type clocked struct {
	*fixture.Fixture
	scope    tenant.Scope
	clock    string
	customer string
}

func newClocked(t testing.TB) *clocked { return newClockedAt(t, fixture.Start) }

// newClockedAt is newClocked with the clock at start.
func newClockedAt(t testing.TB, start time.Time) *clocked {
	t.Helper()
	f := fixture.New(t)
	c := &clocked{Fixture: f, scope: f.Sandbox("Clocked")}
	clock, err := f.TestClocks.Create(ctx, c.scope, testclock.Input{FrozenTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	c.clock = clock.ID
	c.customer = c.customerOnClock()
	return c
}

// customerOnClock is a new customer on the clock.
func (c *clocked) customerOnClock() string {
	c.T.Helper()
	clock, err := c.TestClocks.Get(ctx, c.scope, c.clock)
	if err != nil {
		c.T.Fatal(err)
	}
	cu, err := c.Customers.Create(clock.Context(ctx), c.scope, customer.Input{FirstName: "Clocked", LastName: "Customer",
		Email: "clocked@example.com", TestClock: &c.clock})
	if err != nil {
		c.T.Fatal(err)
	}
	return cu.ID
}

// ticking moves the wall clock on by a millisecond every tenth of one,
// as time passes while an advance runs, until the returned stop.
func (c *clocked) ticking() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
				c.Clock.Advance(time.Millisecond)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// at is ctx on the clock at t.
func (c *clocked) at(t time.Time) context.Context {
	return core.With(ctx, core.Clock{ID: c.clock, Now: t})
}

// VerifiedSourceAt is a Verified source of the clock's customer, created
// at ctx's time.
func (c *clocked) VerifiedSourceAt(ctx context.Context, account string) string {
	c.T.Helper()
	return c.verifiedSourceOf(ctx, c.customer, account)
}

func (c *clocked) verifiedSourceOf(ctx context.Context, customerID, account string) string {
	c.T.Helper()
	src, err := c.Funding.CreateOnDemand(ctx, funding.Caller{Scope: c.scope, OnDemand: true, ThirdPartyVerification: true},
		funding.Input{CustomerID: customerID, RoutingNumber: fixture.RoutingNumber, AccountNumber: account})
	if err != nil {
		c.T.Fatal(err)
	}
	return src.ID
}

func (c *clocked) debit(ctx context.Context, sourceID, amount string) payment.Payment {
	return c.pay(ctx, sourceID, amount, payment.Debit)
}

func (c *clocked) credit(ctx context.Context, sourceID, amount string) payment.Payment {
	return c.pay(ctx, sourceID, amount, payment.Credit)
}

func (c *clocked) pay(ctx context.Context, sourceID, amount string, d payment.Direction) payment.Payment {
	c.T.Helper()
	p, err := c.Payments.Create(ctx, c.scope, payment.Input{SourceID: sourceID, Amount: json.RawMessage(`"` + amount + `"`), Direction: d})
	if err != nil {
		c.T.Fatal(err)
	}
	return p
}

func (c *clocked) subscribe(ctx context.Context, sourceID, amount string) payment.Subscription {
	c.T.Helper()
	sub, err := c.Payments.Subscribe(ctx, c.scope, payment.SubscriptionInput{SourceID: sourceID, Amount: json.RawMessage(`"` + amount + `"`),
		Interval: payment.Monthly, StartDate: "2026-11-10"})
	if err != nil {
		c.T.Fatal(err)
	}
	return sub
}

// advance asks the clock to go to to and runs the advance.
func (c *clocked) advance(to time.Time) {
	c.T.Helper()
	if _, err := c.TestClocks.Advance(ctx, c.scope, c.clock, testclock.AdvanceInput{FrozenTime: &to}); err != nil {
		c.T.Fatal(err)
	}
	if n, err := c.Advances.RunDue(ctx); err != nil || n != 1 {
		c.T.Fatalf("RunDue = %d, %v; want the one advance", n, err)
	}
	clock, err := c.TestClocks.Get(ctx, c.scope, c.clock)
	if err != nil {
		c.T.Fatal(err)
	}
	if clock.Status != testclock.Ready || !clock.FrozenTime.Equal(to) {
		c.T.Fatalf("after the advance: %s at %s, want ready at %s", clock.Status, clock.FrozenTime, to)
	}
}

// TestAnAdvanceRunsTheBankPath: a debit on a clock leaves in the clock's
// next window with the next banking day's effective date, an account
// ending 0001 comes back R01 on the second banking day after settlement
// (the bank's answer imported that morning), and another settles
// SettleDays after its effective date at noon UTC; nothing of the clock
// moves on the wall clock.
func TestAnAdvanceRunsTheBankPath(t *testing.T) {
	t.Parallel()
	c := newClocked(t)
	start := c.at(fixture.Start) // Monday 2026-11-02, 10:04 Eastern
	bad := c.VerifiedSourceAt(start, "000000001")
	good := c.VerifiedSourceAt(start, "123456789")
	returned := c.debit(start, bad, "10.00")
	settled := c.debit(start, good, "20.00")
	if returned.SettleAt != nil || !returned.CreatedAt.Equal(fixture.Start) {
		t.Fatalf("a clocked debit: settle_at %v, created %s; want none, at the clock's time", returned.SettleAt, returned.CreatedAt)
	}
	// The wall clock's jobs leave the clock's payments alone.
	c.Clock.Advance(30 * 24 * time.Hour)
	if n, err := c.Consequences.SettleDue(ctx); err != nil || n != 0 {
		t.Fatalf("the wall clock settled %d (%v)", n, err)
	}

	stop := c.ticking()
	c.advance(fixture.Start.AddDate(0, 0, 10))
	stop()

	r, err := c.Payments.Get(ctx, c.scope, returned.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Filed at Monday's 13:45 window, effective and settled Tuesday
	// 11-03; R01 two banking days later: Thursday 11-05, imported at
	// midnight Eastern that day.
	thursday := time.Date(2026, 11, 5, 0, 0, 0, 0, calendar.Eastern)
	if r.Status != payment.Failed || r.FailureCode == nil || *r.FailureCode != "R01" {
		t.Fatalf("the 0001 debit: %s %v, want failed R01", r.Status, r.FailureCode)
	}
	if r.SettledAt == nil || !r.SettledAt.Equal(thursday) {
		t.Errorf("the R01 came at %v, want %s", r.SettledAt, thursday.UTC())
	}
	if r.EffectiveDate == nil || *r.EffectiveDate != "2026-11-03" {
		t.Errorf("effective %v, want 2026-11-03", r.EffectiveDate)
	}
	s, err := c.Payments.Get(ctx, c.scope, settled.ID)
	if err != nil {
		t.Fatal(err)
	}
	noon := time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC) // Tuesday + 2 banking days
	if s.Status != payment.Processed || s.SettledAt == nil || !s.SettledAt.Equal(noon) {
		t.Errorf("the other debit: %s at %v, want processed at %s", s.Status, s.SettledAt, noon)
	}
	// Every event of the clock carries it and its time; written step
	// after step, they come in the clock's order, ending with the
	// clock's readiness.
	rows, err := c.SQL().Query(`SELECT type, clock_time, data->>'payment_id' FROM events WHERE test_clock_id = $1 ORDER BY created_at, id`, c.clock)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var last time.Time
	var types []string
	for rows.Next() {
		var typ string
		var at time.Time
		var pay *string
		if err := rows.Scan(&typ, &at, &pay); err != nil {
			t.Fatal(err)
		}
		if at.Before(last) {
			t.Errorf("%s at %s after an event at %s", typ, at, last)
		}
		last = at
		types = append(types, typ)
		if typ == "payment.failed" && (pay == nil || *pay != returned.ID || !at.Equal(thursday)) {
			t.Errorf("payment.failed of %v at %s, want %s at %s", pay, at, returned.ID, thursday.UTC())
		}
	}
	if len(types) == 0 || types[len(types)-1] != "test_clock.ready" {
		t.Errorf("the clock's events: %v, want them to end with test_clock.ready", types)
	}
	// Nothing is left to do: a second run has no advance.
	if n, err := c.Advances.RunDue(ctx); err != nil || n != 0 {
		t.Errorf("a second RunDue = %d, %v", n, err)
	}
}

// TestAnAdvanceRunsMicroDepositsAndSubscriptions: a clock's micro-deposits
// leave in its file (an account ending 0003 comes back R03 the next
// banking day and fails its verification), an unanswered one expires ten
// days after its initiation on the clock, and a monthly subscription makes
// its debits on each due date across sixty days, each settled.
func TestAnAdvanceRunsMicroDepositsAndSubscriptions(t *testing.T) {
	t.Parallel()
	c := newClocked(t)
	start := c.at(fixture.Start)
	noAccount, err := c.Funding.CreateForMicroDeposits(start, c.scope, funding.Input{
		CustomerID: c.customer, RoutingNumber: fixture.RoutingNumber, AccountNumber: "000000003"})
	if err != nil {
		t.Fatal(err)
	}
	silent, err := c.Funding.CreateForMicroDeposits(start, c.scope, funding.Input{
		CustomerID: c.customer, RoutingNumber: fixture.RoutingNumber, AccountNumber: "555500008"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{noAccount.ID, silent.ID} {
		if _, err := c.Funding.InitiateVerification(start, c.scope, id); err != nil {
			t.Fatal(err)
		}
	}
	src := c.VerifiedSourceAt(start, "444455556666")
	sub := c.subscribe(start, src, "9.99")

	c.advance(fixture.Start.AddDate(0, 0, 60))

	for _, w := range []struct {
		id, status string
	}{{noAccount.ID, funding.DepositFailed}, {silent.ID, funding.DepositExpired}} {
		got, err := c.Funding.Get(ctx, c.scope, w.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Verification == nil || got.Verification.Status != w.status {
			t.Errorf("%s: verification %+v, want %s", w.id, got.Verification, w.status)
		}
	}
	var entries int
	if err := c.SQL().QueryRow(`SELECT count(*) FROM ach_entries e JOIN ach_files f ON f.id = e.file_id
		WHERE f.test_clock_id = $1 AND e.deposit_seq IS NOT NULL`, c.clock).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if entries < 4 {
		t.Errorf("%d micro-deposit entries in the clock's files, want both pairs", entries)
	}
	var expiredAt time.Time
	if err := c.SQL().QueryRow(`SELECT finished_at FROM micro_deposits WHERE funding_source_id = $1`, silent.ID).Scan(&expiredAt); err != nil {
		t.Fatal(err)
	}
	if want := fixture.Start.Add(funding.VerificationTTL); expiredAt.Before(want) || expiredAt.After(want.Add(24*time.Hour)) {
		t.Errorf("expired at %s, want the day after %s", expiredAt, want)
	}
	rows, err := c.SQL().Query(`SELECT due_date::text, status FROM payments WHERE subscription_id = $1 ORDER BY due_date`, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var due, status string
		if err := rows.Scan(&due, &status); err != nil {
			t.Fatal(err)
		}
		got = append(got, due+" "+status)
	}
	want := []string{"2026-11-10 processed", "2026-12-10 processed"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the subscription's debits: %v, want %v", got, want)
	}
}

// crashing is a World whose process dies (its step fails) at its n-th
// call.
type crashing struct {
	advance.World
	calls *int
	n     int
}

func (w crashing) crash() error {
	*w.calls++
	if *w.calls == w.n {
		return errors.New("the process died")
	}
	return nil
}

func (w crashing) Morning(ctx context.Context) error {
	if err := w.crash(); err != nil {
		return err
	}
	return w.World.Morning(ctx)
}

func (w crashing) Window(ctx context.Context) error {
	if err := w.crash(); err != nil {
		return err
	}
	return w.World.Window(ctx)
}

// TestAnInterruptedAdvanceResumesAndDoesEverythingOnce: a process that
// dies in the middle of an advance leaves the clock advancing at its last
// finished step; once its lease runs out another process takes the
// advance over and finishes it, and each payment's outcome fires once.
func TestAnInterruptedAdvanceResumesAndDoesEverythingOnce(t *testing.T) {
	t.Parallel()
	c := newClocked(t)
	start := c.at(fixture.Start)
	bad := c.debit(start, c.VerifiedSourceAt(start, "000000001"), "10.00")
	good := c.debit(start, c.VerifiedSourceAt(start, "123456789"), "20.00")
	to := fixture.Start.AddDate(0, 0, 10)
	if _, err := c.TestClocks.Advance(ctx, c.scope, c.clock, testclock.AdvanceInput{FrozenTime: &to}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	ready := func(ctx context.Context, scope tenant.Scope, id string) error {
		_, err := c.TestClocks.MarkReady(ctx, scope, id)
		return err
	}
	dying := advance.NewRunner(c.DB, ready, func(id string) advance.World {
		return crashing{World: c.ClockWorld(id), calls: &calls, n: 6}
	}, calendar.DefaultSchedule(), "adv_dying", c.Clock.Now)
	if _, err := dying.RunDue(ctx); err == nil {
		t.Fatal("the dying process finished its advance")
	}
	var status string
	var frozen time.Time
	if err := c.SQL().QueryRow(`SELECT status, frozen_time FROM test_clocks WHERE id = $1`, c.clock).Scan(&status, &frozen); err != nil {
		t.Fatal(err)
	}
	if status != "advancing" || !frozen.After(fixture.Start) || !frozen.Before(to) {
		t.Fatalf("after the crash: %s at %s, want advancing part of the way", status, frozen)
	}
	// Its lease holds the clock until it runs out.
	if n, err := c.Advances.RunDue(ctx); err != nil || n != 0 {
		t.Fatalf("RunDue under the dead process's lease = %d, %v", n, err)
	}
	c.Clock.Advance(2 * time.Minute)
	if n, err := c.Advances.RunDue(ctx); err != nil || n != 1 {
		t.Fatalf("RunDue after the lease = %d, %v", n, err)
	}
	for id, typ := range map[string]string{bad.ID: "payment.failed", good.ID: "payment.success"} {
		var n int
		if err := c.SQL().QueryRow(`SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2`, typ, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s: %d %s events, want one", id, n, typ)
		}
	}
}

// TestTheCalendarsEdgesOnAClock: on a clock the bank's calendar decides
// as it does in production: a Same Day ACH debit created a minute before
// the cut-off's window is effective that day, one created a minute after
// it the next banking day; a debit filed the day before Thanksgiving is
// effective the Friday after it and its R01 comes two banking days later,
// over the weekend, on Tuesday.
func TestTheCalendarsEdgesOnAClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name               string
		at                 time.Time
		sameDay            bool
		effective, settled string
	}{
		{"a minute before the cut-off", eastern(2026, 11, 2, 15, 44), true, "2026-11-02", "2026-11-04"},
		{"a minute after the cut-off", eastern(2026, 11, 2, 15, 46), true, "2026-11-03", "2026-11-05"},
		{"the day before a holiday", eastern(2026, 11, 25, 10, 0), false, "2026-11-27", "2026-12-01"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			k := newClockedAt(t, c.at)
			at := k.at(c.at)
			p, err := k.Payments.Create(at, k.scope, payment.Input{SourceID: k.VerifiedSourceAt(at, "000000001"),
				Amount: json.RawMessage(`"10.00"`), Direction: payment.Debit, SameDay: c.sameDay})
			if err != nil {
				t.Fatal(err)
			}
			k.advance(c.at.AddDate(0, 0, 12))
			got, err := k.Payments.Get(ctx, k.scope, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.EffectiveDate == nil || *got.EffectiveDate != c.effective {
				t.Errorf("effective %v, want %s", got.EffectiveDate, c.effective)
			}
			if got.Status != payment.Failed || got.SettledAt == nil || calendar.DateOf(*got.SettledAt).Format(time.DateOnly) != c.settled {
				t.Errorf("%s, returned at %v; want R01 on %s", got.Status, got.SettledAt, c.settled)
			}
		})
	}
}

// eastern is a time of day in US Eastern.
func eastern(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, calendar.Eastern)
}

// TestAnUntimelyReturnIsDishonoredOnTheClock: an R01 the bank sends past
// its deadline (an account ending 6801, four banking days after
// settlement) is dishonored R68 by the clock's originator in its next
// window, in the clock's own file. While it waits, a release that does
// not know clocks reads it as kept back, never as one for the bank's file.
func TestAnUntimelyReturnIsDishonoredOnTheClock(t *testing.T) {
	t.Parallel()
	c := newClocked(t)
	start := c.at(fixture.Start)
	c.debit(start, c.VerifiedSourceAt(start, "556801"), "10.00")
	// Settled Tuesday 11-03; the untimely R01 comes Monday 11-09.
	c.advance(eastern(2026, 11, 9, 8, 0))
	var waiting, older int
	if err := c.SQL().QueryRow(`SELECT count(*) FILTER (WHERE file_id IS NULL),
		count(*) FILTER (WHERE file_id IS NULL AND late_for_dishonor_at IS NULL) FROM ach_dishonors`).Scan(&waiting, &older); err != nil {
		t.Fatal(err)
	}
	if waiting != 1 || older != 0 {
		t.Fatalf("%d dishonors waiting, %d of them an older release would send; want one, none", waiting, older)
	}
	c.advance(eastern(2026, 11, 10, 8, 0))
	var code string
	var sent, clock *string
	if err := c.SQL().QueryRow(`SELECT d.code, d.file_id, f.test_clock_id FROM ach_dishonors d LEFT JOIN ach_files f ON f.id = d.file_id`).
		Scan(&code, &sent, &clock); err != nil {
		t.Fatal(err)
	}
	if code != "R68" || sent == nil || clock == nil || *clock != c.clock {
		t.Fatalf("dishonor %s in file %v of clock %v; want R68 sent in a file of %s", code, sent, clock, c.clock)
	}
}

// TestDeletingAClockDeletesItsBankPath: once a clock has run its files
// through its bank, deleting it leaves none of its ACH files, entries,
// windows or exchange, and another clock's stay.
func TestDeletingAClockDeletesItsBankPath(t *testing.T) {
	t.Parallel()
	c := newClocked(t)
	other, err := c.TestClocks.Create(ctx, c.scope, testclock.Input{FrozenTime: &fixture.Start})
	if err != nil {
		t.Fatal(err)
	}
	first := c.clock
	for i, id := range []string{first, other.ID} {
		c.clock = id
		cu := c.customerOnClock()
		start := c.at(fixture.Start)
		c.debit(start, c.verifiedSourceOf(start, cu, fmt.Sprintf("55%d6801", i)), "10.00")
		c.advance(fixture.Start.AddDate(0, 0, 12))
	}
	count := func(clock string) int {
		var n int
		if err := c.SQL().QueryRow(`SELECT (SELECT count(*) FROM ach_files WHERE test_clock_id = $1)
			+ (SELECT count(*) FROM test_clock_windows WHERE test_clock_id = $1)
			+ (SELECT count(*) FROM test_clock_files WHERE test_clock_id = $1)
			+ (SELECT count(*) FROM test_clock_banks WHERE test_clock_id = $1)`, clock).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(first) == 0 || count(other.ID) == 0 {
		t.Fatal("the clocks ran no files")
	}
	if _, err := c.TestClocks.Delete(ctx, c.scope, first); err != nil {
		t.Fatal(err)
	}
	if n := count(first); n != 0 {
		t.Errorf("%d rows of the deleted clock's bank path are left", n)
	}
	if count(other.ID) == 0 {
		t.Error("deleting one clock deleted another's files")
	}
}
