package payment_test

import (
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// committed creates in as a request under an Idempotency-Key does: the
// payment and its credit's intent commit, and nothing is sent yet.
func (r *instantRig) committed(in payment.Input) payment.Payment {
	r.T.Helper()
	p, err := r.Payments.Create(ctx, r.scope, in)
	if err != nil || p.PendingInstant == nil {
		r.T.Fatalf("create %+v: %v (intent %v)", in, err, p.PendingInstant)
	}
	return p
}

func (r *instantRig) deliver(p payment.Payment) payment.Payment {
	r.T.Helper()
	got, err := r.Consequences.DeliverInstant(ctx, *p.PendingInstant)
	if err != nil {
		r.T.Fatalf("deliver %s: %v", p.ID, err)
	}
	return got
}

// TestInstantCreditsAreJudgedAsTheyLeave: what changed between an instant
// credit's creation and its departure decides, as it does for an ACH
// entry claimed for a file. Nothing that may not leave reaches the rail.
func TestInstantCreditsAreJudgedAsTheyLeave(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	by := audit.Actor{Type: "operator", ID: "test"}
	setInstant := func(on bool) {
		if _, err := r.Originators.Set(ctx, r.scope, orig.Change{Instant: &on}, by); err != nil {
			t.Fatal(err)
		}
	}
	want := func(name string, p payment.Payment, status payment.Status, cancel, rail, fallback string) {
		t.Helper()
		got, err := r.Payments.Get(ctx, r.scope, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != status || deref(got.CancelReason) != cancel || got.Rail != rail || deref(got.FallbackReason) != fallback {
			t.Errorf("%s: %s (cancel %q) on %s (fallback %q); want %s (cancel %q) on %s (fallback %q)", name,
				got.Status, deref(got.CancelReason), got.Rail, deref(got.FallbackReason), status, cancel, rail, fallback)
		}
	}
	src := r.source(rtpBank, "123456789")

	// The originator's switch turned off after the creation: "instant" is
	// canceled, "auto" goes over ACH.
	instant, auto := r.committed(credit(src, "5.00", payment.MethodInstant)), r.committed(credit(src, "6.00", payment.MethodAuto))
	setInstant(false)
	r.deliver(instant)
	r.deliver(auto)
	want("instant, switch off", instant, payment.Voided, payment.CancelInstantOff, payment.RailRTP, "")
	want("auto, switch off", auto, payment.Pending, "", payment.RailACH, payment.FallbackInstantOff)
	if n := r.events(instant.ID, "payment.canceled"); n != 1 {
		t.Errorf("%d payment.canceled events of the canceled credit, want 1", n)
	}
	setInstant(true)

	// Canceled, or its source removed, before it left.
	canceled := r.committed(credit(src, "7.00", payment.MethodInstant))
	if _, err := r.Payments.Cancel(ctx, r.scope, canceled.ID); err != nil {
		t.Fatalf("cancel before it left: %v", err)
	}
	r.deliver(canceled)
	want("canceled", canceled, payment.Voided, payment.CancelRequested, payment.RailRTP, "")
	gone := r.source(rtpBank, "123456780")
	removed := r.committed(credit(gone, "8.00", payment.MethodInstant))
	if _, err := r.Consequences.Remove(ctx, r.scope, gone); err != nil {
		t.Fatalf("remove the source: %v", err)
	}
	r.deliver(removed)
	want("source removed", removed, payment.Voided, payment.CancelSourceRemoved, payment.RailRTP, "")
	if n := len(r.sim.Credits()); n != 0 {
		t.Fatalf("the rail received %d credits, want none", n)
	}
	if n := r.count(`SELECT count(*) FROM instant_credits WHERE state <> 'queued'`); n != 0 {
		t.Errorf("%d instant credits left their queue", n)
	}

	// Held, released while the rail is down: the rail took nothing, so
	// it is still unsent (queued, no sent_at, not "unknown") and leaves,
	// judged again, once the rail is back.
	held, err := r.create(credit(src, "3000.00", payment.MethodInstant))
	if err != nil || held.Status != payment.Held {
		t.Fatalf("a credit the rules hold: %s, %v", held.Status, err)
	}
	if _, err := r.Payments.Release(ctx, held.ID, "checked with the merchant", by); err != nil {
		t.Fatal(err)
	}
	r.sim.SetDown(true)
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 1 {
		t.Fatalf("resolve with the rail down: %d, %v", n, err)
	}
	got, err := r.Payments.Get(ctx, r.scope, held.ID)
	if err != nil || got.Status != payment.Pending || deref(got.RailStatus) != payment.RailQueued || got.SentAt != nil {
		t.Errorf("released, rail down: %s %q sent_at %v (%v); want pending, queued, not sent", got.Status, deref(got.RailStatus), got.SentAt, err)
	}
	r.sim.SetDown(false)
	r.Clock.Advance(time.Minute)
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 1 {
		t.Fatalf("resolve with the rail back: %d, %v", n, err)
	}
	got, err = r.Payments.Get(ctx, r.scope, held.ID)
	if err != nil || got.Status != payment.Processed || got.SentAt == nil || len(r.sim.Credits()) != 1 {
		t.Errorf("rail back: %s sent_at %v, %d credits (%v); want processed, sent, one credit", got.Status, got.SentAt, len(r.sim.Credits()), err)
	}
}

// TestProductionInstantCreditsAreScreenedAsTheyLeave: a production
// customer screened clear whose name the current list matches when its
// instant credit is to leave (here: renamed behind the service's back,
// as a list update would find it), or whose account holder's name does,
// is marked, and the credit held instead of sent, whether it leaves at
// once or after a review released it; cleared, it leaves once.
func TestProductionInstantCreditsAreScreenedAsTheyLeave(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	by := audit.Actor{Type: "operator", ID: "test"}
	m := r.Merchant("Live")
	if _, err := r.ActivateProduction(ctx, m.Merchant.ID, by); err != nil {
		t.Fatal(err)
	}
	r.scope.MerchantID, r.scope.Env = m.Merchant.ID, "production"
	on := true
	if _, err := r.Originators.Set(ctx, r.scope, orig.Change{Instant: &on}, by); err != nil {
		t.Fatal(err)
	}
	person := func(first, last string) string {
		c, err := r.Customers.Create(ctx, r.scope, customer.Input{FirstName: first, LastName: last, Email: first + "@example.com"})
		if err != nil || c.Screening.Status != sanctions.Clear {
			t.Fatalf("create %s %s: %+v, %v", first, last, c.Screening, err)
		}
		return c.ID
	}
	source := func(customerID, account string) string {
		src, err := r.Funding.CreateOnDemand(ctx, funding.Caller{Scope: r.scope, OnDemand: true, ThirdPartyVerification: true},
			funding.Input{CustomerID: customerID, RoutingNumber: "021000021", AccountNumber: account})
		if err != nil {
			t.Fatal(err)
		}
		return src.ID
	}
	heldForSanctions := func(name, id string) {
		t.Helper()
		got, err := r.Payments.Get(ctx, r.scope, id)
		if err != nil || got.Status != payment.Held || deref(got.HoldReason) != payment.HoldSanctions || deref(got.RailStatus) != payment.RailQueued {
			t.Errorf("%s: %s hold %q rail_status %q (%v); want held for sanctions, queued", name, got.Status, deref(got.HoldReason), deref(got.RailStatus), err)
		}
	}

	// The customer matches as the credit leaves.
	ilya := person("Ilya", "Orlov")
	p := r.committed(credit(source(ilya, "123456789"), "10.00", payment.MethodInstant))
	if _, err := r.SQL().Exec(`UPDATE customers SET first_name = 'Ilya Petrovich', last_name = 'Volkanov' WHERE id = $1`, ilya); err != nil {
		t.Fatal(err)
	}
	if got := r.deliver(p); got.Status != payment.Held {
		t.Errorf("delivered to a listed name: %s, want held", got.Status)
	}
	heldForSanctions("listed customer", p.ID)
	if c, _ := r.Customers.Get(ctx, r.scope, ilya); c.Screening.Status != sanctions.PotentialMatch {
		t.Errorf("customer after the departure check: %+v, want potential_match", c.Screening)
	}

	// The account holder's name (a notification of change corrected it)
	// matches as a released credit leaves.
	jane := person("Jane", "Doe")
	janeSrc := source(jane, "123456780")
	held, err := r.Payments.Create(ctx, r.scope, credit(janeSrc, "3000.00", payment.MethodInstant))
	if err != nil || held.Status != payment.Held {
		t.Fatalf("a credit the rules hold: %s, %v", held.Status, err)
	}
	if _, err := r.SQL().Exec(`UPDATE funding_sources SET receiver_name = 'Mirela Drakovic' WHERE id = $1`, janeSrc); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Payments.Release(ctx, held.ID, "checked with the merchant", by); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Consequences.ResolveInstant(ctx); err != nil {
		t.Fatal(err)
	}
	heldForSanctions("listed account holder", held.ID)
	if n := len(r.sim.Credits()); n != 0 {
		t.Fatalf("the rail received %d credits to listed names, want none", n)
	}

	// Cleared by an operator, the first leaves, once.
	if _, _, err := r.Payments.ClearScreening(ctx, ilya, "not the listed person", audit.Operator("r")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Consequences.ResolveInstant(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Payments.Get(ctx, r.scope, p.ID)
	if err != nil || got.Status != payment.Processed || len(r.sim.Credits()) != 1 {
		t.Errorf("cleared: %s, %d credits (%v); want processed, one credit", got.Status, len(r.sim.Credits()), err)
	}
}

// TestAutoCreditsRacingForTheLastInstantRoom: "auto" credits that all
// find room under the daily instant limit before any is written take it
// in turns; those the room ran out for go over ACH, and none is refused.
func TestAutoCreditsRacingForTheLastInstantRoom(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	daily := "30.00"
	if _, err := r.Originators.Set(ctx, r.scope, orig.Change{DailyInstantCredit: &daily}, audit.Actor{Type: "operator", ID: "test"}); err != nil {
		t.Fatal(err)
	}
	src := r.source(rtpBank, "123456789")
	const n = 8
	got := make([]payment.Payment, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = r.create(credit(src, "10.00", payment.MethodAuto)) })
	}
	wg.Wait()
	instant := 0
	for i, p := range got {
		switch {
		case errs[i] != nil:
			t.Errorf("auto credit %d refused: %v", i, errs[i])
		case p.Rail == payment.RailRTP:
			instant++
		case p.Rail != payment.RailACH || deref(p.FallbackReason) != payment.FallbackOverRailLimit:
			t.Errorf("auto credit %d: on %s, fallback %q; want rtp, or ach over the limit", i, p.Rail, deref(p.FallbackReason))
		}
	}
	if instant != 3 || len(r.sim.Credits()) != 3 {
		t.Errorf("%d credits went instant, the rail received %d; want the 3 the daily limit has room for", instant, len(r.sim.Credits()))
	}
}
