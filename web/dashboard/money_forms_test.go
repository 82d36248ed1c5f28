package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestDashboardCancelsAHeldPayment: a payment held for review offers
// Cancel on its page, and the form's post cancels it, with its event.
func TestDashboardCancelsAHeldPayment(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	payout := h.Source(key, h.Customer(key), "444444444")
	held := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(payout, `"1000.01"`, "credit")))
	if held["status"] != "held" {
		t.Fatalf("credit to an unverified source: %s", th.MustJSON(held))
	}
	id := held["payment_id"].(string)
	webtest.WantPage(t, d.Get("/dashboard/payments/"+id), http.StatusOK, "Held for review", "Cancel this payment", `action="/dashboard/payments/`+id+`/cancel"`)

	webtest.WantPage(t, d.Follow(d.Post("/dashboard/payments/"+id+"/cancel", url.Values{})), http.StatusOK, "Payment canceled.")
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key)); got["status"] != "canceled" || got["cancel_reason"] != "requested" {
		t.Errorf("held payment after the dashboard's cancel: %s", th.MustJSON(got))
	}
	if ev := h.Events("payment.canceled"); len(ev) != 1 {
		t.Errorf("payment.canceled events: %d, want 1", len(ev))
	}
}

// TestDashboardRefusesCrossSiteMoneyPosts: a post from another site to a
// form that moves money or simulates the bank (cancel, retry, reverse, a
// payment's return, a notification of change) is refused with the problem
// page, whether the browser says so (Sec-Fetch-Site) or only its Origin
// does, and writes nothing.
func TestDashboardRefusesCrossSiteMoneyPosts(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	settled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"13.00"`, "debit")))["payment_id"].(string)
	failed := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"14.00"`, "debit")))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+failed+"/return", key, `{"code":"R01"}`))
	pending := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"15.00"`, "debit")))["payment_id"].(string)

	status := func() map[string]any {
		out := map[string]any{}
		for _, id := range []string{settled, failed, pending} {
			out[id] = th.WantOK(t, h.Get("/v2/payments/"+id, key))["status"]
		}
		return out
	}
	wantStatus := map[string]any{settled: "processed", failed: "failed", pending: "pending"}
	if got := status(); th.MustJSON(got) != th.MustJSON(wantStatus) {
		t.Fatalf("statuses before the posts: %v", got)
	}
	payments, events := h.Count("payments"), h.Count("events")
	source := th.MustJSON(th.WantOK(t, h.Get("/v2/funding-source/"+src, key)))

	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/payments/" + pending + "/cancel", url.Values{}},
		{"/dashboard/payments/" + failed + "/retry", url.Values{}},
		{"/dashboard/payments/" + settled + "/reverse", url.Values{"reason": {"wrong_amount"}}},
		{"/dashboard/payments/" + pending + "/sandbox/return", url.Values{"code": {"R01"}, "back": {"payment"}}},
		{"/dashboard/funding-sources/" + src + "/sandbox/notification-of-change", url.Values{"change_code": {"C01"}, "account_number": {"987654321"}}},
	} {
		for _, header := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Origin": "https://evil.example"},
		} {
			p := d.Do(http.MethodPost, post.path, post.form, header)
			webtest.WantPage(t, p, http.StatusForbidden, "This form was sent from another site")
		}
	}
	if got := status(); th.MustJSON(got) != th.MustJSON(wantStatus) {
		t.Errorf("statuses after the refused posts: %v, want %v", got, wantStatus)
	}
	if n := h.Count("payments"); n != payments {
		t.Errorf("payments: %d after the refused posts, want %d", n, payments)
	}
	if n := h.Count("events"); n != events {
		t.Errorf("events: %d after the refused posts, want %d", n, events)
	}
	if got := th.MustJSON(th.WantOK(t, h.Get("/v2/funding-source/"+src, key))); got != source {
		t.Errorf("source after a refused notification of change:\n%s\nwant\n%s", got, source)
	}
	// The same form from the dashboard's own page is taken.
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/payments/"+pending+"/cancel", url.Values{})), http.StatusOK, "Payment canceled.")
}
