package customer_test

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestAHundredCustomersPerClock: the 100th customer of a clock is created
// (two racing at 99: exactly one), the 101st is limit_exceeded, and each
// lives on the clock with the clock's time as its creation time.
func TestAHundredCustomersPerClock(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	frozen := f.Clock.Now().Add(72 * time.Hour).Truncate(time.Second)
	k, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: &frozen})
	if err != nil {
		t.Fatal(err)
	}
	on := k.Context(ctx)
	in := valid()
	in.TestClock = &k.ID
	for i := range customer.MaxPerClock - 1 {
		c, err := f.Customers.Create(on, scope, in)
		if err != nil {
			t.Fatalf("customer %d: %v", i+1, err)
		}
		if i == 0 && (c.TestClock != k.ID || !c.CreatedAt.Equal(frozen)) {
			t.Fatalf("customer on the clock: test_clock %q created_at %v, want %s at %v", c.TestClock, c.CreatedAt, k.ID, frozen)
		}
	}
	errc := make(chan error, 2)
	for range 2 {
		go func() { _, err := f.Customers.Create(on, scope, in); errc <- err }()
	}
	limited := 0
	for range 2 {
		switch err := <-errc; {
		case err == nil:
		case errs.Is(err, errs.LimitExceeded):
			limited++
		default:
			t.Fatal(err)
		}
	}
	if limited != 1 {
		t.Fatalf("two racing at 99: %d refused, want exactly 1", limited)
	}
	_, err = f.Customers.Create(on, scope, in)
	if e, ok := errs.As(err); !ok || e.Code != errs.LimitExceeded || e.Param != "test_clock" {
		t.Fatalf("101st: got %v, want limit_exceeded on test_clock", err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM customers WHERE test_clock_id = $1`, k.ID); err != nil || n != customer.MaxPerClock {
		t.Fatalf("%d customers on the clock (%v), want 100", n, err)
	}
	// Off the clock, the merchant's customers have no such limit.
	if _, err := f.Customers.Create(ctx, scope, valid()); err != nil {
		t.Fatal(err)
	}
}

// TestACustomerOnAClockItCannotUse: another merchant's clock (the context
// has none of it) is test_clock_not_found, a production key
// permission_denied, an advancing clock conflict; nothing is written.
func TestACustomerOnAClockItCannotUse(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Other")
	frozen := f.Clock.Now().Add(time.Hour)
	theirs, err := f.TestClocks.Create(ctx, other, testclock.Input{FrozenTime: &frozen})
	if err != nil {
		t.Fatal(err)
	}
	in := valid()
	in.TestClock = &theirs.ID
	if _, err := f.Customers.Create(ctx, scope, in); !errs.Is(err, errs.TestClockNotFound) {
		t.Errorf("another merchant's clock: got %v, want test_clock_not_found", err)
	}
	// Even with that clock in the context, the insert finds it not the scope's.
	if _, err := f.Customers.Create(theirs.Context(ctx), scope, in); !errs.Is(err, errs.TestClockNotFound) {
		t.Errorf("another merchant's clock in the context: got %v, want test_clock_not_found", err)
	}
	prod := tenant.Scope{MerchantID: scope.MerchantID, Env: tenant.Production}
	if _, err := f.Customers.Create(ctx, prod, in); !errs.Is(err, errs.PermissionDenied) {
		t.Errorf("production: got %v, want permission_denied", err)
	}
	mine, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: &frozen})
	if err != nil {
		t.Fatal(err)
	}
	to := frozen.Add(time.Hour)
	if _, err := f.TestClocks.Advance(ctx, scope, mine.ID, testclock.AdvanceInput{FrozenTime: &to}); err != nil {
		t.Fatal(err)
	}
	in.TestClock = &mine.ID
	if _, err := f.Customers.Create(mine.Context(ctx), scope, in); !errs.Is(err, errs.Conflict) {
		t.Errorf("advancing clock: got %v, want conflict", err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM customers`); err != nil || n != 0 {
		t.Fatalf("%d customers written (%v), want none", n, err)
	}
}
