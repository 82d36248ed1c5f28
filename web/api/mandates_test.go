package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestMandatesOverHTTP: production debits and subscriptions need an
// authorization, the answers carry mandate_id, and the mandate endpoints
// show, list and revoke mandates.
func TestMandatesOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	live := h.Production(m).SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if err := h.Merchants.GrantOnDemand(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", live, th.SourceBody(h.Customer(live), "021000021", "000123456789")))["funding_source_id"].(string)

	r := h.Post("/v2/payments", live, th.PaymentBody(src, `"25.00"`, "debit"))
	th.WantError(t, r, http.StatusBadRequest, "authorization_required")
	th.WantError(t, h.Post("/v2/subscriptions", live, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-09")), http.StatusBadRequest, "authorization_required")

	p := th.WantOK(t, h.Post("/v2/payments", live, th.DebitBody(src, `"25.00"`)))
	single := p["mandate_id"].(string)
	got := th.WantOK(t, h.Get("/v2/mandates/"+single, live))
	sum := sha256.Sum256([]byte("I authorize Acme to debit my account."))
	if got["type"] != "single" || got["status"] != "active" || got["sec_code"] != "WEB" || got["ip_address"] != "203.0.113.7" ||
		got["text"] != "I authorize Acme to debit my account." || got["funding_source_id"] != src || got["user_agent"] != "Mozilla/5.0 (Test)" ||
		got["text_sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("mandate: %s", th.MustJSON(got))
	}
	h.Clock.Advance(time.Second) // newest first: the subscription's mandate comes first
	sub := th.WantOK(t, h.Post("/v2/subscriptions", live, `{"funding_source_id":"`+src+`","amount":"9.99","interval":"weekly","start_date":"2026-11-09","authorization":`+th.Authorization+`}`))
	recurring := sub["mandate_id"].(string)
	again := th.WantOK(t, h.Post("/v2/payments", live, `{"funding_source_id":"`+src+`","amount":"3.00","direction":"debit","mandate_id":"`+recurring+`"}`))
	if again["mandate_id"] != recurring {
		t.Errorf("debit under the recurring mandate: %s", th.MustJSON(again))
	}
	th.WantError(t, h.Post("/v2/payments", live, `{"funding_source_id":"`+src+`","amount":"3.00","direction":"debit","mandate_id":"`+single+`"}`),
		http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/payments", live, `{"funding_source_id":"`+src+`","amount":"3.00","direction":"debit","mandate_id":"man_unknown"}`),
		http.StatusNotFound, "resource_not_found")

	// Listed newest first, paged like every list.
	page := th.WantOK(t, h.Get("/v2/mandates?funding_source_id="+src+"&limit=1", live))
	if data := page["data"].([]any); len(data) != 1 || data[0].(map[string]any)["mandate_id"] != recurring || page["has_more"] != true {
		t.Errorf("first page: %s", th.MustJSON(page))
	}
	page = th.WantOK(t, h.Get("/v2/mandates?funding_source_id="+src+"&starting_after="+recurring, live))
	if data := page["data"].([]any); len(data) != 1 || data[0].(map[string]any)["mandate_id"] != single || page["has_more"] != false {
		t.Errorf("second page: %s", th.MustJSON(page))
	}
	th.WantError(t, h.Get("/v2/mandates?source="+src, live), http.StatusBadRequest, "invalid_request")

	// Revocation ends the subscription it authorized.
	th.WantError(t, h.Post("/v2/mandates/"+recurring+"/revoke", live, `{"revoke_reason":5}`), http.StatusBadRequest, "invalid_request")
	rev := th.WantOK(t, h.Post("/v2/mandates/"+recurring+"/revoke", live, `{"revoke_reason":"customer called"}`))
	if rev["status"] != "revoked" || rev["revoke_reason"] != "customer called" || rev["revoked_at"] == nil {
		t.Errorf("revoked: %s", th.MustJSON(rev))
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub["subscription_id"].(string), live)); s["status"] != "canceled" || s["cancel_reason"] != "mandate_revoked" {
		t.Errorf("subscription after revocation: %s", th.MustJSON(s))
	}
	th.WantError(t, h.Post("/v2/mandates/man_unknown/revoke", live, ``), http.StatusNotFound, "resource_not_found")
	th.WantError(t, h.Get("/v2/mandates/"+single, m.Sandbox.SecretKey), http.StatusNotFound, "resource_not_found")
}

// TestSandboxDebitsNeedNoAuthorization: the sandbox creates a mandate of
// its own, without an IP address.
func TestSandboxDebitsNeedNoAuthorization(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "444455556666")
	p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	m := th.WantOK(t, h.Get("/v2/mandates/"+p["mandate_id"].(string), key))
	if m["ip_address"] != nil || m["type"] != "single" || m["status"] != "active" {
		t.Errorf("sandbox mandate: %s", th.MustJSON(m))
	}
	if c := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "credit"))); c["mandate_id"] != nil {
		t.Errorf("credit: %s", th.MustJSON(c))
	}
}
