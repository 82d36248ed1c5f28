package web_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardActivityPages walks the Payments, Subscriptions,
// Events and API requests pages at 390 px with JavaScript off: each page
// is reached by its links, filtered with its form, passes axe-core and
// fits the phone's width.
func TestBrowserDashboardActivityPages(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src, debit, credit, _, sub := activity(t, h, key)
	h.RegisterWebhook(key, "https://hooks.example/a")
	th.WantOK(t, h.Get("/v2/payments/"+debit, key))

	tb := newTab(t, withViewport(390, 844), withoutJavaScript)
	tb.signIn(srv.URL, m.Merchant.Email, "correct horse battery")
	twin := tb.axeTwin()
	axe := func() {
		t.Helper()
		twin.open(tb.page.URL())
		twin.axe()
	}
	check := func(heading string) {
		t.Helper()
		if got := tb.text("h1"); got != heading {
			t.Errorf("%s: heading %q, want %q", tb.page.URL(), got, heading)
		}
		tb.accessible()
		tb.fitsWidth()
		axe()
	}

	// Home's charts, each with its table.
	tb.open(srv.URL + "/dashboard")
	tb.wantText("The last 30 days", "Verification funnel by method", "Debit return rate by day")
	if n := tb.eval(`document.querySelectorAll('#overview svg[role=img] title').length`); fmt.Sprint(n) != "6" {
		t.Errorf("charts with a title: %v, want 6", n)
	}
	tb.fitsWidth()
	axe()

	// From the source's page to its payments, then to one payment.
	tb.open(srv.URL + "/dashboard/funding-sources/" + src)
	axe()
	tb.click("link", "Every payment of this funding source")
	check("Payments")
	tb.wantText(debit, credit)
	if _, err := tb.page.Locator("#direction").SelectOption(playwright.SelectOptionValues{Values: &[]string{"debit"}}); err != nil {
		t.Fatal(err)
	}
	tb.click("button", "Filter")
	tb.waitURL(`direction=debit`)
	if rows := tb.text("#payment-list tbody"); !strings.Contains(rows, debit) || strings.Contains(rows, credit) {
		t.Errorf("debits only:\n%s", rows)
	}
	tb.click("link", debit)
	check("$12.34 debit")
	tb.shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-payment")

	// The activity pages link to one another.
	tb.open(srv.URL + "/dashboard/payments")
	tb.click("link", "Subscriptions")
	check("Subscriptions")
	tb.wantText(sub, "$9.99 monthly")
	tb.fill("Search by subscription id", sub)
	tb.click("button", "Filter")
	tb.waitURL(`q=` + sub)
	tb.wantText(sub)

	if err := tb.page.Locator(".subnav").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Events", Exact: playwright.Bool(true)}).Click(); err != nil {
		t.Fatal(err)
	}
	tb.waitURL(`/dashboard/events$`)
	check("Events")
	if _, err := tb.page.Locator("#type").SelectOption(playwright.SelectOptionValues{Values: &[]string{"payment.*"}}); err != nil {
		t.Fatal(err)
	}
	tb.click("button", "Filter")
	tb.waitURL(`type=payment`)
	rows := tb.text("#event-list tbody")
	if !strings.Contains(rows, "payment.canceled") || strings.Contains(rows, "customer.created") {
		t.Errorf("payment events:\n%s", rows)
	}
	if err := tb.page.Locator("#event-list tbody a").First().Click(); err != nil {
		t.Fatal(err)
	}
	tb.waitURL(`/dashboard/events/evt_`)
	check("payment.canceled")
	tb.click("button", "Resend")
	tb.wantText("Queued for delivery")

	tb.open(srv.URL + "/dashboard/requests")
	check("API requests")
	tb.wantText("GET /v2/payments/"+debit, "POST /v2/payments")
	tb.shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-requests")
	if _, err := tb.page.Locator("#status").SelectOption(playwright.SelectOptionValues{Values: &[]string{"4"}}); err != nil {
		t.Fatal(err)
	}
	tb.click("button", "Filter")
	tb.waitURL(`status=4`)
	tb.wantText("No request matches")
	axe()

	// Home's charts at desktop width, for the README.
	desk := tb.axeTwin()
	desk.page.SetViewportSize(1280, 900)
	desk.open(srv.URL + "/dashboard")
	desk.axe()
	desk.shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-overview")
}
