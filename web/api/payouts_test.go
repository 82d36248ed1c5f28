package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// The instant payout rules are internal/payment's tests; these check what
// HTTP adds: the members of a payment, the refusals' statuses and
// Retry-After, the list filters and the evidence.

func TestInstantPayoutOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(t, th.WithRail(rail.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	rtp := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	none := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456780")))["funding_source_id"].(string)
	body := func(src, amount, method, direction string) string {
		return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"` + direction + `","method":"` + method + `"}`
	}

	p := th.WantOK(t, h.Post("/v2/payments", key, body(rtp, "12.34", "instant", "credit")))
	if p["status"] != "processed" || p["rail"] != "rtp" || p["method"] != "instant" || p["rail_status"] != "accepted" || p["fallback_reason"] != nil {
		t.Errorf("instant credit = %v", p)
	}
	id := p["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+id+"/reverse", key, `{"reason":"duplicate"}`), http.StatusConflict, "not_reversible")
	ev := th.WantOK(t, h.Get("/v2/payments/"+id+"/evidence", key))
	if pay := ev["payment"].(map[string]any); pay["rail"] != "rtp" || pay["method"] != "instant" {
		t.Errorf("evidence payment = %v", pay)
	}

	auto := th.WantOK(t, h.Post("/v2/payments", key, body(none, "5.00", "auto", "credit")))
	if auto["rail"] != "ach" || auto["method"] != "auto" || auto["fallback_reason"] != "instant_unavailable" || auto["rail_status"] != nil {
		t.Errorf("auto credit = %v", auto)
	}
	ev = th.WantOK(t, h.Get("/v2/payments/"+auto["payment_id"].(string)+"/evidence", key))
	if pay := ev["payment"].(map[string]any); pay["rail"] != "ach" || pay["method"] != "auto" || pay["fallback_reason"] != "instant_unavailable" {
		t.Errorf("evidence of the auto credit = %v", pay)
	}
	th.WantError(t, h.Post("/v2/payments", key, body(none, "5.00", "instant", "credit")), http.StatusUnprocessableEntity, "instant_unavailable")
	th.WantError(t, h.Post("/v2/payments", key, body(rtp, "5.00", "instant", "debit")), http.StatusBadRequest, "invalid_request")

	sim.SetDown(true)
	down := h.Post("/v2/payments", key, body(rtp, "5.00", "instant", "credit"))
	th.WantError(t, down, http.StatusServiceUnavailable, "rail_unavailable")
	if down.Header.Get("Retry-After") == "" {
		t.Error("rail_unavailable without Retry-After")
	}
	sim.SetDown(false)

	list := th.WantOK(t, h.Get("/v2/payments?rail=rtp", key))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["payment_id"] != id {
		t.Errorf("?rail=rtp = %v", list)
	}
	list = th.WantOK(t, h.Get("/v2/payments?method=auto", key))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["payment_id"] != auto["payment_id"] {
		t.Errorf("?method=auto = %v", list)
	}
	th.WantError(t, h.Get("/v2/payments?rail=swift", key), http.StatusBadRequest, "invalid_request")
}

// TestInstantPayoutUnderAnIdempotencyKey: the credit's intent commits with
// the key before the credit leaves; the key then answers as the request
// did, and a refusal of the rail forgets it.
func TestInstantPayoutUnderAnIdempotencyKey(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(t, th.WithRail(rail.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	body := `{"funding_source_id":"` + src + `","amount":"7.00","direction":"credit","method":"instant"}`
	post := func(idem string) *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: body, Header: map[string]string{"Idempotency-Key": idem}})
	}
	first := th.WantOK(t, post("k1"))
	if first["status"] != "processed" || first["rail_status"] != "accepted" {
		t.Fatalf("first = %v", first)
	}
	again := post("k1")
	if got := th.WantOK(t, again); got["payment_id"] != first["payment_id"] || got["status"] != "processed" || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %v (%v)", got, again.Header)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail received %d credits, want 1", n)
	}

	sim.SetDown(true)
	th.WantError(t, post("k2"), http.StatusServiceUnavailable, "rail_unavailable")
	sim.SetDown(false)
	retry := th.WantOK(t, post("k2"))
	if retry["status"] != "processed" || retry["payment_id"] == first["payment_id"] {
		t.Errorf("a retry after the rail came back = %v", retry)
	}
	var n int
	if err := h.SQL().Get(&n, `SELECT count(*) FROM payments`); err != nil || n != 2 {
		t.Errorf("%d payments (%v), want 2: the refused one left nothing", n, err)
	}
}

func creditBody(src, amount, method string) string {
	return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"credit","method":"` + method + `"}`
}

// TestUnreadableRailAnswerOfAPayoutOverHTTP: the rail took the instant
// credit and answered with a report the service cannot read. The request
// answers 200 with the payment pending and rail_status "unknown" (not 503
// rail_unavailable: the credit may have been made); asked again by the
// status worker under the same message it stays so, the rail holds one
// credit, and the payment never fails.
func TestUnreadableRailAnswerOfAPayoutOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	url, unreadable := th.UnreadableRail(t, sim)
	unreadable.Store(true)
	h := webtest.NewHarness(t, th.WithRail(url))
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", "123456789")))["funding_source_id"].(string)

	p := th.WantOK(t, h.Post("/v2/payments", key, creditBody(src, "12.34", "instant")))
	if p["status"] != "pending" || p["rail"] != "rtp" || p["rail_status"] != "unknown" || p["failure_code"] != nil {
		t.Fatalf("instant credit after an unreadable answer = %v", p)
	}
	id := p["payment_id"].(string)
	h.Clock.Advance(time.Minute)
	if n, err := h.Consequences.ResolveInstant(context.Background()); err != nil || n != 1 {
		t.Errorf("the status worker asked %d times (%v), want once", n, err)
	}
	got := th.WantOK(t, h.Get("/v2/payments/"+id, key))
	if got["status"] != "pending" || got["rail_status"] != "unknown" || got["failure_code"] != nil {
		t.Errorf("GET after a second unreadable answer = %v", got)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail recorded %d credits, want 1", n)
	}
	if evs := h.Events("payment.failed"); len(evs) != 0 {
		t.Errorf("payment.failed = %v, want none", evs)
	}
}

// TestInstantCreditsInTheBalancesOverHTTP: the ledger counts an instant
// credit like any credit (docs/api.md): a processed one is money sent
// (available, with the day it left), one pending with rail_status
// "unknown" is pending, and a rejected one (failed AC04) is its movement
// and its return, netting to zero.
func TestInstantCreditsInTheBalancesOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	url, unreadable := th.UnreadableRail(t, sim)
	h := webtest.NewHarness(t, th.WithRail(url))
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	closed := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", railsim.AccountClosed)))["funding_source_id"].(string)

	sent := th.WantOK(t, h.Post("/v2/payments", key, creditBody(src, "10.00", "instant")))
	unreadable.Store(true)
	unknown := th.WantOK(t, h.Post("/v2/payments", key, creditBody(src, "20.00", "instant")))
	unreadable.Store(false)
	failed := th.WantOK(t, h.Post("/v2/payments", key, creditBody(closed, "40.00", "instant")))
	if sent["status"] != "processed" || unknown["status"] != "pending" || unknown["rail_status"] != "unknown" ||
		failed["status"] != "failed" || failed["failure_code"] != "AC04" {
		t.Fatalf("credits: %v\n%v\n%v", sent, unknown, failed)
	}

	lines := th.WantOK(t, h.Get("/v2/balance-transactions?limit=100", key))["data"].([]any)
	of := map[string][]string{}
	for _, l := range lines {
		m := l.(map[string]any)
		id := m["payment_id"].(string)
		of[id] = append(of[id], m["type"].(string)+" "+m["amount"].(string)+" "+m["status"].(string))
		if id == sent["payment_id"] && m["available_on"] == nil {
			t.Errorf("the processed instant credit's line has no available_on: %v", m)
		}
	}
	for _, ls := range of {
		slices.Sort(ls)
	}
	want := map[string][]string{
		sent["payment_id"].(string):    {"credit -10.00 available"},
		unknown["payment_id"].(string): {"credit -20.00 pending"},
		failed["payment_id"].(string):  {"credit -40.00 available", "return 40.00 available"},
	}
	if len(lines) != 4 || len(of) != len(want) {
		t.Errorf("balance transactions = %v", lines)
	}
	for id, w := range want {
		if !slices.Equal(of[id], w) {
			t.Errorf("lines of %s = %q, want %q", id, of[id], w)
		}
	}
	b := th.WantOK(t, h.Get("/v2/balances", key))
	if b["available"] != "-10.00" || b["pending"] != "-20.00" || b["pending_credits"] != "20.00" || b["pending_debits"] != "0.00" {
		t.Errorf("balances = %v", b)
	}
}

// TestInstantRefusalsWriteNothingOverHTTP: each refusal of "instant" has
// its status, code and the limit with what remains, and writes no
// payment: one cent over the rail's limit (at the limit it passes), over
// the originator's per-entry and daily instant limits, and the
// originator's instant switch off.
func TestInstantRefusalsWriteNothingOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(t, th.WithRail(rail.URL), func(c *config.Config) {
		c.InstantRailLimits = map[string]int64{"rtp": 1_000_000_000, "fednow": 5000}
	})
	set := func(m merchant.Created, ch originator.Change) {
		t.Helper()
		if _, err := h.Svc.Originators.Set(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, ch, audit.Operator("test")); err != nil {
			t.Fatal(err)
		}
	}
	source := func(key, routing, account string) string {
		t.Helper()
		return th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), routing, account)))["funding_source_id"].(string)
	}
	refused := func(name, key, body string, status int, code, limit, remaining string) {
		t.Helper()
		before := h.Count("payments")
		r := h.Post("/v2/payments", key, body)
		th.WantError(t, r, status, code)
		if limit != "" {
			if e := r.JSON(t)["error"].(map[string]any); e["limit"] != limit || e["remaining"] != remaining {
				t.Errorf("%s: error = %v, want limit %s, remaining %s", name, e, limit, remaining)
			}
		}
		if n := h.Count("payments"); n != before {
			t.Errorf("%s: %d payments written", name, n-before)
		}
	}

	railKey := h.Merchant("Rail").Sandbox.SecretKey
	fednow := source(railKey, "222222226", "123456781")
	refused("one cent over FedNow's limit", railKey, creditBody(fednow, "50.01", "instant"), http.StatusUnprocessableEntity, "limit_exceeded", "rail", "50.00")
	if p := th.WantOK(t, h.Post("/v2/payments", railKey, creditBody(fednow, "50.00", "instant"))); p["rail"] != "fednow" || p["status"] != "processed" {
		t.Errorf("at FedNow's limit: %v", p)
	}

	lm := h.Merchant("Limits")
	perEntry, daily := "20.00", "30.00"
	set(lm, originator.Change{PerEntryInstantCredit: &perEntry, DailyInstantCredit: &daily})
	rtp := source(lm.Sandbox.SecretKey, "110000000", "123456782")
	th.WantOK(t, h.Post("/v2/payments", lm.Sandbox.SecretKey, creditBody(rtp, "20.00", "instant")))
	refused("one cent over the per-entry instant limit", lm.Sandbox.SecretKey, creditBody(rtp, "20.01", "instant"),
		http.StatusUnprocessableEntity, "limit_exceeded", "per_entry_instant_credit", "20.00")
	th.WantOK(t, h.Post("/v2/payments", lm.Sandbox.SecretKey, creditBody(rtp, "10.00", "instant")))
	refused("one cent over the daily instant limit", lm.Sandbox.SecretKey, creditBody(rtp, "0.01", "instant"),
		http.StatusUnprocessableEntity, "limit_exceeded", "daily_instant_credit", "0.00")

	om := h.Merchant("Off")
	off := false
	set(om, originator.Change{Instant: &off})
	refused("originator instant off", om.Sandbox.SecretKey, creditBody(source(om.Sandbox.SecretKey, "110000000", "123456783"), "5.00", "instant"),
		http.StatusForbidden, "permission_denied", "", "")
	if n := len(sim.Credits()); n != 3 {
		t.Errorf("the rail recorded %d credits, want the 3 that passed", n)
	}
}
