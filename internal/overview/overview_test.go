package overview_test

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/overview"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestStatsCoverEveryDayAndEveryMethod: with nothing yet, the overview
// still has 30 days, oldest first and ending today, and every funnel.
func TestStatsCoverEveryDayAndEveryMethod(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	st, err := f.Overview.Stats(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	today := f.Clock.Now().UTC().Truncate(24 * time.Hour)
	if len(st.Days) != overview.Days || !st.Days[len(st.Days)-1].Date.Equal(today) || !st.Days[0].Date.Equal(today.AddDate(0, 0, -29)) {
		t.Fatalf("days: %d from %v to %v", len(st.Days), st.Days[0].Date, st.Days[len(st.Days)-1].Date)
	}
	for _, d := range st.Days {
		if d.HasWebhook || d.HasDebits {
			t.Errorf("%v has data", d.Date)
		}
	}
	if len(st.Funnels) != 3 || st.Funnels[0].Method != overview.MicroDeposits || st.Funnels[1].Method != overview.Instant ||
		st.Funnels[2].Method != overview.AtCreation {
		t.Errorf("funnels: %+v", st.Funnels)
	}
	// A source verified at once (third-party path) and one only created.
	cus := f.Customer(scope)
	f.VerifiedSource(scope, cus, "123456789")
	f.Source(scope, cus, "987654321")
	st, err = f.Overview.Stats(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if md, in, at := st.Funnels[0], st.Funnels[1], st.Funnels[2]; md.Created != 1 || md.Initiated != 0 || md.Verified != 0 ||
		in.Created != 0 || at.Created != 1 || at.Initiated != 1 || at.Verified != 1 || at.MedianToVerify != 0 {
		t.Errorf("funnels: %+v", st.Funnels)
	}
}

// TestFunnelsByRecordedMethod: each source counts under the method its
// verification recorded (an "auto" initiation under the one it took, a
// source not yet initiated under micro-deposits, the default), or under
// "at creation" when it was Verified when created; medians run from
// creation to verified.
func TestFunnelsByRecordedMethod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixture.New(t) // the sandbox's in-process rail
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	create := func(routing, account string) string {
		t.Helper()
		src, err := f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: cus, RoutingNumber: routing, AccountNumber: account})
		if err != nil {
			t.Fatal(err)
		}
		return src.ID
	}
	initiate := func(id, method, wantMethod, wantStatus string) {
		t.Helper()
		src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, method)
		if err != nil {
			t.Fatal(err)
		}
		if v := src.Verification; v.Method != wantMethod || v.Status != wantStatus {
			t.Fatalf("%s by %s: verification %+v, want %s %s", id, method, v, wantMethod, wantStatus)
		}
	}
	wantVerified := func(src funding.Source, err error) {
		t.Helper()
		if err != nil || src.Status != funding.Verified {
			t.Fatalf("verify: %v, %v", src.Status, err)
		}
	}

	// Micro-deposits: one verified three days on, one pending, one only
	// created, and one "auto" to a bank no instant rail reaches.
	mdVerified, mdPending := create(fixture.RoutingNumber, "100000001"), create(fixture.RoutingNumber, "100000002")
	create(fixture.RoutingNumber, "100000003")
	auto := create("333333334", "100000004")
	initiate(mdVerified, funding.MethodMicroDeposits, "micro_deposits", "pending")
	initiate(mdPending, funding.MethodMicroDeposits, "micro_deposits", "pending")
	initiate(auto, funding.MethodAuto, "micro_deposits", "pending")
	// Instant: two verified after 90 s and 150 s, one the bank refused.
	inst1, inst2, refused := create("110000000", "200000001"), create("222222226", "200000002"), create("110000000", railsim.AccountClosed)
	for _, id := range []string{inst1, inst2} {
		initiate(id, funding.MethodInstant, "instant", "pending")
	}
	initiate(refused, funding.MethodInstant, "instant", "failed")
	// At creation: two.
	f.VerifiedSource(scope, cus, "300000001")
	f.VerifiedSource(scope, cus, "300000002")

	code := func(id string) string {
		t.Helper()
		p, _, err := f.Funding.SandboxVerification(ctx, scope, id)
		if err != nil || p.Code == "" {
			t.Fatalf("sandbox code: %+v, %v", p, err)
		}
		return p.Code
	}
	f.Clock.Advance(90 * time.Second)
	wantVerified(f.Funding.VerifyCode(ctx, scope, inst1, code(inst1)))
	f.Clock.Advance(60 * time.Second)
	wantVerified(f.Funding.VerifyCode(ctx, scope, inst2, code(inst2)))
	f.Clock.Advance(72*time.Hour - 150*time.Second)
	amounts, _, err := f.Funding.SandboxAmounts(ctx, scope, mdVerified)
	if err != nil {
		t.Fatal(err)
	}
	wantVerified(f.Funding.VerifyMicroDeposits(ctx, scope, mdVerified, amounts))

	st, err := f.Overview.Stats(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	want := []overview.Funnel{
		{Method: overview.MicroDeposits, Created: 4, Initiated: 3, Verified: 1, MedianToVerify: 72 * time.Hour},
		{Method: overview.Instant, Created: 3, Initiated: 3, Verified: 2, MedianToVerify: 120 * time.Second},
		{Method: overview.AtCreation, Created: 2, Initiated: 2, Verified: 2, MedianToVerify: 0},
	}
	if len(st.Funnels) != len(want) {
		t.Fatalf("funnels: %+v", st.Funnels)
	}
	for i, w := range want {
		got := st.Funnels[i]
		// The median comes back through float seconds: within a millisecond.
		if d := got.MedianToVerify - w.MedianToVerify; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: median %v, want %v", w.Method, got.MedianToVerify, w.MedianToVerify)
		}
		got.MedianToVerify = w.MedianToVerify
		if got != w {
			t.Errorf("funnel %d: %+v, want %+v", i, got, w)
		}
	}
}
