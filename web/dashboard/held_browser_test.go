package dashboard_test

import (
	"fmt"
	"os"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserHeldPaymentsAndReturnRateBanner: the home page counts the
// payments held for review and, once the unauthorized return rate is past
// its threshold, says so in a banner; the payments page filters held
// payments and shows why each is held. Each page passes axe-core at a
// desktop's and a phone's width. A held credit is then canceled from its
// page and leaves the held list.
func TestBrowserHeldPaymentsAndReturnRateBanner(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	var first string
	for i := range 20 {
		src := h.VerifiedSource(key, h.Customer(key), fmt.Sprintf("3100000%02d", i))
		id := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "debit")))["payment_id"].(string)
		if i == 0 {
			first = id
		}
	}
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+first+"/return", key, `{"code":"R10"}`))
	payout := h.Source(key, h.Customer(key), "444444444")
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(payout, `"1000.01"`, "credit")))
	if credit["status"] != "held" || credit["hold_reason"] != "fraud_rule:unverified_credit" {
		t.Fatalf("credit: %s", th.MustJSON(credit))
	}
	src := h.VerifiedSource(key, h.Customer(key), "555555555")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"2.00"`, "debit")))
	if debit["status"] != "held" || debit["hold_reason"] != "return_rate_unauthorized" {
		t.Fatalf("debit after the rate passed its threshold: %s", th.MustJSON(debit))
	}

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			check := tb.PageChecks()
			tb.Open(srv.URL + "/dashboard")
			check()
			if width == 1280 {
				tb.Shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-held")
			}
			if got := tb.Text("#rate-banner"); !containsAll(got, "unauthorized 5.00%", "New debits are held") {
				tb.Errorf("banner: %q", got)
			}
			if got := tb.Text("#held-count"); !containsAll(got, "2 payments held for review") {
				tb.Errorf("held count: %q", got)
			}
			// A warning's amber, never a success's green.
			if got := tb.Eval(`getComputedStyle(document.querySelector('#held-count')).borderLeftColor`); got != "rgb(183, 121, 31)" {
				tb.Errorf("the held banner's edge is %v, want the warning's rgb(183, 121, 31)", got)
			}
			if got := tb.Eval(`getComputedStyle(document.querySelector('#held-count')).backgroundColor`); got != "rgb(255, 244, 214)" {
				tb.Errorf("the held banner's background is %v, want the warning's rgb(255, 244, 214)", got)
			}
			tb.Click("link", "2 payments held for review")
			tb.WaitURL(`/dashboard/payments\?status=held`)
			check()
			got := tb.Text("#payment-list")
			if !containsAll(got, credit["payment_id"].(string), debit["payment_id"].(string), "unverified_credit", "Unauthorized return rate above 0.5%") ||
				containsAll(got, first) {
				tb.Errorf("held payments: %q", got)
			}
			tb.Open(srv.URL + "/dashboard/payments/" + debit["payment_id"].(string))
			check()
			tb.WantText("Held for review", "Unauthorized return rate above 0.5%")
		})
	}

	// Cancel a held payment from its page: it is canceled, and the held
	// list no longer shows it.
	tb := webtest.NewTab(t, webtest.WithViewport(1280, 900), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	id := credit["payment_id"].(string)
	tb.Open(srv.URL + "/dashboard/payments/" + id)
	tb.WantText("Held for review")
	open(t, tb, "Cancel this payment")
	tb.WantText("will not be sent")
	tb.Click("button", "Cancel the payment")
	tb.WaitURL(`/dashboard/payments/` + id + `$`)
	tb.WantText("Payment canceled.")
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key)); got["status"] != "canceled" {
		tb.Errorf("the held credit after Cancel: %s", th.MustJSON(got))
	}
	tb.Open(srv.URL + "/dashboard/payments?status=held")
	if got := tb.Text("#payment-list"); containsAll(got, id) || !containsAll(got, debit["payment_id"].(string)) {
		tb.Errorf("held payments after the credit's cancel: %q", got)
	}
}
