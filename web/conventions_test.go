package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestUnversionedAccountsPaths: the spec's /accounts and /accounts/delete
// work as their /v2 twins do.
func TestUnversionedAccountsPaths(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "55554444")
	if r := th.WantOK(t, h.Post("/accounts", key, `{"account_number":"55554444"}`)); r["available"] != false {
		t.Errorf("/accounts: %s", th.MustJSON(r))
	}
	if r := th.WantOK(t, h.Post("/accounts/delete", key, `{"funding_source_id":"`+id+`"}`)); r["removed"] != true {
		t.Errorf("/accounts/delete: %s", th.MustJSON(r))
	}
	if r := th.WantOK(t, h.Post("/v2/accounts", key, `{"account_number":"55554444"}`)); r["available"] != true {
		t.Errorf("after removal: %s", th.MustJSON(r))
	}
}

// TestEmptyAccountTypeIsRefused: account_type "" is not the default.
func TestEmptyAccountTypeIsRefused(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	r := h.Post("/v2/funding-source", key, `{"user_id":"`+user+`","routing_number":"021000021","account_number":"12341234","account_type":""}`)
	th.WantError(t, r, http.StatusBadRequest, "invalid_account_type")
}

// TestWholeCentAmountsPassWhateverTheirSpelling: 0.550 and 1.2e1 are exact
// cents and are answered in the canonical form.
func TestWholeCentAmountsPassWhateverTheirSpelling(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.Source(key, h.Customer(key), "777788889")
	if p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `0.550`, "credit"))); p["amount"] != "0.55" {
		t.Errorf("0.550: %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `1.2e1`, "credit"))); p["amount"] != "12.00" {
		t.Errorf("1.2e1: %s", th.MustJSON(p))
	}
}

// TestProductionRefusesTheSandboxsTestRoutingNumbers: the sandbox's test
// routing numbers are invalid_routing_number in production only.
func TestProductionRefusesTheSandboxsTestRoutingNumbers(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	live := h.Production(m).SecretKey
	liveUser := h.Customer(live)
	for _, rn := range []string{"110000000", "222222226"} {
		th.WantError(t, h.Post("/v2/funding-source", live, th.SourceBody(liveUser, rn, "123412341")), http.StatusBadRequest, "invalid_routing_number")
		th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, rn, "9"+rn)))
	}
}

// TestConventions: a POST without a body needs no Content-Type, and an
// unknown query parameter is refused by name.
func TestConventions(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	h.RegisterWebhook(key, "https://hooks.example/a")
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	pay := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "credit")))["payment_id"].(string)
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	unverified := h.Source(key, h.Customer(key), "333333333")
	th.WantOK(t, h.Initiate(key, unverified))
	var firstEvent string
	if err := h.SQL().Get(&firstEvent, `SELECT id FROM events WHERE type = 'customer.created' ORDER BY created_at LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/v2/webhooks/test", "/v2/webhooks/secret/roll", "/v2/events/" + firstEvent + "/redeliver",
		"/v2/payments/" + pay + "/cancel", "/v2/sandbox/subscriptions/" + sub + "/advance",
		"/v2/sandbox/funding-source/" + unverified + "/micro-deposits/expire",
	} {
		th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: path, Key: key, NoContentType: true}))
	}
	r := h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: webtest.Ada, NoContentType: true})
	th.WantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")

	for path, param := range map[string]string{
		"/v2/customers?limit=2&statuss=Verified": "statuss",
		"/v2/events?typ=customer.created":        "typ",
		"/v2/webhooks?verbose=1":                 "verbose",
	} {
		r := h.Get(path, key)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if got := r.ErrParam(t); got != param {
			t.Errorf("%s: param %q, want %q", path, got, param)
		}
	}
	th.WantOK(t, h.Get("/v2/customers?limit=2", key))
}

// TestOpenAPIServersComeFromTheConfiguration: the served document names
// the configured base addresses, both when they differ.
func TestOpenAPIServersComeFromTheConfiguration(t *testing.T) {
	t.Parallel()
	servers := func(h *webtest.Harness) []string {
		var doc struct {
			Servers []struct{ URL string } `json:"servers"`
		}
		if err := json.Unmarshal(h.Get("/v2/openapi.json", "").Body, &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range doc.Servers {
			out = append(out, s.URL)
		}
		return out
	}
	if got := servers(webtest.NewHarness(t, th.WithHosts("sandbox.api.test", "api.test"))); len(got) != 2 ||
		got[0] != "http://sandbox.api.test" || got[1] != "http://api.test" {
		t.Errorf("two hosts: servers %v", got)
	}
	if got := servers(webtest.NewHarness(t)); len(got) != 1 {
		t.Errorf("one host: servers %v", got)
	}
}

// TestSignInAndSignUpInputsCarryOneDescription: the inputs carry one
// aria-describedby and no stray attribute, and a refused password's input
// is described by the error and its hint.
func TestSignInAndSignUpInputsCarryOneDescription(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	for _, path := range []string{"/dashboard/sign-in", "/dashboard/sign-up"} {
		body := string(h.Page(path).Body)
		if strings.Contains(body, " else") || strings.Count(body, `aria-describedby="password-hint" aria-describedby`) > 0 {
			t.Errorf("%s: stray attributes", path)
		}
	}
	p := webtest.NewDash(h).Post("/dashboard/sign-up", url.Values{"name": {"X"}, "email": {"x@example.com"}, "password": {"short"}})
	if body := string(p.Body); strings.Count(body, "aria-describedby") != 1 || !strings.Contains(body, `aria-describedby="form-error password-hint"`) {
		t.Errorf("the refused password's input is not described by the error and its hint once:\n%s", body)
	}
}

// TestFaviconIsServed: the hosted page's browser gets no 404.
func TestFaviconIsServed(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	if r := h.Do(th.Req{Method: http.MethodGet, Path: "/favicon.ico"}); r.Code != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "image/") {
		t.Errorf("/favicon.ico: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
}

// TestUnmatchedRouteIsLoggedWithItsPath.
func TestUnmatchedRouteIsLoggedWithItsPath(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme Books").Sandbox.SecretKey
	h.Get("/v2/no-such-thing", key)
	if !strings.Contains(h.Logs.String(), `"route":"unmatched"`) || !strings.Contains(h.Logs.String(), `"path":"/v2/no-such-thing"`) {
		t.Errorf("the unmatched request's log line lacks its path:\n%s", h.Logs.String())
	}
}

// TestUnknownDashboardStatusFilterSaysSo.
func TestUnknownDashboardStatusFilterSaysSo(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, _ := webtest.SignedIn(t, h, "Other Shop")
	webtest.WantPage(t, d.Get("/dashboard/funding-sources?status=Verifed"), http.StatusBadRequest, "There is no status filter", "Verifed")
}

// TestWebhookTestPayloadClaimsNothingAboutTheAnswer: webhook.test's data
// does not say the endpoint received and verified it.
func TestWebhookTestPayloadClaimsNothingAboutTheAnswer(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme Books").Sandbox.SecretKey
	h.RegisterWebhook(key, "https://hooks.example/x")
	ev := th.WantOK(t, h.Post("/v2/webhooks/test", key, ""))
	if msg := th.MustJSON(ev["data"]); strings.Contains(msg, "received and verified") {
		t.Errorf("webhook.test says it was received: %s", msg)
	}
}

// TestSettingsShowMerchantIDAndThirdPartyVerification.
func TestSettingsShowMerchantIDAndThirdPartyVerification(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	dm := webtest.NewDash(h)
	dm.SignIn(m.Merchant.Email, "correct horse battery")
	webtest.WantPage(t, dm.Get("/dashboard/settings"), http.StatusOK, m.Merchant.ID, "Third-party verification", "Off:")
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	webtest.WantPage(t, dm.Get("/dashboard/settings"), http.StatusOK, "On: <code>")
}
