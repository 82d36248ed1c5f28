package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserSettingsShowTheOriginator: Settings shows the environment's
// ACH originator, its company, status, limits with today's usage and
// Same Day ACH, read-only (no form control of its own), fitting the
// window at 1280 and 390 px with no serious axe-core violation.
func TestBrowserSettingsShowTheOriginator(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "444455556666")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900))
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			tb.Open(srv.URL + "/dashboard/settings")
			for sel, want := range map[string]string{
				"#originator-status":          "Active",
				"#originator-company-name":    "ACME BOOKS",
				"#originator-per-entry-debit": "$10000.00",
				"#originator-daily-debit":     "$50000.00 ($25.00 used today)",
				"#originator-daily-credit":    "$50000.00 ($0.00 used today)",
				"#originator-same-day":        "On",
			} {
				if got := strings.TrimSpace(tb.Text(sel)); got != want {
					tb.Errorf("%s = %q, want %q", sel, got, want)
				}
			}
			if n := tb.Eval(`document.querySelectorAll('#originator input, #originator select, #originator button, #originator form').length`); fmt.Sprint(n) != "0" {
				tb.Errorf("the originator card has %v form controls; it is read-only", n)
			}
			if id := tb.Text("#originator-company-id"); len(strings.TrimSpace(id)) != 10 {
				tb.Errorf("company id %q", id)
			}
			tb.FitsWidth()
			tb.Accessible()
			tb.Axe()
		})
	}
}
