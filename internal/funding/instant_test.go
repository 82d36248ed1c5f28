package funding_test

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// instantSource creates an Unverified source at routing with account.
func instantSource(t *testing.T, f *fixture.Fixture, scope tenant.Scope, routing, account string) string {
	t.Helper()
	src, err := f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{
		CustomerID: f.Customer(scope), RoutingNumber: routing, AccountNumber: account,
	})
	if err != nil {
		t.Fatal(err)
	}
	return src.ID
}

// railServer is a rail simulator over HTTP that the fixture's sandbox uses.
func railServer(t *testing.T) (*railsim.Sim, fixture.Option) {
	sim := railsim.New()
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return sim, func(c *config.Config) { c.InstantRailURL = srv.URL }
}

func code(t *testing.T, f *fixture.Fixture, scope tenant.Scope, id string) string {
	t.Helper()
	p, v, err := f.Funding.SandboxVerification(ctx, scope, id)
	if err != nil || p.Amounts != nil || v.Method != funding.MethodInstant {
		t.Fatalf("sandbox verification: %+v, %+v, %v; want an instant code", p, v, err)
	}
	return p.Code
}

func TestInstantVerificationByCode(t *testing.T) {
	t.Parallel()
	sim, opt := railServer(t)
	f := fixture.New(t, opt)
	scope := f.Sandbox("Acme")
	for _, tc := range []struct{ routing, rail, account string }{{"110000000", "rtp", "123456789"}, {"222222226", "fednow", "223456789"}} {
		id := instantSource(t, f, scope, tc.routing, tc.account)
		src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
		if err != nil {
			t.Fatal(err)
		}
		v := src.Verification
		if v.Method != "instant" || v.Rail != tc.rail || v.Status != "pending" || v.ArrivedAt == nil ||
			v.AttemptsRemaining != 3 || !v.ExpiresAt.Equal(fixture.Start.Add(funding.VerificationTTL)) || v.FailureCode != "" {
			t.Errorf("%s: verification = %+v, want instant on %s, pending, arrived, 3 attempts, 10 days", tc.routing, v, tc.rail)
		}
		c := code(t, f, scope, id)
		if !funding.ValidCode(c) {
			t.Errorf("code %q is not FS and 4 letters of the alphabet", c)
		}
		credits := sim.Credits()
		if last := credits[len(credits)-1]; last.Remittance != c || last.AmountCents != 1 || last.RoutingNumber != tc.routing {
			t.Errorf("the rail got %+v, want 1 cent to %s with remittance %s", last, tc.routing, c)
		}
		var method string
		if err := f.SQL().Get(&method, `SELECT data->>'verification_method' FROM events WHERE type = $1 AND data->>'funding_source_id' = $2`,
			event.FundingSourceVerificationPending, id); err != nil || method != "instant" {
			t.Errorf("verification_pending's verification_method = %q (%v), want instant", method, err)
		}
		// Typed without FS, in lower case, with spaces.
		typed := strings.ToLower(c[2:4]) + " " + strings.ToLower(c[4:])
		got, err := f.Funding.VerifyCode(ctx, scope, id, typed)
		if err != nil || got.Status != funding.Verified || got.Verification.Status != "succeeded" {
			t.Fatalf("verify %q: %+v, %v; want Verified", typed, got, err)
		}
	}
}

func TestInstantRejectionFailsAtOnce(t *testing.T) {
	t.Parallel()
	f := fixture.New(t) // the sandbox's in-process rail
	scope := f.Sandbox("Acme")
	for account, reason := range map[string]string{"9900000003": "AC03", "9900000004": "AC04", "9900000006": "AC06"} {
		id := instantSource(t, f, scope, "110000000", account)
		src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
		if err != nil {
			t.Fatal(err)
		}
		if v := src.Verification; v.Method != "instant" || v.Status != "failed" || v.FailureCode != reason || v.AttemptsRemaining != 0 || v.ArrivedAt != nil {
			t.Errorf("%s: verification = %+v, want failed with %s", account, v, reason)
		}
		var n int
		if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = $1 AND data->>'funding_source_id' = $2 AND data->'verification'->>'failure_code' = $3`,
			event.FundingSourceVerificationFailed, id, reason); err != nil || n != 1 {
			t.Errorf("%s: %d verification_failed events with failure_code %s (%v), want 1", account, n, reason, err)
		}
		_, err = f.Funding.VerifyCode(ctx, scope, id, "FSAAAA")
		wantCode(t, err, errs.VerificationAttemptsExceeded)
		// A failed verification can be followed by another.
		if again, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodMicroDeposits); err != nil || again.Verification.Status != "pending" {
			t.Errorf("%s: initiate again: %+v, %v", account, again.Verification, err)
		}
	}
}

func TestInstantWrongCodesUseTheSameAttempts(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "110000000", "123456789")
	if _, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant); err != nil {
		t.Fatal(err)
	}
	right := code(t, f, scope, id)
	_, err := f.Consequences.SimulateDepositReturn(ctx, scope, id, "R03")
	wantCode(t, err, errs.Conflict) // an instant credit has no ACH return
	wrong := "FS2222"
	if wrong == right {
		wrong = "FS3333"
	}
	// The other kind of proof, and a malformed code, count nothing.
	e := wantCode(t, func() error { _, err := f.Funding.VerifyMicroDeposits(ctx, scope, id, [2]int{1, 2}); return err }(), errs.InvalidRequest)
	if e.Param != "amounts" {
		t.Errorf("param = %q, want amounts", e.Param)
	}
	e = wantCode(t, func() error { _, err := f.Funding.VerifyCode(ctx, scope, id, "FS01"); return err }(), errs.InvalidRequest)
	if e.Param != "code" {
		t.Errorf("param = %q, want code", e.Param)
	}
	// Parallel wrong guesses never get more than three attempts.
	var wg sync.WaitGroup
	results := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			_, err := f.Funding.VerifyCode(ctx, scope, id, wrong)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	failed, exceeded := 0, 0
	for err := range results {
		switch errs.CodeOf(err) {
		case errs.VerificationFailed:
			failed++
			if e, _ := errs.As(err); e.Param != "code" {
				t.Errorf("param = %q, want code", e.Param)
			}
		case errs.VerificationAttemptsExceeded:
			exceeded++
		default:
			t.Errorf("unexpected %v", err)
		}
	}
	if failed != 3 || exceeded != 3 {
		t.Errorf("%d verification_failed and %d attempts_exceeded, want 3 and 3", failed, exceeded)
	}
	_, err = f.Funding.VerifyCode(ctx, scope, id, right)
	wantCode(t, err, errs.VerificationAttemptsExceeded)
}

func TestCodeAgainstMicroDepositsIsInvalid(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	e := wantCode(t, func() error { _, err := p.Funding.VerifyCode(ctx, p.scope, p.id, "FSABCD"); return err }(), errs.InvalidRequest)
	if e.Param != "code" {
		t.Errorf("param = %q, want code", e.Param)
	}
	if src, _ := p.Funding.Get(ctx, p.scope, p.id); src.Verification.AttemptsRemaining != 3 {
		t.Errorf("attempts = %d, want 3 (nothing counted)", src.Verification.AttemptsRemaining)
	}
}

func TestInstantUnreachableBank(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "333333334", "123456789")
	_, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
	wantCode(t, err, errs.InstantUnavailable)
	if src, _ := f.Funding.Get(ctx, scope, id); src.Verification != nil {
		t.Errorf("verification = %+v after instant_unavailable, want none", src.Verification)
	}
	src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
	if err != nil {
		t.Fatal(err)
	}
	if v := src.Verification; v.Method != "micro_deposits" || v.FallbackReason != "instant_unavailable" || v.Status != "pending" || v.ExpectedArrivalDate == "" {
		t.Errorf("auto: verification = %+v, want micro-deposits with fallback_reason instant_unavailable", v)
	}
	if p, _, err := f.Funding.SandboxVerification(ctx, scope, id); err != nil || p.Amounts == nil {
		t.Errorf("auto fallback: %+v, %v; want amounts", p, err)
	}
	_, err = f.Funding.InitiateVerificationBy(ctx, scope, id, "sms")
	if e := wantCode(t, err, errs.InvalidRequest); e.Param != "method" {
		t.Errorf("param = %q, want method", e.Param)
	}
}

func TestInstantRailDownConsumesNothing(t *testing.T) {
	t.Parallel()
	sim, opt := railServer(t)
	f := fixture.New(t, opt)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "110000000", "123456789")
	sim.SetDown(true)
	for range funding.MaxInitiations + 1 {
		_, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
		if e := wantCode(t, err, errs.RailUnavailable); e.Details["retry_after"] == nil {
			t.Errorf("rail_unavailable without retry_after: %+v", e)
		}
	}
	if src, _ := f.Funding.Get(ctx, scope, id); src.Verification != nil {
		t.Fatalf("verification = %+v while the rail is down, want none", src.Verification)
	}
	src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
	if err != nil || src.Verification.Method != "micro_deposits" || src.Verification.FallbackReason != "rail_unavailable" {
		t.Fatalf("auto while down: %+v, %v; want micro-deposits with fallback_reason rail_unavailable", src.Verification, err)
	}
	if src.Verification.Seq != 1 {
		t.Errorf("seq = %d, want 1: the refused instant initiations counted nothing", src.Verification.Seq)
	}
}

func TestInstantTimeoutIsRailUnavailable(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	id := instantSource(t, f, scope, "222222226", railsim.AccountTimeout)
	start := time.Now()
	_, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
	wantCode(t, err, errs.RailUnavailable)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a timing-out rail held the initiation %s", d)
	}
	src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto)
	if err != nil || src.Verification.FallbackReason != "rail_unavailable" {
		t.Errorf("auto: %+v, %v; want the fallback", src.Verification, err)
	}
}

// Production instant credits go over the rail, never into NACHA files;
// production without a rail falls back.
func TestProductionInstantIsNeverOriginatedByACH(t *testing.T) {
	t.Parallel()
	sim, opt := railServer(t)
	f := fixture.New(t, opt)
	m := f.Merchant("Acme")
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	prod := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	instant := instantSource(t, f, prod, "021000021", "123456789")
	if src, err := f.Funding.InitiateVerificationBy(ctx, prod, instant, funding.MethodInstant); err != nil || src.Verification.Method != "instant" {
		t.Fatalf("production instant: %+v, %v", src.Verification, err)
	}
	if len(sim.Credits()) != 1 {
		t.Errorf("the rail got %d credits, want 1", len(sim.Credits()))
	}
	micro := instantSource(t, f, prod, "026009593", "223456789")
	if _, err := f.Funding.InitiateVerification(ctx, prod, micro); err != nil {
		t.Fatal(err)
	}
	due, err := f.DB.ACH().DepositsToOriginate(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].SourceID != micro {
		t.Errorf("deposits to originate = %+v, want only the micro-deposits of %s", due, micro)
	}

	bare := fixture.New(t) // no INSTANT_RAIL_URL: production has no rail
	pm := bare.Merchant("Acme")
	if _, err := bare.ActivateProduction(ctx, pm.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: pm.Merchant.ID, Env: tenant.Production}
	id := instantSource(t, bare, scope, "021000021", "123456789")
	_, err = bare.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodInstant)
	wantCode(t, err, errs.InstantUnavailable)
	if src, err := bare.Funding.InitiateVerificationBy(ctx, scope, id, funding.MethodAuto); err != nil || src.Verification.FallbackReason != "instant_unavailable" {
		t.Errorf("production auto without a rail: %+v, %v", src.Verification, err)
	}
}

// TestCodeDescriptionsFollowTheCode: the example every description shows
// is a code, and the words describing the form name the prefix and length.
func TestCodeDescriptionsFollowTheCode(t *testing.T) {
	t.Parallel()
	if !funding.ValidCode(funding.CodeExample) {
		t.Errorf("CodeExample %q is not a valid code", funding.CodeExample)
	}
	if got, want := funding.CodeFormat(), "FS followed by four letters or digits"; got != want {
		t.Errorf("CodeFormat() = %q, want %q", got, want)
	}
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	_, err := f.Funding.VerifyCode(ctx, scope, "fs_unknown", "nope")
	e := wantCode(t, err, errs.InvalidRequest)
	if want := "code must be the deposit's code: FS followed by four letters or digits, like FS7KQ2"; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
}

// TestUnreadableRailAnswerLeavesTheVerificationPending: the rail takes the
// credit and answers with a pacs.002 of a version the service does not
// read. The credit was sent, so the verification is instant and pending
// with rail_status "unknown" (never rail_unavailable, never micro-deposits
// in its place), and the code the customer reads verifies it.
func TestUnreadableRailAnswerLeavesTheVerificationPending(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	railURL, unreadable := th.UnreadableRail(t, sim)
	unreadable.Store(true)
	f := fixture.New(t, func(c *config.Config) { c.InstantRailURL = railURL })
	scope := f.Sandbox("Acme")
	for i, method := range []string{funding.MethodInstant, funding.MethodAuto} {
		id := instantSource(t, f, scope, "110000000", "12345678"+string(rune('0'+i)))
		src, err := f.Funding.InitiateVerificationBy(ctx, scope, id, method)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		v := src.Verification
		if v.Method != funding.MethodInstant || v.Status != funding.DepositPending || v.ArrivedAt != nil || v.FailureCode != "" ||
			v.FallbackReason != "" || v.RailStatus() != funding.RailStatusUnknown || v.AttemptsRemaining != funding.MaxAttempts {
			t.Errorf("%s: verification = %+v (rail_status %q), want instant, pending, rail_status unknown", method, v, v.RailStatus())
		}
		if n := len(sim.Credits()); n != i+1 {
			t.Errorf("%s: the rail has %d credits, want %d: sent once each", method, n, i+1)
		}
		var status string
		if err := f.SQL().Get(&status, `SELECT data->'verification'->>'rail_status' FROM events WHERE type = $1 AND data->>'funding_source_id' = $2`,
			event.FundingSourceVerificationPending, id); err != nil || status != "unknown" {
			t.Errorf("%s: verification_pending's rail_status = %q (%v), want unknown", method, status, err)
		}
		got, err := f.Funding.VerifyCode(ctx, scope, id, code(t, f, scope, id))
		if err != nil || got.Status != funding.Verified {
			t.Errorf("%s: verify with the code the rail carried: %+v, %v", method, got.Verification, err)
		}
	}
}
