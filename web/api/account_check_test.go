package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// wantAccountCheck checks a funding source's account_check.
func wantAccountCheck(t *testing.T, what string, src map[string]any, result string, reasons ...string) {
	t.Helper()
	c, _ := src["account_check"].(map[string]any)
	if c == nil {
		t.Fatalf("%s: no account_check in %s", what, th.MustJSON(src))
	}
	var got []string
	for _, r := range c["reasons"].([]any) {
		got = append(got, r.(string))
	}
	if c["result"] != result || !slices.Equal(got, reasons) {
		t.Errorf("%s: account_check = %s, want %s %v", what, th.MustJSON(c), result, reasons)
	}
	if _, err := time.Parse(time.RFC3339, c["checked_at"].(string)); err != nil {
		t.Errorf("%s: checked_at %v: %v", what, c["checked_at"], err)
	}
}

// TestAccountCheckAcrossMerchants: merchant A's micro-deposits to an
// account come back R03; merchant B's customer then links the account on
// every account-number path (plain, with an Idempotency-Key, on demand)
// and every answer, read, list and creation event says fail with
// returned_no_account, naming nothing of A.
func TestAccountCheckAcrossMerchants(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a := h.Merchant("Alpha Goods").Sandbox.SecretKey
	aUser := h.Customer(a)
	aSrc := th.WantOK(t, h.Post("/v2/funding-source", a, th.SourceBody(aUser, "021000021", "000987654321")))
	wantAccountCheck(t, "first link", aSrc, "unknown")
	aID := aSrc["funding_source_id"].(string)
	th.WantOK(t, h.Initiate(a, aID))
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+aID+"/micro-deposits/return", a, `{"code":"R03"}`))
	wantAccountCheck(t, "A after R03", th.WantOK(t, h.Get("/v2/funding-source/"+aID, a)), "fail", "returned_no_account")

	d, b := webtest.SignedIn(t, h, "Beta Shop")
	bUser := h.Customer(b)
	for _, c := range []struct {
		name string
		req  th.Req
	}{
		{"plain", th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: b}},
		{"keyed", th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: b, Header: map[string]string{"Idempotency-Key": "check-1"}}},
		{"on demand", th.Req{Method: http.MethodPost, Path: "/v2/on-demand/funding-source", Key: b}},
	} {
		c.req.Body = th.SourceBody(bUser, "021000021", "000987654321")
		created := th.WantOK(t, h.Do(c.req))
		wantAccountCheck(t, c.name+": created", created, "fail", "returned_no_account")
		id := created["funding_source_id"].(string)
		got := th.WantOK(t, h.Get("/v2/funding-source/"+id, b))
		wantAccountCheck(t, c.name+": GET", got, "fail", "returned_no_account")
		list := th.WantOK(t, h.Get("/v2/customers/"+bUser+"/funding-sources", b))["data"].([]any)
		wantAccountCheck(t, c.name+": list", list[0].(map[string]any), "fail", "returned_no_account")
		for _, text := range []string{th.MustJSON(created), th.MustJSON(got), th.MustJSON(list)} {
			for _, secret := range []string{aUser, aID, "R03", "Alpha"} {
				if strings.Contains(text, secret) {
					t.Errorf("%s: B's answer shows %q: %s", c.name, secret, text)
				}
			}
		}
		if c.name == "plain" {
			page := webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+id), http.StatusOK, `id="account-check"`,
				"Fail: a bank refused this account", "no such account exists (R03 or AC03)", "returned_no_account")
			if strings.Contains(page, "Alpha") || strings.Contains(page, aUser) {
				t.Error("B's dashboard names A")
			}
		}
		th.WantOK(t, h.Post("/v2/accounts/delete", b, `{"funding_source_id":"`+id+`"}`))
	}
	var carried int
	for _, ev := range h.Events("funding_source.created") {
		if ev["user_id"] != bUser {
			continue
		}
		if c, _ := ev["account_check"].(map[string]any); c != nil && c["result"] == "fail" {
			carried++
		}
	}
	if carried != 3 {
		t.Errorf("%d of B's funding_source.created events carry the failed check, want 3", carried)
	}
}

// TestBlockFailFromTheDashboardRefusesAFailedAccount: the merchant turns
// block_fail on in Settings; a creation whose account check fails then
// answers 422 account_check_failed with reasons and writes nothing, with
// or without an Idempotency-Key; a replay gives the same answer.
func TestBlockFailFromTheDashboardRefusesAFailedAccount(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a := h.Merchant("Alpha Goods").Sandbox.SecretKey
	aID := h.Source(a, h.Customer(a), "000111222333")
	th.WantOK(t, h.Initiate(a, aID))
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+aID+"/micro-deposits/return", a, `{"code":"R02"}`))

	d, b := webtest.SignedIn(t, h, "Beta Shop")
	webtest.WantPage(t, d.Get("/dashboard/settings"), http.StatusOK, `id="account_check_policy-flag" name="account_check_policy" value="flag" checked`)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/settings/policies", url.Values{"account_check_policy": {"block_fail"}, "ownership_policy": {"flag"}})),
		http.StatusOK, "Saved: account check block_fail, ownership flag.", `value="block_fail" checked`)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/settings/policies", url.Values{"account_check_policy": {"refuse"}})), http.StatusOK, "policy must be", `value="block_fail" checked`)

	user := h.Customer(b)
	before := h.Count("funding_sources")
	for _, hdr := range []map[string]string{nil, {"Idempotency-Key": "blocked-1"}, {"Idempotency-Key": "blocked-1"}} {
		r := h.Do(th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: b, Header: hdr, Body: th.SourceBody(user, "021000021", "000111222333")})
		th.WantError(t, r, http.StatusUnprocessableEntity, "account_check_failed")
		e := r.JSON(t)["error"].(map[string]any)
		if reasons, _ := e["reasons"].([]any); len(reasons) != 1 || reasons[0] != "returned_closed" || e["param"] != "account_number" {
			t.Errorf("error = %s", th.MustJSON(e))
		}
	}
	th.WantError(t, h.Post("/v2/on-demand/funding-source", b, th.SourceBody(user, "021000021", "000111222333")), http.StatusUnprocessableEntity, "account_check_failed")
	if n := h.Count("funding_sources"); n != before {
		t.Errorf("funding_sources %d -> %d: a blocked creation wrote a source", before, n)
	}
	// Another account is created as usual.
	wantAccountCheck(t, "an unknown account", th.WantOK(t, h.Post("/v2/funding-source", b, th.SourceBody(user, "021000021", "000111222334"))), "unknown")
}
