package dashboard_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserPaymentPageShowsRailsAndRefunds: a refunded debit's page
// says how much was refunded; its refund's page names the debit it pays
// back and the instant rail it went on, and offers no action the service
// refuses for a final instant credit; the payments list marks both;
// an ACH payment's page says ACH; each passes axe-core and fits a phone.
func TestBrowserPaymentPageShowsRailsAndRefunds(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"1234.50"`)))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	refund := th.WantOK(t, h.Post("/v2/payments/"+debit+"/refund", key, `{"amount":"1000.00"}`))
	if refund["rail"] == "ach" {
		t.Fatalf("the sandbox refund did not go instant: %v", refund)
	}
	id := refund["payment_id"].(string)

	tb := webtest.NewTab(t, webtest.WithViewport(390, 844), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	check := tb.PageChecks()
	tb.Open(srv.URL + "/dashboard/payments/" + debit)
	tb.WantText("Refunded", "$1,000.00")
	if got := tb.Text("#payment-rail"); got != "ACH" {
		tb.Errorf("the debit's rail: %q", got)
	}
	check()
	tb.Open(srv.URL + "/dashboard/payments/" + id)
	if got := tb.Text("#refund-of"); got != debit {
		tb.Errorf("the refund names %q, want %s", got, debit)
	}
	if got := tb.Text("#payment-rail"); !containsAll(got, "Instant") {
		tb.Errorf("the refund's rail: %q", got)
	}
	// An instant credit is final: the page offers no reversal or return,
	// which the service refuses (not_reversible).
	if n, _ := tb.Page.Locator("#reverse-action, #return-action, #cancel-action").Count(); n != 0 {
		tb.Errorf("the processed instant refund offers %d cancel, reverse or return actions", n)
	}
	check()
	tb.Open(srv.URL + "/dashboard/payments")
	if got := tb.Text("#payment-" + id); !containsAll(got, "refund", "instant") {
		tb.Errorf("the refund's row: %q", got)
	}
	if got := tb.Text("#payment-" + debit); !containsAll(got, "refunded") {
		tb.Errorf("the debit's row: %q", got)
	}
	check()
}
