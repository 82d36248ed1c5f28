package payment_test

import (
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/wiring"
)

// Sandbox banks of the instant directory.
const (
	rtpBank    = "110000000"
	fednowBank = "222222226"
	noRailBank = "333333334"
)

// instantRig is a fixture whose rail is the simulator over HTTP, with
// FedNow's limit lowered to 50.00 so its edge is within a payment's.
type instantRig struct {
	*fixture.Fixture
	sim   *railsim.Sim
	scope tenant.Scope
}

func newInstantRig(t *testing.T) *instantRig {
	t.Helper()
	sim := railsim.New()
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	opt := func(c *config.Config) {
		c.InstantRailURL = srv.URL
		c.InstantRailLimits = map[string]int64{"rtp": 1_000_000_000, "fednow": 5000}
	}
	f := fixture.New(t, opt)
	return &instantRig{Fixture: f, sim: sim, scope: f.Sandbox("Payouts")}
}

// source is a new Unverified source at routing with account.
func (r *instantRig) source(routing, account string) string {
	r.T.Helper()
	src, err := r.Funding.CreateForMicroDeposits(ctx, r.scope, funding.Input{
		CustomerID: r.Customer(r.scope), RoutingNumber: routing, AccountNumber: account})
	if err != nil {
		r.T.Fatal(err)
	}
	return src.ID
}

// create creates in and sends its instant credit, as the API does once
// the creation committed.
func (r *instantRig) create(in payment.Input) (payment.Payment, error) {
	p, err := r.Payments.Create(ctx, r.scope, in)
	if err != nil || p.PendingInstant == nil {
		return p, err
	}
	return r.Consequences.DeliverInstant(ctx, *p.PendingInstant)
}

func credit(sourceID, amount, method string) payment.Input {
	return payment.Input{SourceID: sourceID, Amount: json.RawMessage(`"` + amount + `"`), Direction: payment.Credit, Method: &method}
}

// count is a count(*) of the rig's database.
func (r *instantRig) count(query string, args ...any) int {
	r.T.Helper()
	var n int
	if err := r.SQL().Get(&n, query, args...); err != nil {
		r.T.Fatal(err)
	}
	return n
}

func (r *instantRig) events(paymentID, typ string) int {
	return r.count(`SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2`, typ, paymentID)
}

func TestInstantCreditOutcomes(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	for _, c := range []struct {
		account, bank, rail string
		status              payment.Status
		code                string
	}{
		{"123456789", rtpBank, payment.RailRTP, payment.Processed, ""},
		{"123456780", fednowBank, payment.RailFedNow, payment.Processed, ""},
		{railsim.AccountNoSuchAccount, rtpBank, payment.RailRTP, payment.Failed, "AC03"},
		{railsim.AccountClosed, rtpBank, payment.RailRTP, payment.Failed, "AC04"},
		{railsim.AccountBlocked, fednowBank, payment.RailFedNow, payment.Failed, "AC06"},
	} {
		src := r.source(c.bank, c.account)
		p, err := r.create(credit(src, "25.00", payment.MethodInstant))
		if err != nil {
			t.Fatalf("%s: %v", c.account, err)
		}
		if p.Status != c.status || p.Rail != c.rail || p.Method != payment.MethodInstant || p.FallbackReason != nil {
			t.Errorf("%s: %s on %s by %s (fallback %v), want %s on %s by instant", c.account, p.Status, p.Rail, p.Method, p.FallbackReason, c.status, c.rail)
		}
		if got := deref(p.FailureCode); got != c.code {
			t.Errorf("%s: failure_code %q, want %q", c.account, got, c.code)
		}
		want, typ := payment.RailAccepted, "payment.success"
		if c.code != "" {
			want, typ = payment.RailRejected, "payment.failed"
		}
		if deref(p.RailStatus) != want || r.events(p.ID, typ) != 1 {
			t.Errorf("%s: rail_status %q and %d %s events, want %q and one", c.account, deref(p.RailStatus), r.events(p.ID, typ), typ, want)
		}
		// An accepted credit is a use of the account, as a settled ACH
		// payment is (other merchants' account checks count it).
		paid := 0
		if c.code == "" {
			paid = 1
		}
		if n := r.count(`SELECT count(*) FROM account_facts WHERE kind = $1 AND funding_source_id = $2`, funding.FactPaid, src); n != paid {
			t.Errorf("%s: %d paid facts of its account, want %d", c.account, n, paid)
		}
		if p.SentAt == nil || p.ReturnWindowClosesAt != nil {
			t.Errorf("%s: sent_at %v, return window %v; want sent and no return window", c.account, p.SentAt, p.ReturnWindowClosesAt)
		}
	}
	if n := len(r.sim.Credits()); n != 5 {
		t.Errorf("the rail received %d credits, want 5", n)
	}
	// Neither the sandbox's settlement nor anything else touches them.
	r.Clock.Advance(time.Hour)
	if _, err := r.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := r.count(`SELECT count(*) FROM events WHERE type IN ('payment.success', 'payment.failed')`); n != 5 {
		t.Errorf("%d settlement events after the sandbox's delay, want 5", n)
	}
}

func TestInstantIsFinal(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	p, err := r.create(credit(r.source(rtpBank, "123456789"), "10.00", payment.MethodInstant))
	if err != nil || p.Status != payment.Processed {
		t.Fatalf("%v %v", p.Status, err)
	}
	if _, err := r.Payments.Reverse(ctx, r.scope, p.ID, payment.ReverseInput{Reason: "duplicate"}); errs.CodeOf(err) != errs.NotReversible {
		t.Errorf("reverse: %v, want not_reversible", err)
	}
	if _, err := r.Consequences.SimulateReturn(ctx, r.scope, p.ID, "R01"); errs.CodeOf(err) != errs.NotReversible {
		t.Errorf("return: %v, want not_reversible", err)
	}
	src := r.source(rtpBank, "123456781")
	d := credit(src, "1.00", payment.MethodInstant)
	d.Direction = payment.Debit
	if _, err := r.Payments.Create(ctx, r.scope, d); errs.CodeOf(err) != errs.InvalidRequest {
		t.Errorf("instant debit: %v, want invalid_request", err)
	}
	d = credit(src, "1.00", "wire")
	if _, err := r.Payments.Create(ctx, r.scope, d); errs.CodeOf(err) != errs.InvalidRequest {
		t.Errorf("method wire: %v, want invalid_request", err)
	}
	// same_day is same_day: true.
	sd, err := r.create(credit(src, "1.00", payment.MethodSameDay))
	if err != nil || !sd.SameDay || sd.Method != payment.MethodSameDay || sd.Rail != payment.RailACH {
		t.Errorf("same_day: %+v %v", sd, err)
	}
	list, _, err := r.Payments.Search(ctx, r.scope, payment.Filter{Rail: payment.RailRTP}, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Errorf("?rail=rtp: %d payments, %v", len(list), err)
	}
	list, _, err = r.Payments.Search(ctx, r.scope, payment.Filter{Method: payment.MethodSameDay}, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != sd.ID {
		t.Errorf("?method=same_day: %d payments, %v", len(list), err)
	}
}

// TestInstantRefusalsAndFallbacks holds "instant" and "auto" to each
// edge: "instant" refuses with nothing written where "auto" falls back.
func TestInstantRefusalsAndFallbacks(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	noRail := r.source(noRailBank, "123456781")
	fednow := r.source(fednowBank, "123456782")
	rtp := r.source(rtpBank, "123456783")

	// The rail's limit and one cent over.
	if p, err := r.create(credit(fednow, "50.00", payment.MethodInstant)); err != nil || p.Rail != payment.RailFedNow {
		t.Errorf("at FedNow's limit: %v %v", p.Rail, err)
	}
	before := r.count(`SELECT count(*) FROM payments`)
	refuse := func(name string, in payment.Input, code errs.Code, limit string) {
		t.Helper()
		_, err := r.create(in)
		if errs.CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", name, err, code)
		}
		if e, ok := errs.As(err); ok && limit != "" && e.Details["limit"] != limit {
			t.Errorf("%s: limit %v, want %s", name, e.Details["limit"], limit)
		}
		if n := r.count(`SELECT count(*) FROM payments`); n != before {
			t.Errorf("%s: %d payments written", name, n-before)
		}
	}
	fallback := func(name string, in payment.Input, reason string, sameDay bool) {
		t.Helper()
		p, err := r.create(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Rail != payment.RailACH || p.Method != payment.MethodAuto || deref(p.FallbackReason) != reason || p.SameDay != sameDay {
			t.Errorf("%s: on %s, fallback %q, same_day %t; want ach, %q, %t", name, p.Rail, deref(p.FallbackReason), p.SameDay, reason, sameDay)
		}
		got, err := r.Payments.Get(ctx, r.scope, p.ID)
		if err != nil || deref(got.FallbackReason) != reason || got.Method != payment.MethodAuto {
			t.Errorf("%s: stored %+v %v", name, got, err)
		}
		before++
	}
	refuse("bank on no rail", credit(noRail, "5.00", payment.MethodInstant), errs.InstantUnavailable, "")
	refuse("one cent over FedNow's limit", credit(fednow, "50.01", payment.MethodInstant), errs.LimitExceeded, payment.LimitRail)
	fallback("auto, bank on no rail", credit(noRail, "5.00", payment.MethodAuto), payment.FallbackInstantUnavailable, true)
	fallback("auto, one cent over", credit(fednow, "50.01", payment.MethodAuto), payment.FallbackOverRailLimit, true)
	if p, err := r.create(credit(fednow, "50.00", payment.MethodAuto)); err != nil || p.Rail != payment.RailFedNow || p.FallbackReason != nil {
		t.Errorf("auto at the limit: %v %v %v", p.Rail, p.FallbackReason, err)
	}
	before++

	// The rail down: "instant" has nothing written and gives back the
	// day's usage; "auto" goes ACH.
	usage := func() string {
		v, err := r.Originators.Get(ctx, r.scope)
		if err != nil {
			t.Fatal(err)
		}
		return v.Usage.Credits
	}
	was := usage()
	r.sim.SetDown(true)
	refuse("rail down", credit(rtp, "5.00", payment.MethodInstant), errs.RailUnavailable, "")
	if _, err := r.create(credit(rtp, "5.00", payment.MethodInstant)); err != nil {
		if e, _ := errs.As(err); e == nil || e.Details["retry_after"] == "" {
			t.Errorf("rail_unavailable without retry_after: %v", err)
		}
	}
	if got := usage(); got != was {
		t.Errorf("credit usage %s after refusals, was %s", got, was)
	}
	if n := r.count(`SELECT count(*) FROM instant_credits`); n != 2 {
		t.Errorf("%d instant credits kept, want the 2 sent", n)
	}
	fallback("auto, rail down", credit(rtp, "5.00", payment.MethodAuto), payment.FallbackRailUnavailable, true)
	r.sim.SetDown(false)

	// The originator's switch off.
	off := false
	if _, err := r.Originators.Set(ctx, r.scope, orig.Change{Instant: &off}, audit.Actor{Type: "operator", ID: "test"}); err != nil {
		t.Fatal(err)
	}
	refuse("originator instant off", credit(rtp, "5.00", payment.MethodInstant), errs.PermissionDenied, "")
	fallback("auto, originator instant off", credit(rtp, "5.00", payment.MethodAuto), payment.FallbackInstantOff, true)

	// The same-day cut-off minute: 15:44 Eastern still settles today,
	// 15:45 does not.
	day := calendar.DateOf(r.Clock.Now())
	r.Clock.Set(time.Date(day.Year(), day.Month(), day.Day(), 15, 44, 59, 0, calendar.Eastern))
	fallback("auto before the cut-off", credit(rtp, "5.00", payment.MethodAuto), payment.FallbackInstantOff, true)
	r.Clock.Set(time.Date(day.Year(), day.Month(), day.Day(), 15, 45, 0, 0, calendar.Eastern))
	fallback("auto at the cut-off", credit(rtp, "5.00", payment.MethodAuto), payment.FallbackInstantOff, false)
}

func TestInstantOriginatorLimits(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	perEntry, daily := "20.00", "30.00"
	by := audit.Actor{Type: "operator", ID: "test"}
	if _, err := r.Originators.Set(ctx, r.scope, orig.Change{PerEntryInstantCredit: &perEntry, DailyInstantCredit: &daily}, by); err != nil {
		t.Fatal(err)
	}
	src := r.source(rtpBank, "123456789")
	if _, err := r.create(credit(src, "20.00", payment.MethodInstant)); err != nil {
		t.Fatalf("at the per-entry limit: %v", err)
	}
	// written fails the test if the refusal named left a payment or an
	// instant credit behind.
	payments, credits := r.count(`SELECT count(*) FROM payments`), r.count(`SELECT count(*) FROM instant_credits`)
	written := func(name string) {
		t.Helper()
		if p, c := r.count(`SELECT count(*) FROM payments`), r.count(`SELECT count(*) FROM instant_credits`); p != payments || c != credits {
			t.Errorf("%s: %d payments and %d instant credits written", name, p-payments, c-credits)
		}
	}
	_, err := r.create(credit(src, "20.01", payment.MethodInstant))
	if e, ok := errs.As(err); !ok || e.Code != errs.LimitExceeded || e.Details["limit"] != payment.LimitPerEntryInstantCredit {
		t.Errorf("over the per-entry limit: %v", err)
	}
	written("over the per-entry limit")
	if _, err := r.create(credit(src, "10.00", payment.MethodInstant)); err != nil {
		t.Fatalf("up to the daily limit: %v", err)
	}
	payments, credits = payments+1, credits+1
	_, err = r.create(credit(src, "0.01", payment.MethodInstant))
	if e, ok := errs.As(err); !ok || e.Code != errs.LimitExceeded || e.Details["limit"] != payment.LimitDailyInstantCredit {
		t.Errorf("over the daily limit: %v", err)
	}
	written("over the daily limit")
	p, err := r.create(credit(src, "0.01", payment.MethodAuto))
	if err != nil || p.Rail != payment.RailACH || deref(p.FallbackReason) != payment.FallbackOverRailLimit {
		t.Errorf("auto over the daily instant limit: %v %v %v", p.Rail, p.FallbackReason, err)
	}
	// Production starts with instant off.
	m := r.Merchant("Live")
	if _, err := r.ActivateProduction(ctx, m.Merchant.ID, by); err != nil {
		t.Fatal(err)
	}
	v, err := r.Originators.Get(ctx, tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production})
	if err != nil || v.Instant {
		t.Errorf("production originator instant = %t (%v), want off", v.Instant, err)
	}
}

// TestHeldInstantCreditDoesNotLeave: a credit the fraud rules hold is
// queued, and nothing reaches the rail.
func TestHeldInstantCreditDoesNotLeave(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	src := r.source(rtpBank, "123456789")
	p, err := r.create(credit(src, "3000.00", payment.MethodInstant))
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != payment.Held || deref(p.RailStatus) != payment.RailQueued {
		t.Fatalf("first credit of 3000.00: %s, rail_status %q; want held and queued", p.Status, deref(p.RailStatus))
	}
	r.Clock.Advance(time.Hour)
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 0 {
		t.Errorf("resolve sent %d (%v), want none", n, err)
	}
	if n := len(r.sim.Credits()); n != 0 {
		t.Errorf("the rail received %d credits of a held payment", n)
	}
	// Released by an operator, it leaves with the status worker, over its
	// rail and never in an ACH file or by the sandbox's delay.
	if _, err := r.Payments.Release(ctx, p.ID, "checked with the merchant", audit.Actor{Type: "operator", ID: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 1 {
		t.Fatalf("resolve after release sent %d (%v), want 1", n, err)
	}
	got, err := r.Payments.Get(ctx, r.scope, p.ID)
	if err != nil || got.Status != payment.Processed || deref(got.RailStatus) != payment.RailAccepted || len(r.sim.Credits()) != 1 {
		t.Errorf("released: %s %q, %d credits (%v); want processed, accepted, 1", got.Status, deref(got.RailStatus), len(r.sim.Credits()), err)
	}
}

// TestInstantCrashBetweenSendAndAnswer: the rail takes the credit but its
// answer never reaches the process, which "dies"; two new service
// instances ask at once, and the credit settles exactly once, under its
// one message id.
func TestInstantCrashBetweenSendAndAnswer(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	src := r.source(rtpBank, railsim.AccountLate)
	p, err := r.create(credit(src, "40.00", payment.MethodInstant))
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != payment.Pending || deref(p.RailStatus) != payment.RailUnknown {
		t.Fatalf("no answer: %s, rail_status %q; want pending, unknown", p.Status, deref(p.RailStatus))
	}
	if n := r.events(p.ID, "payment.success"); n != 0 {
		t.Fatalf("%d success events before any answer", n)
	}
	// The first process is gone; two others start on the same database.
	var procs []*wiring.Services
	for range 2 {
		svc, err := wiring.Build(r.Config, wiring.Deps{DB: r.DB, Log: fixture.Discard(), Now: r.Clock.Now, PasswordCost: bcrypt.MinCost})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, svc)
	}
	// Not yet due: nothing is asked.
	if n, err := procs[0].Consequences.ResolveInstant(ctx); err != nil || n != 0 {
		t.Fatalf("before its retry: resolved %d, %v", n, err)
	}
	r.Clock.Advance(time.Minute)
	var wg sync.WaitGroup
	sent := make([]int, len(procs))
	for i, svc := range procs {
		wg.Go(func() {
			n, err := svc.Consequences.ResolveInstant(ctx)
			if err != nil {
				t.Error(err)
			}
			sent[i] = n
		})
	}
	wg.Wait()
	if sent[0]+sent[1] != 1 {
		t.Errorf("the two processes sent %v, want one send between them", sent)
	}
	got, err := r.Payments.Get(ctx, r.scope, p.ID)
	if err != nil || got.Status != payment.Processed || deref(got.RailStatus) != payment.RailAccepted {
		t.Fatalf("after the status answer: %s %q %v, want processed, accepted", got.Status, deref(got.RailStatus), err)
	}
	credits := r.sim.Credits()
	if len(credits) != 1 || r.events(p.ID, "payment.success") != 1 {
		t.Errorf("the rail credited %d times and %d success events fired, want once each", len(credits), r.events(p.ID, "payment.success"))
	}
	var msgs int
	if err := r.SQL().Get(&msgs, `SELECT count(DISTINCT message_id) FROM instant_credits WHERE payment_id = $1`, p.ID); err != nil || msgs != 1 {
		t.Errorf("%d message ids, want 1 (%v)", msgs, err)
	}
	r.Clock.Advance(time.Hour)
	if n, err := procs[1].Consequences.ResolveInstant(ctx); err != nil || n != 0 {
		t.Errorf("after it settled: resolved %d, %v", n, err)
	}
}

// TestInstantNoAnswerStaysUnknown: a rail that never answers leaves the
// credit pending and unknown, asked again under the same message id; it is
// never failed or replaced.
func TestInstantNoAnswerStaysUnknown(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	p, err := r.create(credit(r.source(rtpBank, railsim.AccountTimeout), "1.00", payment.MethodAuto))
	if err != nil || p.Status != payment.Pending || deref(p.RailStatus) != payment.RailUnknown || p.Rail != payment.RailRTP {
		t.Fatalf("%s %q on %s, %v; want pending, unknown on rtp", p.Status, deref(p.RailStatus), p.Rail, err)
	}
	if _, err := r.Payments.Cancel(ctx, r.scope, p.ID); errs.CodeOf(err) != errs.Conflict {
		t.Errorf("cancel of a sent instant credit: %v, want conflict", err)
	}
	r.Clock.Advance(time.Minute)
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 1 {
		t.Errorf("resolve: %d, %v", n, err)
	}
	got, _ := r.Payments.Get(ctx, r.scope, p.ID)
	if got.Status != payment.Pending || deref(got.RailStatus) != payment.RailUnknown {
		t.Errorf("after a second unanswered send: %s %q", got.Status, deref(got.RailStatus))
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	base := payment.RouteFacts{Rail: payment.RailFedNow, Available: true, Cents: 50_000_000, RailLimit: 50_000_000, InstantOn: true}
	for _, c := range []struct {
		name     string
		edit     func(*payment.RouteFacts)
		rail, fb string
	}{
		{"at the limit", func(*payment.RouteFacts) {}, payment.RailFedNow, ""},
		{"one cent over", func(f *payment.RouteFacts) { f.Cents++ }, "", payment.FallbackOverRailLimit},
		{"no rail reaches the bank", func(f *payment.RouteFacts) { f.Rail = "" }, "", payment.FallbackInstantUnavailable},
		{"no rail in the environment", func(f *payment.RouteFacts) { f.Available = false }, "", payment.FallbackInstantUnavailable},
		{"originator off", func(f *payment.RouteFacts) { f.InstantOn = false }, "", payment.FallbackInstantOff},
	} {
		f := base
		c.edit(&f)
		if rail, fb := payment.Route(f); rail != c.rail || fb != c.fb {
			t.Errorf("%s: %q %q, want %q %q", c.name, rail, fb, c.rail, c.fb)
		}
	}
	sch := calendar.DefaultSchedule()
	monday := time.Date(2026, 11, 2, 0, 0, 0, 0, calendar.Eastern)
	for _, c := range []struct {
		at   time.Time
		open bool
	}{
		{monday.Add(15*time.Hour + 44*time.Minute + 59*time.Second), true},
		{monday.Add(15*time.Hour + 45*time.Minute), false},
		{monday.Add(-24 * time.Hour).Add(10 * time.Hour), false}, // Sunday
	} {
		if got := payment.SameDayOpen(sch, c.at); got != c.open {
			t.Errorf("same-day open at %s = %t, want %t", c.at, got, c.open)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestInstantIntentCommittedNeverSent: the process dies after the intent
// committed and before the credit left (a request's transaction committed
// and its sender gone). Another process sends it once its lease ran out,
// not before, and only one of two does.
func TestInstantIntentCommittedNeverSent(t *testing.T) {
	t.Parallel()
	r := newInstantRig(t)
	src := r.source(rtpBank, "123456789")
	var p payment.Payment
	if err := r.DB.Payments().WithTx(ctx, func(tx payment.Store) (err error) {
		p, err = r.Payments.On(tx).Create(ctx, r.scope, credit(src, "9.00", payment.MethodInstant))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if p.PendingInstant == nil || deref(p.RailStatus) != payment.RailQueued || len(r.sim.Credits()) != 0 {
		t.Fatalf("created on a transaction: %+v, %d credits; want it queued, left to send", p, len(r.sim.Credits()))
	}
	if n, err := r.Consequences.ResolveInstant(ctx); err != nil || n != 0 {
		t.Fatalf("within its sender's lease: resolved %d, %v", n, err)
	}
	r.Clock.Advance(time.Minute)
	var wg sync.WaitGroup
	sent := make([]int, 2)
	for i := range sent {
		wg.Go(func() {
			n, err := r.Consequences.ResolveInstant(ctx)
			if err != nil {
				t.Error(err)
			}
			sent[i] = n
		})
	}
	wg.Wait()
	got, err := r.Payments.Get(ctx, r.scope, p.ID)
	if err != nil || got.Status != payment.Processed || sent[0]+sent[1] != 1 || len(r.sim.Credits()) != 1 {
		t.Errorf("after the lease: %s, sent %v, %d credits (%v); want processed, one send, one credit", got.Status, sent, len(r.sim.Credits()), err)
	}
}
