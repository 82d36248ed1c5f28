package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// clockCount is how many clocks the merchant of key has.
func clockCount(t *testing.T, h *webtest.Harness, key string) int {
	t.Helper()
	return len(th.WantOK(t, h.Get("/v2/sandbox/test-clocks?limit=100", key))["data"].([]any))
}

// TestDashboardTestClockRefusals: a create the service refuses (a frozen
// time in the past, a name too long) shows its message on the page with
// the form as typed and stores nothing; a time that does not read is
// refused the same way; a form from another site is refused before
// anything runs; an advance the service refuses comes back as its
// message; an unknown clock is the 404 page.
func TestDashboardTestClockRefusals(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	webtest.WantPage(t, d.Get("/dashboard/test-clocks"), http.StatusOK, "No test clocks yet", `value="2026-11-02T15:05"`)

	// The harness's time is 2026-11-02 15:04:05 UTC.
	p := d.Post("/dashboard/test-clocks", url.Values{"name": {"Past"}, "frozen_time": {"2026-11-02T15:03"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, "Frozen_time must not be in the past.",
		`aria-invalid="true"`, `value="Past"`, `value="2026-11-02T15:03"`)
	p = d.Post("/dashboard/test-clocks", url.Values{"name": {strings.Repeat("n", 101)}, "frozen_time": {"2026-11-03T09:00"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, "Name must be 1 to 100 characters.")
	p = d.Post("/dashboard/test-clocks", url.Values{"frozen_time": {"soon"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, "Enter the frozen time as a date and a time.")
	p = d.Do(http.MethodPost, "/dashboard/test-clocks", url.Values{"frozen_time": {"2026-11-03T09:00"}},
		map[string]string{"Sec-Fetch-Site": "cross-site"})
	webtest.WantPage(t, p, http.StatusForbidden, "This form was sent from another site")
	if n := clockCount(t, h, key); n != 0 {
		t.Fatalf("refused creations stored %d clocks", n)
	}

	// At the current time exactly (the field left empty) is allowed.
	p = d.Follow(d.Post("/dashboard/test-clocks", url.Values{"frozen_time": {""}}))
	webtest.WantPage(t, p, http.StatusOK, "at Mon, Nov 2, 2026, 15:04 UTC.", "2026-11-02T15:04:05Z")
	id := th.WantOK(t, h.Get("/v2/sandbox/test-clocks?limit=100", key))["data"].([]any)[0].(map[string]any)["test_clock_id"].(string)
	if p.Header.Get("Refresh") != "" {
		t.Error("a page of ready clocks reloads itself")
	}

	// An advance backwards: the service's words, nothing changed.
	p = d.Follow(d.Post("/dashboard/test-clocks/"+id+"/advance", url.Values{"frozen_time": {"2026-11-01T09:00"}}))
	webtest.WantPage(t, p, http.StatusOK, "Frozen_time must be later than the clock&#39;s frozen_time 2026-11-02T15:04:05Z.")
	p = d.Follow(d.Post("/dashboard/test-clocks/"+id+"/advance", url.Values{"by": {"3y"}}))
	webtest.WantPage(t, p, http.StatusOK, "Choose one of the quick advances.")
	p = d.Do(http.MethodPost, "/dashboard/test-clocks/"+id+"/delete", url.Values{}, map[string]string{"Origin": "https://evil.example"})
	webtest.WantPage(t, p, http.StatusForbidden)
	if got := th.WantOK(t, h.Get("/v2/sandbox/test-clocks/"+id, key)); got["status"] != "ready" || got["frozen_time"] != "2026-11-02T15:04:05Z" {
		t.Errorf("clock after refused actions: %s", th.MustJSON(got))
	}
	webtest.WantPage(t, d.Post("/dashboard/test-clocks/clk_unknown/delete", url.Values{}), http.StatusNotFound)
	webtest.WantPage(t, d.Post("/dashboard/test-clocks/clk_unknown/advance", url.Values{"by": {"1d"}}), http.StatusNotFound)

	// Advancing: the page reloads itself, an advance or delete is refused.
	p = d.Follow(d.Post("/dashboard/test-clocks/"+id+"/advance", url.Values{"frozen_time": {"2026-12-01T09:00"}}))
	webtest.WantPage(t, p, http.StatusOK, "to Tue, Dec 1, 2026, 09:00 UTC.", "A clock is advancing")
	if p.Header.Get("Refresh") == "" {
		t.Error("a page with an advancing clock does not reload itself")
	}
	p = d.Follow(d.Post("/dashboard/test-clocks/"+id+"/delete", url.Values{}))
	webtest.WantPage(t, p, http.StatusOK, "This test clock is advancing; delete it once its status is ready.")
	if n := clockCount(t, h, key); n != 1 {
		t.Errorf("clocks after refused delete = %d", n)
	}
}

// TestDashboardTestClocksProduction: production's page offers no form,
// and a post there is refused without touching the sandbox's clocks.
func TestDashboardTestClocksProduction(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	h.Production(m)
	d := webtest.NewDash(h)
	d.SignIn(m.Merchant.Email, "correct horse battery")
	d.Follow(d.Post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/test-clocks"}}))
	p := d.Get("/dashboard/test-clocks")
	body := webtest.WantPage(t, p, http.StatusOK, "Test clocks are sandbox only")
	if strings.Contains(body, `action="/dashboard/test-clocks`) {
		t.Error("production's clocks page has a clock form")
	}
	p = d.Follow(d.Post("/dashboard/test-clocks", url.Values{"frozen_time": {"2026-11-03T09:00"}}))
	webtest.WantPage(t, p, http.StatusOK, "Test clocks are sandbox only; switch to Sandbox to use them.")
	if n := clockCount(t, h, m.Sandbox.SecretKey); n != 0 {
		t.Errorf("a production post created %d clocks", n)
	}
}

// TestDashboardClockMarks: a customer on a clock, its funding source and
// its payment name the clock and its time on their pages and lists; a
// customer on the wall clock names none.
func TestDashboardClockMarks(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	id := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-11-10T09:00:00Z","name":"Dunning"}`))["test_clock_id"].(string)
	cus := th.WantOK(t, h.Post("/v2/customers", key,
		fmt.Sprintf(`{"first_name":"Ada","last_name":"Clock","email":"ada@example.com","test_clock":%q}`, id)))["user_id"].(string)
	plain := h.Customer(key)
	plainSrc := h.Source(key, plain, "987654321")
	src := h.VerifiedSource(key, cus, "123456789")
	pay := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"12.00"`, "debit")))["payment_id"].(string)
	mark := "Tue, Nov 10, 2026, 09:00 UTC"

	webtest.WantPage(t, d.Get("/dashboard/customers/"+cus), http.StatusOK, `id="clock-mark"`, "Dunning", mark)
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+src), http.StatusOK, `id="clock-mark"`, "Dunning", mark)
	webtest.WantPage(t, d.Get("/dashboard/payments/"+pay), http.StatusOK, `id="clock-mark"`, "Dunning", mark)
	webtest.WantPage(t, d.Get("/dashboard/customers"), http.StatusOK, "Test clock Dunning at "+mark)
	webtest.WantPage(t, d.Get("/dashboard/funding-sources"), http.StatusOK, "Test clock Dunning at "+mark)
	webtest.WantPage(t, d.Get("/dashboard/payments"), http.StatusOK, "Test clock Dunning at "+mark)
	if body := webtest.WantPage(t, d.Get("/dashboard/customers/"+plain), http.StatusOK); strings.Contains(body, "clock-mark") {
		t.Error("a customer on the wall clock shows a clock")
	}
	if body := webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+plainSrc), http.StatusOK); strings.Contains(body, "clock-mark") {
		t.Error("a source on the wall clock shows a clock")
	}
	if body := webtest.WantPage(t, d.Get("/dashboard/funding-sources?q=4321"), http.StatusOK, "•••• 4321"); strings.Contains(body, "clock-chip") {
		t.Error("a list of wall-clock sources shows a clock")
	}
	list := webtest.WantPage(t, d.Get("/dashboard/test-clocks"), http.StatusOK, "Ada Clock", "/dashboard/customers/"+cus)
	if strings.Contains(list, plain) {
		t.Error("the clocks page lists a customer on the wall clock")
	}
}

// TestDashboardClockCustomersShown: the clocks page names ten of a
// clock's customers (the newest; on one clock time they tie, so any ten)
// and counts the rest; another merchant's customers on its own clock are
// not counted.
func TestDashboardClockCustomersShown(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	other := h.Merchant("Other Shop").Sandbox.SecretKey
	id := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-11-10T09:00:00Z"}`))["test_clock_id"].(string)
	theirs := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", other, `{"frozen_time":"2026-11-10T09:00:00Z"}`))["test_clock_id"].(string)
	for i := range 12 {
		th.WantOK(t, h.Post("/v2/customers", key, fmt.Sprintf(`{"first_name":"N%02d","last_name":"L","email":"n%d@example.com","test_clock":%q}`, i, i, id)))
	}
	th.WantOK(t, h.Post("/v2/customers", other, fmt.Sprintf(`{"first_name":"Theirs","last_name":"L","email":"t@example.com","test_clock":%q}`, theirs)))
	body := webtest.WantPage(t, d.Get("/dashboard/test-clocks"), http.StatusOK,
		`<dd class="clock-customers">12</dd>`, "and 2 more.", "its 12 customers with")
	if n := strings.Count(body, `<li><a href="/dashboard/customers/`); n != 10 {
		t.Errorf("the clock names %d customers, want 10", n)
	}
	for _, absent := range []string{"Theirs", theirs} {
		if strings.Contains(body, absent) {
			t.Errorf("the clocks page shows %q", absent)
		}
	}
}

// TestDashboardTestClocksFull: at 20 clocks the page offers no create
// form, and a create posted anyway shows the service's limit and stores
// nothing.
func TestDashboardTestClocksFull(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	for range 19 {
		th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-11-10T09:00:00Z"}`))
	}
	body := webtest.WantPage(t, d.Get("/dashboard/test-clocks"), http.StatusOK)
	if !strings.Contains(body, `id="clock-frozen-time"`) {
		t.Error("19 clocks: no create form")
	}
	th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-11-10T09:00:00Z"}`))
	body = webtest.WantPage(t, d.Get("/dashboard/test-clocks"), http.StatusOK, "You have 20 test clocks, the most an account may have.")
	if strings.Contains(body, `id="clock-frozen-time"`) {
		t.Error("20 clocks: the create form is still offered")
	}
	p := d.Post("/dashboard/test-clocks", url.Values{"frozen_time": {"2026-11-10T09:00"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, "A merchant has at most 20 test clocks; delete one first.")
	if n := clockCount(t, h, key); n != 20 {
		t.Errorf("clocks = %d", n)
	}
}

// rowOf is the table row or list item of body whose id (or link) is
// marker, up to its end: what one object of a list shows.
func rowOf(t *testing.T, body, marker string) string {
	t.Helper()
	i := strings.Index(body, marker)
	if i < 0 {
		t.Fatalf("the page has no %s", marker)
	}
	rest := body[i:]
	end := len(rest)
	for _, close := range []string{"</tr>", "</li>"} {
		if j := strings.Index(rest, close); j >= 0 && j < end {
			end = j
		}
	}
	return rest[:end]
}

// TestDashboardClockMarksOfActivity: a clocked customer's subscription,
// mandate, payment and events name the clock, linked to it, on every
// page that lists them (an event at the clock's time when it happened,
// not the clock's time now); a wall-clock customer's show none.
func TestDashboardClockMarksOfActivity(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	d, key := webtest.NewDash(h), m.Sandbox.SecretKey
	d.SignIn(m.Merchant.Email, "correct horse battery")
	clk := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-11-10T09:00:00Z","name":"Dunning"}`))["test_clock_id"].(string)
	link := `href="/dashboard/test-clocks#clock-` + clk + `"`

	type party struct{ cus, src, pay, sub, mandate string }
	setUp := func(body, account string) party {
		var p party
		p.cus = th.WantOK(t, h.Post("/v2/customers", key, body))["user_id"].(string)
		p.src = h.VerifiedSource(key, p.cus, account)
		p.pay = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(p.src, `"12.00"`, "debit")))["payment_id"].(string)
		p.sub = th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(p.src, "9.99", "monthly", "2026-12-01")))["subscription_id"].(string)
		p.mandate = th.WantOK(t, h.Get("/v2/mandates?funding_source_id="+p.src, key))["data"].([]any)[0].(map[string]any)["mandate_id"].(string)
		return p
	}
	plain := setUp(`{"first_name":"Wall","last_name":"Time","email":"wall@example.com"}`, "987654321")
	on := setUp(fmt.Sprintf(`{"first_name":"Ada","last_name":"Clock","email":"ada@example.com","test_clock":%q}`, clk), "123456789")
	events := th.WantOK(t, h.Get("/v2/events?type=customer.created", key))["data"].([]any)
	created := map[string]string{} // the customers' customer.created events by customer
	for _, e := range events {
		e := e.(map[string]any)
		created[e["data"].(map[string]any)["user_id"].(string)] = e["id"].(string)
	}

	// The clock moves on; the customer's objects show its time now, its
	// events the time they happened.
	th.WantOK(t, h.Post("/v2/sandbox/test-clocks/"+clk+"/advance", key, `{"frozen_time":"2026-11-17T09:00:00Z"}`))
	if _, err := h.Svc.TestClocks.MarkReady(t.Context(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, clk); err != nil {
		t.Fatal(err)
	}
	nowAt, thenAt := "Tue, Nov 17, 2026, 09:00 UTC", "Tue, Nov 10, 2026, 09:00 UTC"
	now, then := "Test clock Dunning at "+nowAt, "Test clock Dunning at "+thenAt
	th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Late","last_name":"Wall","email":"late@example.com"}`))

	wantMark := func(where, row, text string) {
		t.Helper()
		if !strings.Contains(row, text) || !strings.Contains(row, link) {
			t.Errorf("%s: want %q linked to the clock, got %s", where, text, row)
		}
	}
	// wantLine: a page's clock line, at the time.
	wantLine := func(where, body, at string) {
		t.Helper()
		if !strings.Contains(body, `id="clock-mark"`) {
			t.Errorf("%s names no clock", where)
		}
		wantMark(where, body, `<span class="clock-time">`+at+`</span>`)
	}
	wantNone := func(where, row string) {
		t.Helper()
		if strings.Contains(row, "clock-chip") || strings.Contains(row, "clock-mark") {
			t.Errorf("%s: a wall-clock object shows a clock: %s", where, row)
		}
	}

	subs := webtest.WantPage(t, d.Get("/dashboard/subscriptions"), http.StatusOK)
	wantMark("subscriptions list", rowOf(t, subs, `id="subscription-`+on.sub+`"`), now)
	wantNone("subscriptions list", rowOf(t, subs, `id="subscription-`+plain.sub+`"`))
	wantMark("subscription search", rowOf(t, webtest.WantPage(t, d.Get("/dashboard/subscriptions?q="+on.sub), http.StatusOK),
		`id="subscription-`+on.sub+`"`), now)
	wantMark("payment search", rowOf(t, webtest.WantPage(t, d.Get("/dashboard/payments?q="+on.pay), http.StatusOK),
		`id="payment-`+on.pay+`"`), now)

	for _, c := range []struct {
		who   party
		check func(where, row string)
	}{
		{on, func(where, row string) { t.Helper(); wantMark(where, row, now) }},
		{plain, wantNone},
	} {
		src := webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+c.who.src), http.StatusOK)
		c.check("source's mandate", rowOf(t, src, `id="mandate-`+c.who.mandate+`"`))
		c.check("source's subscription", rowOf(t, src, `id="subscription-`+c.who.sub+`"`))
		c.check("source's payment", rowOf(t, src, `id="payment-`+c.who.pay+`"`))
		cus := webtest.WantPage(t, d.Get("/dashboard/customers/"+c.who.cus), http.StatusOK)
		c.check("customer's subscription", rowOf(t, cus, `id="subscription-`+c.who.sub+`"`))
		c.check("customer's payment", rowOf(t, cus, `id="payment-`+c.who.pay+`"`))
		c.check("customer's source", rowOf(t, cus, `href="/dashboard/funding-sources/`+c.who.src+`"`))
	}
	wantLine("a clocked payment's evidence", webtest.WantPage(t, d.Get("/dashboard/payments/"+on.pay+"/evidence"), http.StatusOK), nowAt)
	wantNone("evidence", webtest.WantPage(t, d.Get("/dashboard/payments/"+plain.pay+"/evidence"), http.StatusOK))

	// Events: at the clock's time when they happened.
	list := webtest.WantPage(t, d.Get("/dashboard/events?type=customer.created"), http.StatusOK)
	wantMark("events list", rowOf(t, list, `id="event-`+created[on.cus]+`"`), then)
	wantNone("events list", rowOf(t, list, `id="event-`+created[plain.cus]+`"`))
	wantMark("event search", rowOf(t, webtest.WantPage(t, d.Get("/dashboard/events?q="+created[on.cus]), http.StatusOK),
		`id="event-`+created[on.cus]+`"`), then)
	page := webtest.WantPage(t, d.Get("/dashboard/events/"+created[on.cus]), http.StatusOK)
	wantLine("a clocked event's page", page, thenAt)
	if strings.Contains(page, nowAt) {
		t.Error("the event page shows the clock's time now, not the event's")
	}
	wantNone("event page", webtest.WantPage(t, d.Get("/dashboard/events/"+created[plain.cus]), http.StatusOK))
	src := webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+on.src), http.StatusOK)
	var srcEvent string
	for _, e := range th.WantOK(t, h.Get("/v2/events?type=funding_source.created", key))["data"].([]any) {
		if e := e.(map[string]any); e["data"].(map[string]any)["funding_source_id"] == on.src {
			srcEvent = e["id"].(string)
		}
	}
	wantMark("source's event", rowOf(t, src, `href="/dashboard/events/`+srcEvent+`"`), then)

	// The newest events, on the events page and in the delivery log: a
	// clocked event shows its clock time, a wall-clock one nothing.
	all := webtest.WantPage(t, d.Get("/dashboard/events"), http.StatusOK)
	log := webtest.WantPage(t, d.Get("/dashboard/webhooks"), http.StatusOK)
	clocked, wall := 0, 0
	for _, e := range th.WantOK(t, h.Get("/v2/events?limit=10", key))["data"].([]any) {
		e := e.(map[string]any)
		id := e["id"].(string)
		rows := map[string]string{"events list": rowOf(t, all, `id="event-`+id+`"`), "delivery log": rowOf(t, log, `href="/dashboard/events/`+id+`"`)}
		for where, row := range rows {
			if e["test_clock"] == nil {
				wantNone(where, row)
				continue
			}
			at, err := time.Parse(time.RFC3339, e["clock_time"].(string))
			if err != nil {
				t.Fatal(err)
			}
			wantMark(where, row, "Test clock Dunning at "+at.Format("Mon, Jan 2, 2006, 15:04 UTC"))
		}
		if e["test_clock"] == nil {
			wall++
		} else {
			clocked++
		}
	}
	if clocked == 0 || wall == 0 {
		t.Errorf("the newest events: %d on the clock, %d on the wall clock; want some of each", clocked, wall)
	}
}
