package funding_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// While a credit is being sent (the rail holds it here), its intent is
// committed and counts as an open verification: a second initiation is
// verification_pending, nothing else is stored, and one credit reaches
// the rail.
func TestASecondInitiationWhileSendingIsRefused(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	sh := sim.Handler()
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		sh.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f := fixture.New(t, func(c *config.Config) { c.InstantRailURL = srv.URL })
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "110000000", "123456789")

	type result struct {
		src funding.Source
		err error
	}
	first := make(chan result, 1)
	go func() {
		src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
		first <- result{src, err}
	}()
	<-arrived
	for _, method := range []string{funding.MethodInstant, funding.MethodAuto, funding.MethodMicroDeposits} {
		_, err := f.Funding.InitiateVerificationBy(ctx, scope, id, method)
		wantCode(t, err, errs.VerificationPending)
	}
	if src, _ := f.Funding.Get(ctx, scope, id); src.Verification != nil {
		t.Errorf("verification while the credit is being sent = %+v, want none yet", src.Verification)
	}
	close(release)
	r := <-first
	if r.err != nil || r.src.Verification.Method != funding.MethodInstant || r.src.Verification.RailStatus() != funding.RailStatusAccepted {
		t.Fatalf("the first initiation: %+v, %v", r.src.Verification, r.err)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail recorded %d credits, want 1", n)
	}
	var intents int
	if err := f.SQL().Get(&intents, `SELECT count(*) FROM verification_intents`); err != nil || intents != 0 {
		t.Errorf("intents left = %d (%v), want none", intents, err)
	}
}

// A sender that dies after committing its intent leaves it until its
// lease runs out: the source refuses a new initiation, and then the
// credit counts as sent with its rail status unknown (it may be on the
// statement): its code verifies. A late answer changes nothing.
func TestAnIntentWhoseSenderDiedResolvesAsUnknown(t *testing.T) {
	t.Parallel()
	sim, opt := railServer(t)
	f := fixture.New(t, opt)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "110000000", "123456789")
	// A service bound to a transaction writes the intent and sends nothing.
	var pending *funding.PendingVerification
	err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		src, err := f.Funding.On(tx).InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
		pending = src.PendingVerification
		if err == nil && (src.Verification == nil || src.Verification.RailStatus() != funding.RailStatusUnknown) {
			t.Errorf("the bound initiation's verification = %+v, want instant, rail status unknown", src.Verification)
		}
		return err
	})
	if err != nil || pending == nil {
		t.Fatalf("bound initiation: %v, pending %v", err, pending)
	}
	_, err = f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
	wantCode(t, err, errs.VerificationPending)
	_, err = f.Funding.VerifyCode(ctx, scope, id, "FS2222")
	wantCode(t, err, errs.VerificationNotInitiated)
	if n, err := f.Funding.ExpireDue(ctx); err != nil || n != 0 {
		t.Fatalf("sweep within the lease: %d, %v", n, err)
	}
	if src, _ := f.Funding.Get(ctx, scope, id); src.Verification != nil {
		t.Fatalf("verification within the lease = %+v, want none", src.Verification)
	}

	f.Clock.Advance(31 * time.Second)
	if _, err := f.Funding.ExpireDue(ctx); err != nil {
		t.Fatal(err)
	}
	src, err := f.Funding.Get(ctx, scope, id)
	if err != nil || src.Verification == nil || src.Verification.Method != funding.MethodInstant ||
		src.Verification.Status != funding.DepositPending || src.Verification.RailStatus() != funding.RailStatusUnknown {
		t.Fatalf("after the lease ran out: %+v, %v; want pending instant, rail status unknown", src.Verification, err)
	}
	_, err = f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
	wantCode(t, err, errs.VerificationPending)

	late, err := f.Funding.DeliverVerification(ctx, *pending)
	if err != nil || late.Verification.RailStatus() != funding.RailStatusUnknown || late.Verification.Seq != 1 {
		t.Fatalf("a late sender: %+v, %v; want the resolved verification unchanged", late.Verification, err)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail recorded %d credits, want 1", n)
	}
	ok, err := f.Funding.VerifyCode(ctx, scope, id, code(t, f, scope, id))
	if err != nil || ok.Status != funding.Verified {
		t.Fatalf("the credit's code: %+v, %v; want Verified", ok.Status, err)
	}
}

// The next initiation resolves a dead sender's intent itself, without
// the sweep: as an open verification, so it is refused.
func TestAStaleIntentIsAnOpenVerification(t *testing.T) {
	t.Parallel()
	_, opt := railServer(t)
	f := fixture.New(t, opt)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "110000000", "123456789")
	err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.On(tx).InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(time.Minute)
	_, err = f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodMicroDeposits)
	e := wantCode(t, err, errs.VerificationPending)
	if e.Details["attempts_remaining"] != funding.MaxAttempts {
		t.Errorf("attempts_remaining = %v", e.Details["attempts_remaining"])
	}
	src, _ := f.Funding.Get(ctx, scope, id)
	if src.Verification == nil || src.Verification.Method != funding.MethodInstant || src.Verification.RailStatus() != funding.RailStatusUnknown {
		t.Fatalf("verification = %+v, want the resolved instant one", src.Verification)
	}
}
