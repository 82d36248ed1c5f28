package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestSandboxReturnsApplyThePolicy: the sandbox's return simulations act
// on the source as the bank's returns do: R02 R03 R04 R20 remove it,
// R05 R07 R10 R11 R29 R16 block it; an unblock needs an attestation and
// comes once per 365 days.
func TestSandboxReturnsApplyThePolicy(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	debit := func(src string) string {
		t.Helper()
		return th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	}

	// Removal: the source, its subscription, and the event with the code.
	gone := h.VerifiedSource(key, user, "222222222")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(gone, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit(gone)+"/return", key, `{"code":"R03"}`))
	if src := th.WantOK(t, h.Get("/v2/funding-source/"+gone, key)); src["removed"] != true || src["removed_reason"] != "return_R03" {
		t.Errorf("after R03: %s", th.MustJSON(src))
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub, key)); s["status"] != "canceled" || s["cancel_reason"] != "funding_source_removed" {
		t.Errorf("subscription after R03: %s", th.MustJSON(s))
	}
	if ev := h.Events("funding_source.removed"); len(ev) != 1 || ev[0]["return_code"] != "R03" || ev[0]["removed_reason"] != "return_R03" {
		t.Errorf("funding_source.removed: %v", ev)
	}

	// A block: mandates revoked, debits refused, credits go on.
	src := h.VerifiedSource(key, user, "333333333")
	sub = th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	returned := debit(src)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+returned+"/return", key, `{"code":"R07"}`))
	got := th.WantOK(t, h.Get("/v2/funding-source/"+src, key))
	if b, _ := got["block"].(map[string]any); b["code"] != "R07" || b["reason"] != "Authorization revoked by customer" || got["removed"] != false {
		t.Errorf("after R07: %s", th.MustJSON(got))
	}
	mandates := th.WantOK(t, h.Get("/v2/mandates?funding_source_id="+src, key))["data"].([]any)
	for _, m := range mandates {
		if m := m.(map[string]any); m["status"] != "revoked" || m["revoke_reason"] != "return_R07" {
			t.Errorf("mandate after R07: %s", th.MustJSON(m))
		}
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub, key)); s["status"] != "canceled" || s["cancel_reason"] != "mandate_revoked" {
		t.Errorf("subscription after R07: %s", th.MustJSON(s))
	}
	th.WantError(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "debit")), http.StatusForbidden, "funding_source_blocked")
	th.WantError(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "1.00", "weekly", "2026-11-20")), http.StatusForbidden, "funding_source_blocked")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "credit")))
	if ev := h.Events("funding_source.blocked"); len(ev) != 1 || ev[0]["block"].(map[string]any)["code"] != "R07" {
		t.Errorf("funding_source.blocked: %v", ev)
	}

	// Unblock: an attestation, once per 365 days.
	unblock := "/v2/funding-source/" + src + "/unblock"
	th.WantError(t, h.Post(unblock, key, `{}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post(unblock, key, `{"attestation":" "}`), http.StatusBadRequest, "invalid_request")
	if got := th.WantOK(t, h.Post(unblock, key, `{"attestation":"Signed a new authorization."}`)); got["block"] != nil {
		t.Errorf("after unblock: %s", th.MustJSON(got))
	}
	if ev := h.Events("funding_source.unblocked"); len(ev) != 1 {
		t.Errorf("funding_source.unblocked: %v", ev)
	}
	th.WantError(t, h.Post(unblock, key, `{"attestation":"again"}`), http.StatusConflict, "conflict")
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit(src)+"/return", key, `{"code":"R29"}`))
	th.WantError(t, h.Post(unblock, key, `{"attestation":"Signed again."}`), http.StatusConflict, "unblock_limit")
	h.Clock.Advance(366 * 24 * time.Hour)
	th.WantOK(t, h.Post(unblock, key, `{"attestation":"Signed again, a year later."}`))
	th.WantError(t, h.Post("/v2/funding-source/fs_unknown/unblock", key, `{"attestation":"x"}`), http.StatusNotFound, "funding_source_not_found")

	// Micro-deposit returns follow the same table.
	frozen := h.Source(key, user, "444444444")
	th.WantOK(t, h.Initiate(key, frozen))
	if got := th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+frozen+"/micro-deposits/return", key, `{"code":"R16"}`)); got["block"] == nil {
		t.Errorf("after a deposit's R16: %s", th.MustJSON(got))
	}
	closed := h.Source(key, user, "555555555")
	th.WantOK(t, h.Initiate(key, closed))
	if got := th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+closed+"/micro-deposits/return", key, `{"code":"R02"}`)); got["removed_reason"] != "return_R02" {
		t.Errorf("after a deposit's R02: %s", th.MustJSON(got))
	}
	// A kept code changes nothing.
	kept := h.VerifiedSource(key, user, "666666666")
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit(kept)+"/return", key, `{"code":"R01"}`))
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+kept, key)); got["block"] != nil || got["removed"] != false {
		t.Errorf("after R01: %s", th.MustJSON(got))
	}
}

// TestDashboardShowsWhatAReturnDidToTheSource: a source's page says that a
// return blocked its debits, or removed it.
func TestDashboardShowsWhatAReturnDidToTheSource(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme")
	user := h.Customer(key)
	blocked := h.VerifiedSource(key, user, "222222222")
	p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(blocked, `"25.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+p+"/return", key, `{"code":"R10"}`))
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+blocked), http.StatusOK,
		`Blocked by a return: R10 Customer advises originator is not known or not authorized, since Nov 2, 2026`, "revoked", "return_R10")
	removed := h.VerifiedSource(key, user, "333333333")
	p = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(removed, `"25.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+p+"/return", key, `{"code":"R04"}`))
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+removed), http.StatusOK, `<dd id="removed-reason">return_R04</dd>`)
}
