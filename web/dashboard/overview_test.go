package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestDashboardHomeCharts: the overview's funnels, webhook and debit
// charts show what happened today, with the numbers in tables.
func TestDashboardHomeCharts(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, th.WithPrivateTargets(true))
	d, key := webtest.SignedIn(t, h, "Acme Books")
	empty := webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK, "The last 30 days", "Webhook delivery success rate by day: no data in the last 30 days.")
	if !strings.Contains(empty, "micro-deposits: 0 created, 0 initiated, 0 verified; median time to verify —.") {
		t.Errorf("empty funnel:\n%s", empty)
	}

	rc := th.NewReceiver(t, nil)
	h.RegisterWebhook(key, rc.URL())
	src, debit, _, _, _ := activity(t, h, key)
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"3.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit+"/return", key, `{"code":"R01"}`))
	// A held debit and a canceled one never went out: they count in
	// neither the chart nor the return-rate table.
	fresh := h.VerifiedSource(key, h.Customer(key), "7770001111")
	if held := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(fresh, `"2500.01"`, "debit"))); held["status"] != "held" {
		t.Fatalf("first debit of 2500.01: %s", th.MustJSON(held))
	}
	canceled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"4.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/payments/"+canceled+"/cancel", key, ""))
	h.Customer(key) // a source only created: Unverified, not initiated
	user := h.Customer(key)
	h.Source(key, user, "5550001111")
	m, err := h.Merchants.MerchantByEmail(context.Background(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "8675309")))
	if n := h.Deliver(); n == 0 {
		t.Fatal("no webhook deliveries")
	}
	today := h.Clock.Now().UTC().Format("Jan 2")
	home := webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK,
		"micro-deposits: 3 created, 2 initiated, 2 verified; median time to verify", // with the held debit's source
		"instant: 0 created, 0 initiated, 0 verified; median time to verify —.",
		"at creation: 1 created, 1 initiated, 1 verified; median time to verify 0 s.",
		`id="funnel-at-creation"`,
		"<td>"+today+"</td><td>50% (1 of 2)</td>", // one of the two debits returned
		" ms</td>", "Webhook p95 latency by day: 1 of the last 30 days have data",
		"Debit returns in the last 30 days: 50.00%, 1 of 2 debits", "1 of 2 debits</span>")
	if !strings.Contains(home, "<td>"+today+"</td><td>100% (") {
		t.Errorf("today's webhook success is not 100%%:\n%s", home)
	}
}

// TestDashboardHomeWarnsOfAReturnAfterItsReversalLeft: a sandbox debit
// settles, is reversed, the reversal settles, and the debit comes back
// R10: the home page says so (reversal_then_return); before, it does not.
func TestDashboardHomeWarnsOfAReturnAfterItsReversalLeft(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"40.00"`)))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	th.WantOK(t, h.Post("/v2/payments/"+debit+"/reverse", key, `{"reason":"duplicate"}`))
	webtest.SettleSandbox(t, h)
	if home := webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK); strings.Contains(home, `id="reversal-then-return"`) {
		t.Errorf("home warns before any return:\n%s", home)
	}
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit+"/return", key, `{"code":"R10"}`))
	webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK, `id="reversal-then-return"`,
		"Returned after their reversal left: 1 in the last 30 days.")
}

// TestDashboardHomeWarnsOfAnUnauthorizedReturnAfterARefundLeft: a sandbox
// debit settles, is refunded in part, the refund settles, and the debit
// comes back R10: the home page says so (refund_then_return) and the
// monitoring report counts it; before, neither does.
func TestDashboardHomeWarnsOfAnUnauthorizedReturnAfterARefundLeft(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"40.00"`)))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	th.WantOK(t, h.Post("/v2/payments/"+debit+"/refund", key, `{"amount":"15.00"}`))
	webtest.SettleSandbox(t, h)
	if home := webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK); strings.Contains(home, `id="refund-then-return"`) {
		t.Errorf("home warns before any return:\n%s", home)
	}
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+debit+"/return", key, `{"code":"R10"}`))
	webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK, `id="refund-then-return"`,
		"Returned as unauthorized after a refund left: 1 in the last 30 days.")
	counted := false
	for _, a := range th.WantOK(t, h.Get("/v2/compliance/monitoring", key))["alerts"].([]any) {
		m := a.(map[string]any)
		counted = counted || (m["rule_id"] == "refund_then_return" && m["alerts"] == float64(1))
	}
	if !counted {
		t.Error("GET /v2/compliance/monitoring does not count the refund_then_return alert")
	}
	if metrics := string(h.Get("/metrics", "").Body); !strings.Contains(metrics, "fundsource_payment_refund_then_return_alerts 1") {
		t.Error("/metrics does not count the refund_then_return alert")
	}
}
