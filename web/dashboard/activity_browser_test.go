package dashboard_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardActivityPages walks the Payments, Subscriptions,
// Events and API requests pages at 390 px with JavaScript off: each page
// is reached by its links, filtered with its form, passes axe-core and
// fits the phone's width.
func TestBrowserDashboardActivityPages(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src, debit, credit, _, sub := activity(t, h, key)
	h.RegisterWebhook(key, "https://hooks.example/a")
	th.WantOK(t, h.Get("/v2/payments/"+debit, key))

	tb := webtest.NewTab(t, webtest.WithViewport(390, 844), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	twin := tb.AxeTwin()
	axe := func() {
		t.Helper()
		twin.Open(tb.Page.URL())
		twin.Axe()
	}
	check := func(heading string) {
		t.Helper()
		if got := tb.Text("h1"); got != heading {
			tb.Errorf("%s: heading %q, want %q", tb.Page.URL(), got, heading)
		}
		tb.Accessible()
		tb.FitsWidth()
		axe()
	}

	// Home's charts, each with its table.
	tb.Open(srv.URL + "/dashboard")
	tb.WantText("The last 30 days", "Verification funnel by method", "Debit return rate by day")
	if n := tb.Eval(`document.querySelectorAll('#overview svg[role=img] title').length`); fmt.Sprint(n) != "6" {
		tb.Errorf("charts with a title: %v, want 6", n)
	}
	tb.FitsWidth()
	axe()

	// From the source's page to its payments, then to one payment.
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	axe()
	tb.Click("link", "Every payment of this funding source")
	check("Payments")
	tb.WantText(debit, credit)
	if _, err := tb.Page.Locator("#direction").SelectOption(playwright.SelectOptionValues{Values: &[]string{"debit"}}); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Filter")
	tb.WaitURL(`direction=debit`)
	if rows := tb.Text("#payment-list tbody"); !strings.Contains(rows, debit) || strings.Contains(rows, credit) {
		tb.Errorf("debits only:\n%s", rows)
	}
	tb.Click("link", debit)
	check("$12.34 debit")
	tb.Shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-payment")

	// The activity pages link to one another.
	tb.Open(srv.URL + "/dashboard/payments")
	tb.Click("link", "Subscriptions")
	check("Subscriptions")
	tb.WantText(sub, "$9.99 monthly")
	tb.Fill("Search by subscription id", sub)
	tb.Click("button", "Filter")
	tb.WaitURL(`q=` + sub)
	tb.WantText(sub)

	tb.ClickOn(tb.Page.Locator(".subnav").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Events", Exact: playwright.Bool(true)}))
	tb.WaitURL(`/dashboard/events$`)
	check("Events")
	if _, err := tb.Page.Locator("#type").SelectOption(playwright.SelectOptionValues{Values: &[]string{"payment.*"}}); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Filter")
	tb.WaitURL(`type=payment`)
	rows := tb.Text("#event-list tbody")
	if !strings.Contains(rows, "payment.canceled") || strings.Contains(rows, "customer.created") {
		tb.Errorf("payment events:\n%s", rows)
	}
	tb.ClickOn(tb.Page.Locator("#event-list tbody a").First())
	tb.WaitURL(`/dashboard/events/evt_`)
	check("payment.canceled")
	tb.Click("button", "Resend")
	tb.WantText("Queued for delivery")

	tb.Open(srv.URL + "/dashboard/requests")
	check("API requests")
	tb.WantText("GET /v2/payments/"+debit, "POST /v2/payments")
	tb.Shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-requests")
	if _, err := tb.Page.Locator("#status").SelectOption(playwright.SelectOptionValues{Values: &[]string{"4"}}); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Filter")
	tb.WaitURL(`status=4`)
	tb.WantText("No request matches")
	axe()

	// Home's charts at desktop width, for the README.
	desk := tb.AxeTwin()
	desk.Page.SetViewportSize(1280, 900)
	desk.Open(srv.URL + "/dashboard")
	desk.Axe()
	desk.Shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-overview")
}
