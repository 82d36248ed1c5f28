package web_test

import (
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardSecurityLog: the Security log is reached from the
// navigation at 390 px with JavaScript off, lists the sign-in and the
// webhook change with actor and address, fits the phone's width (its
// table scrolls inside its region) and passes axe-core.
func TestBrowserDashboardSecurityLog(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	m := h.Merchant("Acme Books")
	th.WantOK(t, h.Post("/v2/webhooks", m.Sandbox.SecretKey, `{"url":"https://hooks.example/a"}`))

	tb := newTab(t, withViewport(390, 844), withoutJavaScript)
	tb.signIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.click("link", "Security log")
	tb.waitURL(`/dashboard/security`)
	if got := tb.text("h1"); got != "Security log" {
		t.Errorf("heading %q", got)
	}
	rows := tb.text("#security-log tbody")
	for _, want := range []string{"webhook.url_set", "API key", "url host: https://hooks.example", "dashboard.signed_in", "Dashboard user", "Whole account"} {
		if !strings.Contains(rows, want) {
			t.Errorf("security log lacks %q:\n%s", want, rows)
		}
	}
	tb.accessible()
	tb.fitsWidth()
	twin := tb.axeTwin()
	twin.open(tb.page.URL())
	twin.axe()
}
