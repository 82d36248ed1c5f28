package dashboard_test

import (
	"os"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardSandboxSimulations: a sandbox source's page returns
// and expires its micro-deposits, returns a payment and creates a
// subscription's next debit, each with the events of the API's
// simulations.
func TestBrowserDashboardSandboxSimulations(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	key := h.Merchant("Acme Books").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	th.WantOK(t, h.Initiate(key, src))

	tb := webtest.NewTab(t)
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	tb.Choose("#deposit-return-code", "R01")
	tb.Click("button", "Simulate return")
	tb.WaitURL(`/dashboard/funding-sources/` + src + `$`)
	tb.WantText("came back with R01", "The last micro-deposit verification failed (the bank returned a deposit: R01)")
	if ev := h.Events("funding_source.verification_failed"); len(ev) != 1 {
		tb.Errorf("verification_failed events: %d", len(ev))
	}

	th.WantOK(t, h.Initiate(key, src))
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	tb.Click("button", "Expire the deposits now")
	tb.WaitURL(`/dashboard/funding-sources/` + src + `$`)
	tb.WantText("the micro-deposits expired", "The last micro-deposits expired")
	// The page says when, as the API's expires_at does.
	expired := th.WantOK(t, h.Get("/v2/funding-source/"+src, key))["verification"].(map[string]any)
	at, err := time.Parse(time.RFC3339Nano, expired["expires_at"].(string))
	if err != nil || expired["status"] != "expired" {
		tb.Fatalf("the API's verification after the page's expiry: %v (%v)", expired, err)
	}
	want := "The last micro-deposits expired " + at.UTC().Format("Jan 2, 2006, 15:04 UTC") + ", before they were confirmed."
	if got := tb.Text("#verification-expired"); got != want {
		tb.Errorf("the expired verification says %q, want %q", got, want)
	}
	if ev := h.Events("funding_source.verification_expired"); len(ev) != 1 {
		tb.Errorf("verification_expired events: %d", len(ev))
	}
	if n, err := tb.Page.Locator("#deposit-simulations").Count(); err != nil || n != 0 {
		tb.Errorf("deposit simulations shown without open deposits: %d, %v", n, err)
	}

	verified := h.VerifiedSource(key, user, "222222222")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(verified, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	tb.Open(srv.URL + "/dashboard/funding-sources/" + verified)
	tb.WantText("No payments with this funding source yet.")
	tb.Inside("#subscription-" + sub)
	tb.WantText("created the next debit", "subscription debit, attempt 1")
	p := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+verified, key))["data"].([]any)[0].(map[string]any)
	id := p["payment_id"].(string)
	tb.Choose("#return-code-"+id, "R01")
	tb.Inside("#payment-" + id)
	tb.WantText("came back with R01", "R01 Insufficient funds", "presented again 2026-11-03")
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key)); got["status"] != "failed" || got["failure_code"] != "R01" {
		tb.Errorf("payment after the page's return: %s", th.MustJSON(got))
	}
	tb.Inside("#subscription-" + sub)
	tb.WantText("subscription debit, attempt 2")
	tb.Accessible()
}

// TestBrowserDashboardShowsMandateEvidence: a source's page shows each
// mandate with its evidence, the text behind a disclosure.
func TestBrowserDashboardShowsMandateEvidence(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	key := h.Merchant("Acme Books").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key,
		`{"funding_source_id":"`+src+`","amount":"9.99","interval":"weekly","start_date":"2026-11-20","authorization":`+th.Authorization+`}`))
	m := th.WantOK(t, h.Get("/v2/mandates/"+sub["mandate_id"].(string), key))

	tb := webtest.NewTab(t)
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	tb.WantText("Mandates", m["mandate_id"].(string), "recurring · WEB · active", "Nov 1, 2026 15:04:05 UTC",
		"203.0.113.7", "Mozilla/5.0 (Test)", m["text_sha256"].(string))
	if visible, err := tb.Page.GetByText("I authorize Acme to debit my account.").IsVisible(); err != nil || visible {
		tb.Errorf("the text is shown before its disclosure is opened: %v, %v", visible, err)
	}
	tb.ClickOn(tb.Page.GetByText("Authorization text"))
	tb.WantText("I authorize Acme to debit my account.")
	tb.Accessible()
}

// TestBrowserDashboardShowsReturnRates: the home page shows the debit
// return rates, a rate from half its threshold as a warning and one above
// it as such.
func TestBrowserDashboardShowsReturnRates(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	key := h.Merchant("Acme Books").Sandbox.SecretKey
	user := h.Customer(key)
	returned := h.VerifiedSource(key, user, "222222222")
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(returned, `"5.00"`, "debit")))["payment_id"].(string)+"/return", key, `{"code":"R01"}`))
	// Nine debits from two sources: a sixth of one source in a day would
	// be held (daily_velocity), and a held debit counts in no rate.
	clean, other := h.VerifiedSource(key, user, "333333333"), h.VerifiedSource(key, user, "555555555")
	for i := range 9 {
		src := clean
		if i >= 5 {
			src = other
		}
		th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "debit")))
	}
	// 1 return of 10 debits: 10% overall (a warning: 15% is the
	// threshold), none unauthorized or administrative.
	tb := webtest.NewTab(t)
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.Open(srv.URL + "/dashboard")
	// Ten debits are too few for a rate to count (the hold on new debits
	// waits for twenty): each row says so instead of judging the rate.
	tb.WantText("Debit return rates", "All returns", "10.00%", "1 of 10 debits", "15%", "0.5%", "Not enough debits yet (10 of 20)")
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		// The picture is a desktop's: on a phone the table stacks into a long column.
		desk := webtest.NewTab(t, webtest.WithViewport(1280, 860))
		desk.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
		desk.Open(srv.URL + "/dashboard")
		desk.WantText("Not enough debits yet (10 of 20)")
		desk.Shot(dir, "dashboard-return-rates")
	}
	// The chart names its window and, all debits in both windows, agrees
	// with the table.
	if got := tb.Text("#debit-returns figcaption"); !containsAll(got, "last 30 days", "10.00%", "1 of 10 debits", "last 60 days") {
		tb.Errorf("the return-rate chart's caption: %q", got)
	}
	tb.WantText("Debit return rate by day · last 30 days", "Debit return rates · last 60 days")
	for level, n := range map[string]int{"too_few": 3, "ok": 0, "warning": 0, "exceeded": 0} {
		if got, err := tb.Page.Locator(`#return-rates tr[data-level="` + level + `"]`).Count(); err != nil || got != n {
			tb.Errorf("%s rows: %d, %v; want %d", level, got, err, n)
		}
	}
	// An unauthorized return on a third source: on the clean one it would
	// cancel the nine pending debits, which then count no more.
	disputed := h.VerifiedSource(key, user, "444444444")
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(disputed, `"5.00"`, "debit")))["payment_id"].(string)+"/return", key, `{"code":"R10"}`))
	tb.Open(srv.URL + "/dashboard")
	tb.WantText("Not enough debits yet (11 of 20)", "1 of 11 debits")
	if got, err := tb.Page.Locator(`#return-rates tr[data-level="exceeded"]`).Count(); err != nil || got != 0 {
		tb.Errorf("rows above their threshold at 11 debits: %d, %v; want none", got, err)
	}
	tb.Accessible()
}
