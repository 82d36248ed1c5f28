package dashboard_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserPaymentPageShowsRetriesAndReversal: a returned debit's page
// lists its re-presentment, whose page links back to the original; a
// reversed credit's page names its reversal and reason, whose page links
// back to it; each passes axe-core and fits a phone's width.
func TestBrowserPaymentPageShowsRetriesAndReversal(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"13.01"`)))["payment_id"].(string)
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"40.00"`, "credit")))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	retry := th.WantOK(t, h.Post("/v2/payments/"+debit+"/retry", key, ""))["payment_id"].(string)
	rev := th.WantOK(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"wrong_amount"}`))["reversal"].(map[string]any)["payment_id"].(string)

	tb := webtest.NewTab(t, webtest.WithViewport(390, 844), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	checkPage := tb.PageChecks()
	check := func(heading string) {
		t.Helper()
		if got := tb.Text("h1"); got != heading {
			tb.Errorf("%s: heading %q, want %q", tb.Page.URL(), got, heading)
		}
		checkPage()
	}

	tb.Open(srv.URL + "/dashboard/payments/" + debit)
	check("$13.01 debit")
	tb.WantText("Re-presentments", "R01")
	if got := tb.Text("#retries"); !containsAll(got, retry, "attempt 2", "pending") {
		tb.Errorf("re-presentments: %q", got)
	}
	// Presented again already: only its latest attempt may be retried.
	if tb.Eval(`document.querySelector("#retry-action") !== null`) == true {
		tb.Errorf("the original debit, presented again already, offers Retry")
	}
	tb.Click("link", retry)
	tb.WaitURL(`/dashboard/payments/` + retry)
	check("$13.01 debit")
	tb.WantText("Presents again", debit)
	tb.Click("link", debit)
	tb.WaitURL(`/dashboard/payments/` + debit)

	tb.Open(srv.URL + "/dashboard/payments/" + credit)
	check("$40.00 credit")
	if got := tb.Text("#reversal"); !containsAll(got, rev, "wrong amount") {
		tb.Errorf("reversal: %q", got)
	}
	tb.Click("link", rev)
	tb.WaitURL(`/dashboard/payments/` + rev)
	check("$40.00 debit")
	tb.WantText("Reverses", credit)
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
