package dashboard_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/payment"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardEvidencePage: a payment's page links its printable
// evidence, which says the payment, the mandate, the masked account and
// the security log in words, fits the window at 1280 and 390 px, passes
// axe-core, and prints without the dashboard's navigation.
func TestBrowserDashboardEvidencePage(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "444455556666")
	pay := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/mandates/"+pay["mandate_id"].(string)+"/revoke", key, `{"revoke_reason":"customer called"}`))

	for _, width := range []int{1280, 390} {
		tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
		tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
		tb.Open(srv.URL + "/dashboard/payments/" + pay["payment_id"].(string))
		tb.Click("link", "Authorization evidence (printable)")
		tb.WaitURL(`/dashboard/payments/pay_[a-z2-7]+/evidence$`)
		if got := tb.Text("h1"); got != "Authorization evidence" {
			tb.Errorf("%d px: heading %q", width, got)
		}
		body := tb.Text("main")
		for _, want := range []string{
			"A debit of $25.00 from the customer's account ending 6666. Purpose: other.",
			payment.SandboxMandateText,
			"no IP address was recorded",
			"Revoked on", "customer called",
			"Checking account ending 6666", "held by an individual",
			"Verified by two micro-deposits the customer confirmed on",
			"mandate.revoked", "API key",
		} {
			if !strings.Contains(body, want) {
				tb.Errorf("%d px: the evidence page lacks %q:\n%s", width, want, body)
			}
		}
		if strings.Contains(body, "444455556666") {
			tb.Errorf("%d px: the evidence page shows the account number", width)
		}
		tb.Accessible()
		tb.FitsWidth()

		// On screen the navigation shows (on a phone, folded into its
		// menu); printed, only the page remains.
		nav := ".sidenav"
		if width < 640 {
			nav = ".phone-nav"
		}
		if shown := tb.Eval(`getComputedStyle(document.querySelector('` + nav + `')).display`); shown == "none" {
			tb.Errorf("%d px: on screen, the navigation (%s) is hidden", width, nav)
		}
		if err := tb.Page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaPrint}); err != nil {
			tb.Fatal(err)
		}
		for _, sel := range []string{".sidenav", ".phone-nav", ".topbar", ".env-banner", ".crumb"} {
			if shown := tb.Eval(`getComputedStyle(document.querySelector('` + sel + `')).display`); shown != "none" {
				tb.Errorf("%d px: printed, %s is displayed (%v)", width, sel, shown)
			}
		}
		if shown := tb.Eval(`getComputedStyle(document.querySelector('#mandate-text')).display`); shown == "none" {
			tb.Errorf("%d px: printed, the mandate's text is hidden", width)
		}
		twin := tb.AxeTwin()
		twin.Open(tb.Page.URL())
		twin.Axe()
	}
}
