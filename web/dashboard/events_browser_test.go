package dashboard_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserEventsNameWhomTheyAreAbout: the events list names each
// event's customer, bank account and amount, not ids alone; an event
// about no source names nobody.
func TestBrowserEventsNameWhomTheyAreAbout(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	user := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Grace","last_name":"Hopper","email":"grace@example.com"}`))["user_id"].(string)
	src := h.VerifiedSource(key, user, "222222222")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1234.56"`, "credit")))
	webtest.SettleSandbox(t, h)

	tb := webtest.NewTab(t, webtest.WithViewport(1280, 900))
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Open(srv.URL + "/dashboard/events?type=payment.success")
	if got := tb.Text("#event-list tbody tr"); !containsAll(got, "payment.success", "Grace Hopper", "•••• 2222", "$1,234.56") {
		tb.Errorf("the payment's event row: %q", got)
	}
	tb.Open(srv.URL + "/dashboard/events?type=customer.created")
	if got := tb.Text("#event-list tbody tr"); !containsAll(got, "customer.created") || containsAll(got, "••••") {
		tb.Errorf("the customer's event row: %q", got)
	}
	tb.Accessible()
}
