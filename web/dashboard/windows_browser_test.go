package dashboard_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserDashboardBalancesAndFinality: the home and payments pages
// show the money in flight and at risk, and a settled debit's page its
// return windows and purpose, at desktop and phone widths, passing
// axe-core.
func TestBrowserDashboardBalancesAndFinality(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			h := webtest.NewHarness(t)
			srv := h.Live()
			m := h.Merchant("Acme Books")
			key := m.Sandbox.SecretKey
			src := h.VerifiedSource(key, h.Customer(key), "222222222")
			debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
			webtest.SettleSandbox(t, h)
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"12.00"`, "debit")))
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.50"`, "credit")))

			tb := webtest.NewTab(t, webtest.WithViewport(width, 844), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			check := tb.PageChecks()
			for _, page := range []string{"/dashboard", "/dashboard/payments"} {
				tb.Open(srv.URL + page)
				if got := tb.Text("#balances"); !containsAll(got, "Pending debits", "$12.00", "Pending credits", "$7.50", "Debits at risk", "$25.00") {
					tb.Errorf("%s: balances %q", page, got)
				}
				check()
			}
			tb.Open(srv.URL + "/dashboard/payments/" + debit)
			if got := tb.Text("#return-window"); got != "Wed, Nov 4, 2026, 11:59 PM EST" {
				tb.Errorf("return window: %q", got)
			}
			if got := tb.Text("#unauthorized-window"); got != "Fri, Jan 1, 2027, 11:59 PM EST" {
				tb.Errorf("unauthorized-return window: %q", got)
			}
			if got := tb.Text("#purpose"); got != "other" {
				tb.Errorf("purpose: %q, want the new originator's default, other", got)
			}
			check()
		})
	}
}
