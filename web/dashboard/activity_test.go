package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// activity makes, with the merchant's key, a debit and a credit on a
// Verified source, a canceled credit, and a subscription.
func activity(t *testing.T, h *webtest.Harness, key string) (src, debit, credit, canceled, sub string) {
	t.Helper()
	user := h.Customer(key)
	src = h.VerifiedSource(key, user, "123456789")
	debit = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"12.34"`, "debit")))["payment_id"].(string)
	credit = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "credit")))["payment_id"].(string)
	canceled = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.00"`, "credit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/payments/"+canceled+"/cancel", key, ""))
	start := h.Clock.Now().AddDate(0, 0, 5).Format("2006-01-02")
	sub = th.WantOK(t, h.Post("/v2/subscriptions", key,
		`{"funding_source_id":"`+src+`","amount":"9.99","interval":"monthly","start_date":"`+start+`"}`))["subscription_id"].(string)
	return
}

// rowsOfTable is the text of a page's table body, for "contains" checks
// that must not match the filters' own text.
func rowsOfTable(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	rest := body[i:]
	if j := strings.Index(rest, "</table>"); j >= 0 {
		return rest[:j]
	}
	return rest
}

func TestDashboardPaymentsListFiltersSearchAndDetail(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src, debit, credit, canceled, _ := activity(t, h, key)

	all := webtest.WantPage(t, d.Get("/dashboard/payments"), http.StatusOK, "<h1>Payments</h1>")
	for _, id := range []string{debit, credit, canceled} {
		if !strings.Contains(rowsOfTable(all, "payment-list"), id) {
			t.Errorf("the list lacks %s", id)
		}
	}
	for _, c := range []struct {
		query     string
		want, not []string
	}{
		{"?direction=debit", []string{debit}, []string{credit, canceled}},
		{"?status=canceled", []string{canceled}, []string{debit, credit}},
		{"?status=pending&direction=credit", []string{credit}, []string{debit, canceled}},
		{"?q=" + credit, []string{credit}, []string{debit, canceled}},
		{"?q=pay_nothere", nil, []string{debit, credit, canceled}},
		{"?source=" + src + "&direction=credit", []string{credit, canceled}, []string{debit}},
	} {
		table := rowsOfTable(string(webtest.WantPage(t, d.Get("/dashboard/payments"+c.query), http.StatusOK)), "payment-list")
		for _, id := range c.want {
			if !strings.Contains(table, id) {
				t.Errorf("%s lacks %s", c.query, id)
			}
		}
		for _, id := range c.not {
			if strings.Contains(table, id) {
				t.Errorf("%s shows %s", c.query, id)
			}
		}
	}
	webtest.WantPage(t, d.Get("/dashboard/payments?q=pay_nothere"), http.StatusOK, "No payment matches")
	// An unknown filter value says so and shows everything.
	body := webtest.WantPage(t, d.Get("/dashboard/payments?status=settled"), http.StatusOK, `id="filter-error"`, `There is no status`)
	if !strings.Contains(rowsOfTable(body, "payment-list"), debit) {
		t.Error("an unknown status filter hid the payments")
	}

	webtest.WantPage(t, d.Get("/dashboard/payments/"+debit), http.StatusOK, "$12.34 debit", debit, "/dashboard/funding-sources/"+src, "pending")
	// Another merchant sees none of it.
	other, _ := webtest.SignedIn(t, h, "Other Shop")
	webtest.WantPage(t, other.Get("/dashboard/payments/"+debit), http.StatusNotFound)
	if strings.Contains(string(other.Get("/dashboard/payments?q="+debit).Body), "/dashboard/payments/"+debit) {
		t.Error("another merchant found the payment by id")
	}
	// The source's page links to its payments and to each payment.
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+src), http.StatusOK,
		`href="/dashboard/payments?source=`+src+`"`, `href="/dashboard/payments/`+debit+`"`, `href="/dashboard/requests"`)
}

func TestDashboardSubscriptionsAndEvents(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src, _, _, _, sub := activity(t, h, key)

	webtest.WantPage(t, d.Get("/dashboard/subscriptions"), http.StatusOK, sub, "$9.99 monthly", "/dashboard/funding-sources/"+src)
	webtest.WantPage(t, d.Get("/dashboard/subscriptions?q="+sub), http.StatusOK, sub)
	if body := string(d.Get("/dashboard/subscriptions?status=canceled").Body); strings.Contains(rowsOfTable(body, "subscription-list"), sub) {
		t.Error("an active subscription is listed as canceled")
	}

	events := th.WantOK(t, h.Get("/v2/events?type=payment.*", key))["data"].([]any)
	if len(events) == 0 {
		t.Fatal("no payment events")
	}
	canceledEvent := events[0].(map[string]any)["id"].(string)
	all := rowsOfTable(webtest.WantPage(t, d.Get("/dashboard/events"), http.StatusOK), "event-list")
	for _, typ := range []string{"customer.created", "funding_source.verified", "payment.canceled", "subscription.created"} {
		if !strings.Contains(all, typ) {
			t.Errorf("the event list lacks %s", typ)
		}
	}
	byType := rowsOfTable(webtest.WantPage(t, d.Get("/dashboard/events?type=funding_source.*"), http.StatusOK), "event-list")
	if !strings.Contains(byType, "funding_source.verified") || strings.Contains(byType, "customer.created") {
		t.Errorf("events of funding_source.*:\n%s", byType)
	}
	webtest.WantPage(t, d.Get("/dashboard/events?q="+canceledEvent), http.StatusOK, `href="/dashboard/events/`+canceledEvent+`"`)
	webtest.WantPage(t, d.Get("/dashboard/events?q=evt_nothere"), http.StatusOK, "No event matches")
	// The detail page shows the deliveries, and resends with a webhook URL.
	h.RegisterWebhook(key, "https://hooks.example/a")
	webtest.WantPage(t, d.Get("/dashboard/events/"+canceledEvent), http.StatusOK, `href="/dashboard/events"`, "Resend")
	p := d.Post("/dashboard/events/"+canceledEvent+"/resend", nil)
	webtest.WantPage(t, d.Follow(p), http.StatusOK, "Queued for delivery")
}

func TestDashboardRequestLog(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	other, otherKey := webtest.SignedIn(t, h, "Other Shop")
	ok := h.Get("/v2/customers", key)
	th.WantOK(t, ok)
	bad := h.Post("/v2/customers", key, `{"first_name":""}`)
	th.WantError(t, bad, http.StatusBadRequest, "invalid_request")
	h.Get("/v2/customers", otherKey)
	h.Get("/v2/customers", "sk_test_"+strings.Repeat("Z", 43)) // no merchant: not logged
	okID, badID := ok.Header.Get("X-Request-Id"), bad.Header.Get("X-Request-Id")

	table := rowsOfTable(webtest.WantPage(t, d.Get("/dashboard/requests"), http.StatusOK, "<h1>API requests</h1>"), "request-list")
	for _, want := range []string{okID, badID, "GET /v2/customers", "POST /v2/customers", ">200<", ">400<", " ms"} {
		if !strings.Contains(table, want) {
			t.Errorf("the request log lacks %q:\n%s", want, table)
		}
	}
	if strings.Count(table, "<tr><td>") != 2 {
		t.Errorf("the log shows %d requests, want this merchant's 2:\n%s", strings.Count(table, "<tr><td>"), table)
	}
	for query, want := range map[string]string{"?status=4": badID, "?method=GET": okID, "?q=" + okID: okID} {
		got := rowsOfTable(string(d.Get("/dashboard/requests"+query).Body), "request-list")
		if strings.Count(got, "<tr><td>") != 1 || !strings.Contains(got, want) {
			t.Errorf("%s:\n%s", query, got)
		}
	}
	if body := string(other.Get("/dashboard/requests?q=" + okID).Body); strings.Contains(body, "GET /v2/customers") {
		t.Error("another merchant sees the request")
	}
	webtest.WantPage(t, d.Get("/dashboard/requests?method=PATCH"), http.StatusOK, "There is no method")
	// Bodies are never kept.
	var stored, withBody int
	if err := h.SQL().Get(&stored, `SELECT count(*) FROM api_request_batches`); err != nil || stored == 0 {
		t.Fatalf("the log's stored batches: %d, %v", stored, err)
	}
	if err := h.SQL().Get(&withBody, `SELECT count(*) FROM api_request_batches WHERE position('first_name'::bytea IN body) > 0`); err != nil || withBody != 0 {
		t.Errorf("a body reached the log: %d batches, %v", withBody, err)
	}
}
