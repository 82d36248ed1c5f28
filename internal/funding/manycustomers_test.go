package funding_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

const day = 24 * time.Hour

// linkAndRemove links account under a new customer of scope and removes
// the source at once: a link nobody used.
func linkAndRemove(t *testing.T, f *fixture.Fixture, scope tenant.Scope, account string) {
	t.Helper()
	src := f.Source(scope, f.Customer(scope), account)
	if _, err := f.Consequences.Remove(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
}

// paidAndRemoved links account under a new customer of scope (Unverified),
// pays a credit into it, lets the sandbox settle it (processed) and
// removes the source: a customer who paid with the account.
func paidAndRemoved(t *testing.T, f *fixture.Fixture, scope tenant.Scope, account string) {
	t.Helper()
	src := f.Source(scope, f.Customer(scope), account)
	p, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src.ID, Amount: json.RawMessage(`"10.00"`), Direction: payment.Credit})
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Payments.Get(ctx, scope, p.ID); err != nil || got.Status != payment.Processed {
		t.Fatalf("credit = %v, %v; want processed", got.Status, err)
	}
	if _, err := f.Consequences.Remove(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
}

// verifiedAndRemoved links account Verified under a new customer of scope
// and removes the source.
func verifiedAndRemoved(t *testing.T, f *fixture.Fixture, scope tenant.Scope, account string) {
	t.Helper()
	src := f.VerifiedSource(scope, f.Customer(scope), account)
	if _, err := f.Consequences.Remove(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
}

// TestLinksNobodyUsedDoNotTaintAnotherMerchantsCheck: merchant X links an
// account under two customers and removes both, with no money moved and
// nothing verified; merchant Y's link of that account is not
// many_customers (nor anything else), on its creation, its GET and its
// kept answer: a mere link by another merchant shows nowhere.
func TestLinksNobodyUsedDoNotTaintAnotherMerchantsCheck(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	x, y := f.Sandbox("Xerxes"), f.Sandbox("Ypsilon")
	linkAndRemove(t, f, x, "880011223")
	linkAndRemove(t, f, x, "880011223")
	linkAndRemove(t, f, x, "880011223")

	src := f.Source(y, f.Customer(y), "880011223")
	wantCheck(t, "Y's creation", src, "unknown")
	// An account nobody used reads as one with no history: the creation
	// keeps its answer, as for an account never seen.
	if r, _ := kept(t, f, src.ID); r != funding.CheckUnknown {
		t.Errorf("Y's creation kept %q, want unknown (as for a new account)", r)
	}
	wantCheck(t, "Y's GET", get(t, f, y, src.ID), "unknown")
}

// TestOwnCustomersNeverMakeOwnCheckManyCustomers: two of X's customers
// verified the account and one of another merchant's did; X's third
// customer's check counts only the other merchant's one: pass, not
// many_customers. The other merchant's next customer sees X's two.
func TestOwnCustomersNeverMakeOwnCheckManyCustomers(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	x, a := f.Sandbox("Xerxes"), f.Sandbox("Alpha")
	verifiedAndRemoved(t, f, x, "880022334")
	verifiedAndRemoved(t, f, x, "880022334")
	verifiedAndRemoved(t, f, a, "880022334")

	mine := f.Source(x, f.Customer(x), "880022334")
	wantCheck(t, "X's third customer", mine, "pass", "verified_before")
	wantCheck(t, "its GET", get(t, f, x, mine.ID), "pass", "verified_before")
	if _, err := f.Consequences.Remove(ctx, x, mine.ID); err != nil {
		t.Fatal(err)
	}
	theirs := f.Source(a, f.Customer(a), "880022334")
	wantCheck(t, "A's next customer", theirs, "caution", "many_customers", "verified_before")
}

// TestOtherMerchantsCustomersWhoVerifiedOrPaidMakeManyCustomers: one
// customer of A verified the account, one of B paid a credit into it, and
// one of C merely linked it; Y's link is many_customers while both A's
// and B's count: at exactly 90 days after A's verification still, a
// second later no more (B's payment alone is one other customer), and the
// kept answer follows without any new fact.
func TestOtherMerchantsCustomersWhoVerifiedOrPaidMakeManyCustomers(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b, c, y := f.Sandbox("Alpha"), f.Sandbox("Beta"), f.Sandbox("Gamma"), f.Sandbox("Ypsilon")
	const account = "880033445"
	verifiedAt := f.Clock.Now()
	verifiedAndRemoved(t, f, a, account)
	f.Clock.Advance(day)
	linkAndRemove(t, f, c, account)
	one := f.Source(y, f.Customer(y), account)
	wantCheck(t, "one other customer who verified", one, "pass", "verified_before")
	if _, err := f.Consequences.Remove(ctx, y, one.ID); err != nil {
		t.Fatal(err)
	}
	paidAndRemoved(t, f, b, account)
	var paid int
	if err := f.SQL().Get(&paid, `SELECT count(*) FROM account_facts WHERE merchant_id = $1 AND kind = 'paid'`, b.MerchantID); err != nil || paid != 1 {
		t.Fatalf("B's processed credit recorded %d paid facts (%v), want 1", paid, err)
	}

	src := f.Source(y, f.Customer(y), account)
	wantCheck(t, "two other merchants' customers", src, "caution", "many_customers", "verified_before")

	f.Clock.Set(verifiedAt.Add(90 * day))
	wantCheck(t, "90 days after A's verification", get(t, f, y, src.ID), "caution", "many_customers", "verified_before")
	f.Clock.Set(verifiedAt.Add(90*day + time.Second))
	wantCheck(t, "a second later", get(t, f, y, src.ID), "pass", "verified_before")
	f.Clock.Set(verifiedAt.Add(91 * day))
	wantCheck(t, "91 days after", get(t, f, y, src.ID), "pass", "verified_before")
}
