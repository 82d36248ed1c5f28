package web_test

import (
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserPaymentPageShowsRetriesAndReversal: a returned debit's page
// lists its re-presentment, whose page links back to the original; a
// reversed credit's page names its reversal and reason, whose page links
// back to it; each passes axe-core and fits a phone's width.
func TestBrowserPaymentPageShowsRetriesAndReversal(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"13.01"`)))["payment_id"].(string)
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"40.00"`, "credit")))["payment_id"].(string)
	settleSandbox(t, h)
	retry := th.WantOK(t, h.Post("/v2/payments/"+debit+"/retry", key, ""))["payment_id"].(string)
	rev := th.WantOK(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"wrong_amount"}`))["reversal"].(map[string]any)["payment_id"].(string)

	tb := newTab(t, withViewport(390, 844), withoutJavaScript)
	tb.signIn(srv.URL, m.Merchant.Email, "correct horse battery")
	twin := tb.axeTwin()
	check := func(heading string) {
		t.Helper()
		if got := tb.text("h1"); got != heading {
			t.Errorf("%s: heading %q, want %q", tb.page.URL(), got, heading)
		}
		tb.accessible()
		tb.fitsWidth()
		twin.open(tb.page.URL())
		twin.axe()
	}

	tb.open(srv.URL + "/dashboard/payments/" + debit)
	check("$13.01 debit")
	tb.wantText("Re-presentments", "R01")
	if got := tb.text("#retries"); !containsAll(got, retry, "attempt 2", "pending") {
		t.Errorf("re-presentments: %q", got)
	}
	tb.click("link", retry)
	tb.waitURL(`/dashboard/payments/` + retry)
	check("$13.01 debit")
	tb.wantText("Presents again", debit)
	tb.click("link", debit)
	tb.waitURL(`/dashboard/payments/` + debit)

	tb.open(srv.URL + "/dashboard/payments/" + credit)
	check("$40.00 credit")
	if got := tb.text("#reversal"); !containsAll(got, rev, "wrong amount") {
		t.Errorf("reversal: %q", got)
	}
	tb.click("link", rev)
	tb.waitURL(`/dashboard/payments/` + rev)
	check("$40.00 debit")
	tb.wantText("Reverses", credit)
}

// containsAll reports whether s contains every one of want.
func containsAll(s string, want ...string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
