package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
	"github.com/playwright-community/playwright-go"
)

// outsideCards lists the visible elements of the page's main content
// whose right edge passes the right edge of the card, table region or
// main column around them (an event's payload scrolls inside its block).
const outsideCards = `(() => {
	const out = [];
	for (const el of document.querySelectorAll('main *')) {
		const r = el.getBoundingClientRect();
		if (r.width === 0 || r.height === 0) continue;
		if (el.tagName !== 'PRE' && el.closest('pre.payload')) continue; // scrolls inside its block
		const head = el.closest('thead');
		if (head && head.getBoundingClientRect().width <= 1) continue; // a stacked table's header, for screen readers
		const card = el.parentElement.closest('.card, .table-wrap, main');
		const c = card.getBoundingClientRect();
		if (r.right > c.right + 0.5) {
			out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + el.className + ' ends at ' + Math.round(r.right) +
				', its ' + (card.className || card.tagName.toLowerCase()) + ' at ' + Math.round(c.right));
		}
	}
	return out.slice(0, 5).join('; ');
})()`

// TestBrowserDashboardEveryPageNamesPeopleAndFitsAPhone: every signed-in
// page, at 1280 px and at a 390 px phone, passes axe-core with no serious
// or critical violation; on the phone its heading is on the first screen
// (the navigation folds into a menu) and nothing passes its card's right
// edge. The lists and a payment's page name the customer, bank and last
// four digits, with descriptions, return codes, reversal marks, amounts
// grouped in thousands and a sanctions match marked.
func TestBrowserDashboardEveryPageNamesPeopleAndFitsAPhone(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	rc := th.NewReceiver(t, nil)
	h.RegisterWebhook(key, rc.URL())
	ada := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"Baker","email":"ada@baker.example"}`))["user_id"].(string)
	matched := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Mirela","last_name":"Drakovic","email":"m@example.com"}`))["user_id"].(string)
	src := h.VerifiedSource(key, ada, "444455556666")
	th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(matched, "021000021", "777788889999")))
	big := th.WantOK(t, h.Post("/v2/payments", key, `{"funding_source_id":"`+src+`","amount":"9345.67","direction":"debit","description":"Invoice 1042"}`))["payment_id"].(string)
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1234.56"`, "credit")))["payment_id"].(string)
	returned := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+returned+"/return", key, `{"code":"R01"}`))
	settled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"40.00"`, "debit")))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	th.WantOK(t, h.Post("/v2/payments/"+settled+"/reverse", key, `{"reason":"duplicate"}`))
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	h.Deliver()
	var eventID string
	if err := h.SQL().Get(&eventID, `SELECT id FROM events WHERE type = 'payment.reversed' LIMIT 1`); err != nil {
		t.Fatal(err)
	}

	pages := []string{"/dashboard", "/dashboard/customers", "/dashboard/customers/" + ada, "/dashboard/customers/" + matched,
		"/dashboard/funding-sources", "/dashboard/funding-sources/" + src, "/dashboard/payments", "/dashboard/payments/" + big,
		"/dashboard/payments/" + settled, "/dashboard/payments/" + returned, "/dashboard/subscriptions", "/dashboard/events",
		"/dashboard/events/" + eventID, "/dashboard/requests", "/dashboard/webhooks", "/dashboard/settings", "/dashboard/security"}
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 740))
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			for _, p := range pages {
				if status := tb.Open(srv.URL + p); status != 200 {
					tb.Errorf("%s: %d", p, status)
					continue
				}
				tb.Accessible()
				tb.Axe()
				tb.FitsWidth()
				if width > 400 {
					continue
				}
				tb.InsideCards()
				if top := tb.Box("main h1").Y; top > 740-60 {
					tb.Errorf("%s: the heading starts at %.0f px, below the first screen of 740 px", p, top)
				}
				if out := tb.Eval(outsideCards); out != "" {
					tb.Errorf("%s at 390 px: %v", p, out)
				}
			}
			// The menu opens without script and leads on.
			tb.Open(srv.URL + "/dashboard")
			if width <= 400 {
				if visible, _ := tb.Page.Locator(".sidenav").IsVisible(); visible {
					tb.Error("the full navigation shows on a phone")
				}
				tb.ClickOn(tb.Page.Locator(".phone-nav summary"))
				tb.ClickOn(tb.Page.Locator(".phone-nav").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Payments", Exact: playwright.Bool(true)}))
				tb.WaitURL(`/dashboard/payments$`)
			}
		})
	}

	tb := webtest.NewTab(t, webtest.WithViewport(1280, 900))
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Open(srv.URL + "/dashboard/payments")
	// The filter row: search box, selects and button on one line, one height.
	q := tb.Box("#q")
	for _, sel := range []string{"#status", "#direction", ".filters button"} {
		if b := tb.Box(sel); b.Y+b.Height < q.Y+q.Height-1 || b.Y+b.Height > q.Y+q.Height+1 || b.Height < q.Height-1 || b.Height > q.Height+1 {
			tb.Errorf("filter %s is at y=%.0f, %.0f px tall; the search box at y=%.0f, %.0f px tall", sel, b.Y, b.Height, q.Y, q.Height)
		}
	}
	row := func(id string) string { return tb.Text("#payment-" + id) }
	if got := row(big); !containsAll(got, "Ada Baker", "JPMorgan Chase Bank", "•••• 6666", "Invoice 1042", "$9,345.67") {
		tb.Errorf("the large debit's row: %q", got)
	}
	if got := row(credit); !containsAll(got, "$1,234.56 credit") {
		tb.Errorf("the credit's row: %q", got)
	}
	if got := row(returned); !containsAll(got, "failed", "R01") {
		tb.Errorf("the returned debit's row: %q", got)
	}
	if got := row(settled); !containsAll(got, "reversed") {
		tb.Errorf("the reversed debit's row: %q", got)
	}
	if d := tb.Eval(`getComputedStyle(document.querySelector('#payment-list td.date')).whiteSpace`); d != "nowrap" {
		tb.Errorf("a date may wrap: white-space %v", d)
	}
	tb.Open(srv.URL + "/dashboard/payments/" + big)
	if got := tb.Text("#payment-customer") + " " + tb.Text("#payment-source"); !containsAll(got, "Ada Baker", "JPMorgan Chase Bank", "•••• 6666") {
		tb.Errorf("the payment's customer and source: %q", got)
	}
	if got := tb.Text(`xpath=//dt[normalize-space()="Description"]/following-sibling::dd[1]`); got != "Invoice 1042" {
		tb.Errorf("the payment's description: %q, want Invoice 1042", got)
	}
	tb.Open(srv.URL + "/dashboard/customers")
	if got := tb.Text("#customer-" + matched); !strings.Contains(got, "Sanctions match") {
		tb.Errorf("the matched customer's row: %q", got)
	}
	if got := tb.Text("#customer-" + ada); strings.Contains(got, "Sanctions match") {
		tb.Errorf("a clear customer is marked: %q", got)
	}
	tb.Open(srv.URL + "/dashboard/customers/" + matched)
	tb.WantText("Sanctions match", "Mirela Drakovic")
	tb.Open(srv.URL + "/dashboard/customers/" + ada)
	tb.WantText("No match.")
	if got := tb.Text("#customer-payments"); !containsAll(got, big, credit, returned, "$9,345.67") {
		tb.Errorf("the customer's payments: %q", got)
	}
	if got := tb.Text("#customer-subscriptions"); !containsAll(got, sub, "$9.99 weekly") {
		tb.Errorf("the customer's subscriptions: %q", got)
	}
}
