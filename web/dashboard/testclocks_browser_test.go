package dashboard_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/playwright-community/playwright-go"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserDashboardTestClocks: with JavaScript off, at 1280 and 390 px,
// the Test clocks page creates a clock, lists it with the customer the API
// put on it (whose page names the clock and its time), asks for an advance
// by a quick choice and then shows the clock advancing with neither
// advance nor delete offered, and deletes a ready clock once its
// disclosure, which says it deletes everything on the clock, is opened.
func TestBrowserDashboardTestClocks(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			checkPage := tb.PageChecks()
			check := func() {
				t.Helper()
				tb.InsideCards()
				checkPage()
			}
			tb.Click("link", "Test clocks")
			tb.WaitURL(`/dashboard/test-clocks$`)
			check()

			name := fmt.Sprintf("Renewals %d", width)
			tb.Fill("Name (optional)", name)
			tb.Fill("Frozen time (UTC)", "2026-11-10T09:00")
			tb.Click("button", "Create the clock")
			tb.WaitURL(`/dashboard/test-clocks$`)
			tb.WantText("Created test clock " + name + " at Tue, Nov 10, 2026, 09:00 UTC.")
			id := clockNamed(t, h, key, name)
			card := "#clock-" + id
			if got := tb.Text(card + " .clock-status"); got != "ready" {
				tb.Errorf("new clock's status = %q", got)
			}

			first := fmt.Sprintf("Clocked%d", width)
			cus := th.WantOK(t, h.Post("/v2/customers", key,
				fmt.Sprintf(`{"first_name":%q,"last_name":"Reader","email":"clocked%d@example.com","test_clock":%q}`, first, width, id)))["user_id"].(string)
			tb.Open(srv.URL + "/dashboard/test-clocks")
			if got := tb.Text(card + " .clock-customers"); got != "1" {
				tb.Errorf("customers on the clock = %q", got)
			}
			tb.WantText("2026-11-10T09:00:00Z")
			check()
			tb.ClickOn(tb.Page.Locator(card).GetByRole("link", playwright.LocatorGetByRoleOptions{Name: first + " Reader"}))
			tb.WaitURL(`/dashboard/customers/` + cus + `$`)
			if got := tb.Text("#clock-mark"); got != "Test clock "+name+" at Tue, Nov 10, 2026, 09:00 UTC" {
				tb.Errorf("customer page's clock line = %q", got)
			}
			check()
			tb.Open(srv.URL + "/dashboard/customers")
			tb.WantText("Test clock " + name + " at Tue, Nov 10, 2026, 09:00 UTC")

			// The customer's subscription, mandate and events name the
			// clock too, each with its chip linked to the clock; the
			// pages fit the window.
			chip := "Test clock " + name + " at Tue, Nov 10, 2026, 09:00 UTC"
			src := h.VerifiedSource(key, cus, fmt.Sprintf("%09d", width))
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"12.00"`, "debit")))
			sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "monthly", "2026-12-01")))["subscription_id"].(string)
			wantChip := func(selector string) {
				t.Helper()
				if got := tb.Text(selector + " .clock-chip"); got != chip {
					tb.Errorf("%s: the clock chip says %q, want %q", selector, got, chip)
				}
				if href, _ := tb.Page.Locator(selector + " .clock-chip").First().GetAttribute("href"); href != "/dashboard/test-clocks#clock-"+id {
					tb.Errorf("%s: the clock chip links to %q", selector, href)
				}
			}
			tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
			wantChip("#mandates")
			wantChip("#subscription-" + sub)
			wantChip("#source-events")
			check()
			tb.Open(srv.URL + "/dashboard/subscriptions")
			wantChip("#subscription-" + sub)
			check()
			created := eventAbout(t, h, key, "customer.created", "user_id", cus)
			tb.Open(srv.URL + "/dashboard/events?type=customer.created")
			wantChip("#event-" + created)
			check()
			tb.ClickOn(tb.Page.Locator("#event-" + created + " a.mono"))
			tb.WaitURL(`/dashboard/events/` + created + `$`)
			if got := tb.Text("#clock-mark"); got != chip {
				tb.Errorf("event page's clock line = %q", got)
			}
			check()
			logged := `#delivery-log tr:has(a[href="/dashboard/events/` + eventAbout(t, h, key, "subscription.created", "subscription_id", sub) + `"])`
			tb.Open(srv.URL + "/dashboard/webhooks")
			wantChip(logged)
			check()
			tb.ClickOn(tb.Page.Locator(logged + " .clock-chip"))
			tb.WaitURL(`/dashboard/test-clocks#clock-` + id + `$`)

			// Advance by a quick choice: the clock then advances, and
			// offers nothing until it is ready.
			tb.Open(srv.URL + "/dashboard/test-clocks")
			tb.ClickOn(tb.Page.Locator(card + " .advance-action summary"))
			tb.ClickOn(tb.Page.Locator(card).GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "+1 week", Exact: playwright.Bool(true)}))
			tb.WaitURL(`/dashboard/test-clocks$`)
			tb.WantText("Advancing "+name+" to Tue, Nov 17, 2026, 09:00 UTC.", "A clock is advancing")
			if got := tb.Text(card + " .clock-status"); got != "advancing to Tue, Nov 17, 2026, 09:00 UTC" {
				tb.Errorf("advancing clock's status = %q", got)
			}
			if n, _ := tb.Page.Locator(card + " form").Count(); n != 0 {
				tb.Errorf("an advancing clock offers %d forms", n)
			}
			check()
			if got := th.WantOK(t, h.Get("/v2/sandbox/test-clocks/"+id, key)); got["status"] != "advancing" || got["advance_to"] != "2026-11-17T09:00:00Z" {
				tb.Errorf("clock after the page's advance: %s", th.MustJSON(got))
			}

			// Delete a ready clock: the disclosure says what goes.
			scratch := fmt.Sprintf("Scratch %d", width)
			tb.Fill("Name (optional)", scratch)
			tb.Click("button", "Create the clock")
			tb.WaitURL(`/dashboard/test-clocks$`)
			// The page's message says the post has been answered: only then
			// does the API have the clock to read.
			tb.WantText("Created test clock " + scratch + " at ")
			other := clockNamed(t, h, key, scratch)
			del := tb.Page.Locator("#clock-"+other).GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Delete the clock and everything on it"})
			if ok, _ := del.IsVisible(); ok {
				tb.Error("the delete button shows before its disclosure is opened")
			}
			tb.ClickOn(tb.Page.Locator("#clock-" + other + " .delete-action summary"))
			tb.WantText("This deletes the clock and everything on it: its 0 customers with their funding sources, payments, subscriptions, mandates and events.")
			check()
			tb.ClickOn(del)
			tb.WaitURL(`/dashboard/test-clocks$`)
			tb.WantText("Deleted test clock " + scratch + " and everything on it.")
			if n, _ := tb.Page.Locator("#clock-" + other).Count(); n != 0 {
				tb.Error("the deleted clock is still listed")
			}
			if r := h.Get("/v2/sandbox/test-clocks/"+other, key); r.Code != http.StatusNotFound {
				tb.Errorf("deleted clock: %d", r.Code)
			}
		})
	}
}

// TestBrowserDashboardTestClocksProduction: in production the page says
// clocks are sandbox only and offers no form of its own.
func TestBrowserDashboardTestClocksProduction(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	h.Production(m)
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			tb.Choose("#env-select", "production")
			tb.Click("button", "Switch")
			tb.WaitURL(`/dashboard$`)
			tb.Open(srv.URL + "/dashboard/test-clocks")
			tb.WantText("Test clocks are sandbox only")
			if n, _ := tb.Page.Locator("main.app form").Count(); n != 0 {
				tb.Errorf("production's clocks page offers %d forms", n)
			}
			tb.Accessible()
			tb.FitsWidth()
		})
	}
}

// eventAbout is the id of the merchant's newest event of the type whose
// data's field is value.
func eventAbout(t *testing.T, h *webtest.Harness, key, typ, field, value string) string {
	t.Helper()
	for _, e := range th.WantOK(t, h.Get("/v2/events?limit=100&type="+typ, key))["data"].([]any) {
		if e := e.(map[string]any); e["data"].(map[string]any)[field] == value {
			return e["id"].(string)
		}
	}
	t.Fatalf("no %s event with %s %s", typ, field, value)
	return ""
}

// clockNamed is the id of the merchant's clock with the name.
func clockNamed(t *testing.T, h *webtest.Harness, key, name string) string {
	t.Helper()
	for _, k := range th.WantOK(t, h.Get("/v2/sandbox/test-clocks?limit=100", key))["data"].([]any) {
		if k := k.(map[string]any); k["name"] == name {
			return k["test_clock_id"].(string)
		}
	}
	t.Fatalf("no clock named %q", name)
	return ""
}
