package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// TestUnversionedAccountsPaths: the spec's /accounts and /accounts/delete
// work as their /v2 twins do.
func TestUnversionedAccountsPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.merchant("Acme").Sandbox.SecretKey
	id := h.source(key, h.customer(key), "55554444")
	if r := wantOK(t, h.post("/accounts", key, `{"account_number":"55554444"}`)); r["available"] != false {
		t.Errorf("/accounts: %s", mustJSON(r))
	}
	if r := wantOK(t, h.post("/accounts/delete", key, `{"funding_source_id":"`+id+`"}`)); r["removed"] != true {
		t.Errorf("/accounts/delete: %s", mustJSON(r))
	}
	if r := wantOK(t, h.post("/v2/accounts", key, `{"account_number":"55554444"}`)); r["available"] != true {
		t.Errorf("after removal: %s", mustJSON(r))
	}
}

// TestSpecDoubts: an empty account_type is refused, amounts that are
// exactly whole cents pass whatever their spelling, and production refuses
// the sandbox's test routing numbers.
func TestSpecDoubts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.customer(key)
	r := h.post("/v2/funding-source", key, `{"user_id":"`+user+`","routing_number":"021000021","account_number":"12341234","account_type":""}`)
	wantError(t, r, http.StatusBadRequest, "invalid_account_type")

	src := h.source(key, user, "777788889")
	if p := wantOK(t, h.post("/v2/payments", key, paymentBody(src, `0.550`, "credit"))); p["amount"] != "0.55" {
		t.Errorf("0.550: %s", mustJSON(p))
	}
	if p := wantOK(t, h.post("/v2/payments", key, paymentBody(src, `1.2e1`, "credit"))); p["amount"] != "12.00" {
		t.Errorf("1.2e1: %s", mustJSON(p))
	}

	live := h.production(m).SecretKey
	liveUser := h.customer(live)
	for _, rn := range []string{"110000000", "222222226"} {
		wantError(t, h.post("/v2/funding-source", live, sourceBody(liveUser, rn, "123412341")), http.StatusBadRequest, "invalid_routing_number")
		wantOK(t, h.post("/v2/funding-source", key, sourceBody(user, rn, "9"+rn)))
	}
}

// TestConventions: a POST without a body needs no Content-Type, and an
// unknown query parameter is refused by name.
func TestConventions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.merchant("Acme").Sandbox.SecretKey
	register(h, key, "https://hooks.example/a")
	src := h.verifiedSource(key, h.customer(key), "222222222")
	pay := wantOK(t, h.post("/v2/payments", key, paymentBody(src, `"5.00"`, "credit")))["payment_id"].(string)
	sub := wantOK(t, h.post("/v2/subscriptions", key, subscriptionBody(src, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	unverified := h.source(key, h.customer(key), "333333333")
	wantOK(t, initiate(h, key, unverified))
	var firstEvent string
	if err := h.db.SQL().Get(&firstEvent, `SELECT id FROM events WHERE type = 'customer.created' ORDER BY created_at LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/v2/webhooks/test", "/v2/webhooks/secret/roll", "/v2/events/" + firstEvent + "/redeliver",
		"/v2/payments/" + pay + "/cancel", "/v2/sandbox/subscriptions/" + sub + "/advance",
		"/v2/sandbox/funding-source/" + unverified + "/micro-deposits/expire",
	} {
		wantOK(t, h.do(req{method: http.MethodPost, path: path, key: key, noContentType: true}))
	}
	r := h.do(req{method: http.MethodPost, path: "/v2/customers", key: key, body: ada, noContentType: true})
	wantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")

	for path, param := range map[string]string{
		"/v2/customers?limit=2&statuss=Verified": "statuss",
		"/v2/events?typ=customer.created":        "typ",
		"/v2/webhooks?verbose=1":                 "verbose",
	} {
		r := h.get(path, key)
		wantError(t, r, http.StatusBadRequest, "invalid_request")
		if got := r.ErrParam(t); got != param {
			t.Errorf("%s: param %q, want %q", path, got, param)
		}
	}
	wantOK(t, h.get("/v2/customers?limit=2", key))
}

// TestOpenAPIServersComeFromTheConfiguration: the served document names
// the configured base addresses, both when they differ.
func TestOpenAPIServersComeFromTheConfiguration(t *testing.T) {
	t.Parallel()
	servers := func(h *harness) []string {
		var doc struct {
			Servers []struct{ URL string } `json:"servers"`
		}
		if err := json.Unmarshal(h.get("/v2/openapi.json", "").Body, &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range doc.Servers {
			out = append(out, s.URL)
		}
		return out
	}
	if got := servers(newHarness(t, withHosts("sandbox.api.test", "api.test"))); len(got) != 2 ||
		got[0] != "http://sandbox.api.test" || got[1] != "http://api.test" {
		t.Errorf("two hosts: servers %v", got)
	}
	if got := servers(newHarness(t)); len(got) != 1 {
		t.Errorf("one host: servers %v", got)
	}
}

// TestTrialFindings: what a merchant's trial tripped on.
func TestTrialFindings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.merchant("Acme Books")
	key := m.Sandbox.SecretKey

	// The sign-in and sign-up inputs carry one aria-describedby and no stray attribute.
	for _, path := range []string{"/dashboard/sign-in", "/dashboard/sign-up"} {
		body := string(h.page(path).Body)
		if strings.Contains(body, " else") || strings.Count(body, `aria-describedby="password-hint" aria-describedby`) > 0 {
			t.Errorf("%s: stray attributes", path)
		}
	}
	p := newDash(h).post("/dashboard/sign-up", url.Values{"name": {"X"}, "email": {"x@example.com"}, "password": {"short"}})
	if body := string(p.Body); strings.Count(body, "aria-describedby") != 1 || !strings.Contains(body, `aria-describedby="form-error password-hint"`) {
		t.Errorf("the refused password's input is not described by the error and its hint once:\n%s", body)
	}

	// A favicon, so the hosted page's browser gets no 404.
	if r := h.do(req{method: http.MethodGet, path: "/favicon.ico"}); r.Code != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "image/") {
		t.Errorf("/favicon.ico: %d %s", r.Code, r.Header.Get("Content-Type"))
	}

	// An unmatched route is logged with its path.
	h.get("/v2/no-such-thing", key)
	if !strings.Contains(h.logs.String(), `"route":"unmatched"`) || !strings.Contains(h.logs.String(), `"path":"/v2/no-such-thing"`) {
		t.Errorf("the unmatched request's log line lacks its path:\n%s", h.logs.String())
	}

	// An unknown dashboard status filter says so.
	d, _ := signedIn(t, h, "Other Shop")
	wantPage(t, d.get("/dashboard/funding-sources?status=Verifed"), http.StatusBadRequest, "There is no status filter", "Verifed")

	// The webhook.test payload claims nothing about the endpoint's answer.
	register(h, key, "https://hooks.example/x")
	ev := wantOK(t, h.post("/v2/webhooks/test", key, ""))
	if msg := mustJSON(ev["data"]); strings.Contains(msg, "received and verified") {
		t.Errorf("webhook.test says it was received: %s", msg)
	}

	// Settings shows the merchant id and whether third-party verification is on.
	dm := newDash(h)
	dm.signIn(m.Merchant.Email, "correct horse battery")
	wantPage(t, dm.get("/dashboard/settings"), http.StatusOK, m.Merchant.ID, "Third-party verification", "Off:")
	if err := h.merchants.EnableThirdPartyVerification(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}); err != nil {
		t.Fatal(err)
	}
	wantPage(t, dm.get("/dashboard/settings"), http.StatusOK, "On: <code>")
}
