package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// debits creates n debits of 1.00, each from a source of its own (so no
// fraud rule counts them together), and returns them.
func debits(t *testing.T, f *fixture.Fixture, scope tenant.Scope, n, from int) []payment.Payment {
	t.Helper()
	out := make([]payment.Payment, n)
	for i := range out {
		src := f.VerifiedSource(scope, f.Customer(scope), account(from+i)).ID
		p, r := create(t, f, scope, money(src, payment.Debit, "1.00"))
		wantHold(t, "debit", p, r, "")
		out[i] = p
	}
	return out
}

func returned(t *testing.T, f *fixture.Fixture, scope tenant.Scope, ps []payment.Payment, code string) {
	t.Helper()
	for _, p := range ps {
		if _, err := f.Consequences.SimulateReturn(ctx, scope, p.ID, code); err != nil {
			t.Fatal(err)
		}
	}
}

func warnings(t *testing.T, f *fixture.Fixture, scope tenant.Scope, rate string) int {
	t.Helper()
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE merchant_id = $1 AND environment = $2
		AND type = 'originator.return_rate_warning' AND data->>'rate' = $3`, scope.MerchantID, scope.Env, rate); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReturnRatesCountFromTwentyDebits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	nineteen, twenty := f.Sandbox("Nineteen"), f.Sandbox("Twenty")
	ps := debits(t, f, nineteen, 19, 0)
	returned(t, f, nineteen, ps[:1], "R10")
	p, r := create(t, f, nineteen, money(f.VerifiedSource(nineteen, f.Customer(nineteen), account(100)).ID, payment.Debit, "1.00"))
	wantHold(t, "1 unauthorized return of 19 debits", p, r, "")
	if n := warnings(t, f, nineteen, "unauthorized"); n != 0 {
		t.Errorf("warnings at 19 debits: got %d, want 0", n)
	}

	ps = debits(t, f, twenty, 20, 200)
	returned(t, f, twenty, ps[:1], "R10")
	p, r = create(t, f, twenty, money(f.VerifiedSource(twenty, f.Customer(twenty), account(300)).ID, payment.Debit, "1.00"))
	wantHold(t, "1 unauthorized return of 20 debits", p, r, payment.HoldReturnRateUnauthorized)
	if n := warnings(t, f, twenty, "unauthorized"); n != 1 {
		t.Errorf("warnings at 20 debits: got %d, want 1", n)
	}
	// Credits are not held by the debits' return rates.
	p, r = create(t, f, twenty, money(f.VerifiedSource(twenty, f.Customer(twenty), account(301)).ID, payment.Credit, "1.00"))
	wantHold(t, "credit of a held originator", p, r, "")
}

func TestReturnRateAtTheThresholdAndOver(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	ps := debits(t, f, scope, 20, 0)
	returned(t, f, scope, ps[:3], "R01") // 3 of 20: overall 15%, exactly the threshold
	p, r := create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(100)).ID, payment.Debit, "1.00"))
	wantHold(t, "overall rate at 15%", p, r, "")
	// From half the threshold it warns, once a day however many returns.
	if n := warnings(t, f, scope, "overall"); n != 1 {
		t.Errorf("overall warnings: got %d, want 1", n)
	}
	returned(t, f, scope, ps[3:4], "R01") // 4 of 21 debits: over 15%
	p, r = create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(101)).ID, payment.Debit, "1.00"))
	wantHold(t, "overall rate over 15%", p, r, payment.HoldReturnRateOverall)

	// The next day warns again.
	f.Clock.Advance(day)
	returned(t, f, scope, ps[4:5], "R01")
	if n := warnings(t, f, scope, "overall"); n != 2 {
		t.Errorf("overall warnings on the next day: got %d, want 2", n)
	}
}

func TestAdministrativeReturnRate(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	ps := debits(t, f, scope, 40, 0)
	returned(t, f, scope, ps[:1], "R03") // 1 of 40: 2.5%, over half of 3%
	p, r := create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(100)).ID, payment.Debit, "1.00"))
	wantHold(t, "administrative rate 2.5%", p, r, "")
	if n := warnings(t, f, scope, "administrative"); n != 1 {
		t.Errorf("administrative warnings: got %d, want 1", n)
	}
	returned(t, f, scope, ps[1:2], "R02") // 2 of 41: 4.9%
	p, r = create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(101)).ID, payment.Debit, "1.00"))
	wantHold(t, "administrative rate 4.9%", p, r, payment.HoldReturnRateAdministrative)
}

// TestAHoldOutlivesNoWindow: a hold decided by the rates is computed again
// once it is stale, so debits that left the 60-day window release the
// originator's new debits.
func TestAHoldOutlivesNoWindow(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	ps := debits(t, f, scope, 20, 0)
	returned(t, f, scope, ps[:1], "R10")
	p, r := create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(100)).ID, payment.Debit, "1.00"))
	wantHold(t, "a debit at once", p, r, payment.HoldReturnRateUnauthorized)
	f.Clock.Advance(59 * day)
	p, r = create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(101)).ID, payment.Debit, "1.00"))
	wantHold(t, "a debit 59 days later", p, r, payment.HoldReturnRateUnauthorized)
	f.Clock.Advance(2 * day)
	p, r = create(t, f, scope, money(f.VerifiedSource(scope, f.Customer(scope), account(102)).ID, payment.Debit, "1.00"))
	wantHold(t, "a debit once the window passed", p, r, "")
}
