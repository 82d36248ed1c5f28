package web_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserHostedSameDayArrival: micro-deposits initiated before the
// same-day cut-off are promised for today on the hosted page, at desktop
// and phone widths, and the page passes axe-core.
func TestBrowserHostedSameDayArrival(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := newHostedSetup(t).localOnly()
			h := s.h
			h.Clock.Set(eastern(2026, 11, 2, 15, 44))
			th.WantOK(t, h.Initiate(s.key, s.src))
			srv, shop := h.live(), newShopSite(t)
			tb := newTab(t, withViewport(width, 800))
			tb.open(s.fragmentLink(srv.URL, shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart"))
			tb.waitURL(`/bank-account/`)
			tb.wantText("Confirm your bank account", "should arrive today, Monday, November 2, 2026, by the end of the day")
			tb.accessible()
			tb.axe()
			if w := tb.eval(`document.documentElement.scrollWidth`).(int); w > width {
				t.Errorf("the page is %d px wide at %d px", w, width)
			}
		})
	}
}

// TestBrowserDashboardBalancesAndFinality: the home and payments pages
// show the money in flight and at risk, and a settled debit's page its
// return windows, at desktop and phone widths, passing axe-core.
func TestBrowserDashboardBalancesAndFinality(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			h := newHarness(t)
			srv := h.live()
			m := h.Merchant("Acme Books")
			key := m.Sandbox.SecretKey
			src := h.VerifiedSource(key, h.Customer(key), "222222222")
			debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
			settleSandbox(t, h)
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"12.00"`, "debit")))
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.50"`, "credit")))

			tb := newTab(t, withViewport(width, 844), withoutJavaScript)
			tb.signIn(srv.URL, m.Merchant.Email, "correct horse battery")
			twin := tb.axeTwin()
			check := func() {
				t.Helper()
				tb.accessible()
				tb.fitsWidth()
				twin.open(tb.page.URL())
				twin.axe()
			}
			for _, page := range []string{"/dashboard", "/dashboard/payments"} {
				tb.open(srv.URL + page)
				if got := tb.text("#balances"); !containsAll(got, "Pending debits", "$12.00", "Pending credits", "$7.50", "Debits at risk", "$25.00") {
					t.Errorf("%s: balances %q", page, got)
				}
				check()
			}
			tb.open(srv.URL + "/dashboard/payments/" + debit)
			if got := tb.text("#return-window"); got != "Wed, Nov 4, 2026, 11:59 PM EST" {
				t.Errorf("return window: %q", got)
			}
			if got := tb.text("#unauthorized-window"); got != "Fri, Jan 1, 2027, 11:59 PM EST" {
				t.Errorf("unauthorized-return window: %q", got)
			}
			check()
		})
	}
}
