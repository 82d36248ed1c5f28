package dashboard_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardSecurityLog: the Security log is reached from the
// navigation at 390 px with JavaScript off, lists the sign-in and the
// webhook change with actor and address, fits the phone's width (its
// table scrolls inside its region) and passes axe-core.
func TestBrowserDashboardSecurityLog(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	th.WantOK(t, h.Post("/v2/webhooks", m.Sandbox.SecretKey, `{"url":"https://hooks.example/a"}`))

	tb := webtest.NewTab(t, webtest.WithViewport(390, 844), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Click("link", "Security log")
	tb.WaitURL(`/dashboard/security`)
	if got := tb.Text("h1"); got != "Security log" {
		tb.Errorf("heading %q", got)
	}
	rows := tb.Text("#security-log tbody")
	for _, want := range []string{"webhook.url_set", "API key", "url host: https://hooks.example", "dashboard.signed_in", "Dashboard user", "Whole account"} {
		if !strings.Contains(rows, want) {
			tb.Errorf("security log lacks %q:\n%s", want, rows)
		}
	}
	tb.Accessible()
	tb.FitsWidth()
	twin := tb.AxeTwin()
	twin.Open(tb.Page.URL())
	twin.Axe()
}
