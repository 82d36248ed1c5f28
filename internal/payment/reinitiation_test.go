package payment_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// authorizedDebit creates a sandbox debit of amount from src, authorized at
// accepted ("" for none: the sandbox's own mandate).
func authorizedDebit(f *fixture.Fixture, scope tenant.Scope, src, amount, accepted string) (payment.Payment, error) {
	in := payment.Input{SourceID: src, Amount: json.RawMessage(`"` + amount + `"`), Direction: payment.Debit}
	if accepted != "" {
		text := "I authorize Acme to debit my account."
		in.Authorization = &payment.Authorization{AcceptedAt: &accepted, Text: &text}
	}
	return f.Payments.Create(ctx, scope, in)
}

// debitReturned creates a sandbox debit of amount from src and brings it back
// with code at the clock's time; it answers the debit.
func debitReturned(t *testing.T, f *fixture.Fixture, scope tenant.Scope, src, amount, code string) payment.Payment {
	t.Helper()
	p := sandboxDebit(t, f, scope, src, amount)
	if _, err := f.Consequences.SimulateReturn(ctx, scope, p.ID, code); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantReinitiation checks that err is reinitiation_required on
// funding_source_id, naming the retry of the returned debit.
func wantReinitiation(t *testing.T, what string, err error, returnedID string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != errs.ReinitiationRequired || e.Param != "funding_source_id" ||
		!strings.Contains(e.Message, "POST /v2/payments/"+returnedID+"/retry") {
		t.Errorf("%s: %v, want reinitiation_required on funding_source_id naming POST /v2/payments/%s/retry", what, err, returnedID)
	}
}

// TestANewDebitAfterAnR01IsAReinitiation: a debit of 20.00 comes back R01
// at 2026-11-02 15:04:05Z. A new debit of 20.00 from the same source is
// refused as a reinitiation without an authorization, with one accepted
// before the return and with one accepted at its very second; one
// accepted a second after the return is taken, and so is a debit of
// 20.01. On the 180th day after the return's date the same is refused
// again, on the 181st it is taken.
func TestANewDebitAfterAnR01IsAReinitiation(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	orig := debitReturned(t, f, scope, src, "20.00", "R01")
	at := f.Clock.Now().UTC()
	rfc := func(d time.Duration) string { return at.Add(d).Format(time.RFC3339) }

	for _, c := range []struct{ what, accepted string }{
		{"no authorization", ""},
		{"an authorization before the return", rfc(-time.Hour)},
		{"an authorization at the return's second", rfc(0)},
	} {
		_, err := authorizedDebit(f, scope, src, "20.00", c.accepted)
		wantReinitiation(t, c.what, err, orig.ID)
	}
	var stored int
	if err := f.SQL().Get(&stored, `SELECT count(*) FROM payments WHERE funding_source_id = $1`, src); err != nil || stored != 1 {
		t.Errorf("payments of the source = %d, %v; the refused debits store nothing", stored, err)
	}
	f.Clock.Advance(2 * time.Second)
	if _, err := authorizedDebit(f, scope, src, "20.00", rfc(time.Second)); err != nil {
		t.Errorf("a debit authorized after the return: %v", err)
	}
	if _, err := authorizedDebit(f, scope, src, "20.01", ""); err != nil {
		t.Errorf("a debit of another amount: %v", err)
	}

	// 2026-11-02 + 180 days is 2027-05-01 (US Eastern).
	f.Clock.Set(time.Date(2027, 5, 1, 23, 0, 0, 0, time.UTC))
	_, err := authorizedDebit(f, scope, src, "20.00", "")
	wantReinitiation(t, "the 180th day after the return", err, orig.ID)
	f.Clock.Set(time.Date(2027, 5, 2, 12, 0, 0, 0, time.UTC))
	if _, err := authorizedDebit(f, scope, src, "20.00", ""); err != nil {
		t.Errorf("the 181st day after the return: %v", err)
	}
}

// TestOnlyR01AndR09MakeAReinitiation: after an R09 a debit of the same
// amount is a reinitiation; after an R08 (payment stopped) it is a new
// debit; after an R02 the source is removed, which refuses it for that
// reason and not as a reinitiation. A subscription's debits are not
// judged by the rule: its first debit of the same amount after an R01 of
// a one-off debit is created.
func TestOnlyR01AndR09MakeAReinitiation(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	r09 := f.VerifiedSource(scope, cus, "444455556666").ID
	orig := debitReturned(t, f, scope, r09, "30.00", "R09")
	_, err := authorizedDebit(f, scope, r09, "30.00", "")
	wantReinitiation(t, "after R09", err, orig.ID)

	r08 := f.VerifiedSource(scope, cus, "444455557777").ID
	debitReturned(t, f, scope, r08, "30.00", "R08")
	if _, err := authorizedDebit(f, scope, r08, "30.00", ""); err != nil {
		t.Errorf("after R08: %v", err)
	}

	r02 := f.VerifiedSource(scope, cus, "444455558888").ID
	debitReturned(t, f, scope, r02, "30.00", "R02")
	_, err = authorizedDebit(f, scope, r02, "30.00", "")
	if e, ok := errs.As(err); !ok || e.Code != errs.FundingSourceRemoved {
		t.Errorf("after R02: %v, want funding_source_removed", err)
	}

	debitReturned(t, f, scope, r08, "31.00", "R01")
	sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: r08,
		Amount: json.RawMessage(`"31.00"`), Interval: payment.Monthly, StartDate: f.Clock.Now().Format(time.DateOnly)})
	if err != nil {
		t.Fatalf("a subscription of the amount of a debit returned R01: %v", err)
	}
	if _, err := f.Payments.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	var debits int
	if err := f.SQL().Get(&debits, `SELECT count(*) FROM payments WHERE subscription_id = $1`, sub.ID); err != nil || debits != 1 {
		t.Errorf("the subscription's debits = %d, %v; want its first", debits, err)
	}
}
