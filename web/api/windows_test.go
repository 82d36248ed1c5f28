package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestMicroDepositsStandardWhenSameDayMicroIsOff: with ACH_SAME_DAY_MICRO
// off they arrive the banking day after their window, past a holiday.
func TestMicroDepositsStandardWhenSameDayMicroIsOff(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.ACHWindows.SameDayMicro = false })
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	h.Clock.Set(webtest.Eastern(2026, 11, 10, 21, 0)) // Tuesday after the last window; Wednesday 11-11 is Veterans Day
	v := th.WantOK(t, h.Initiate(key, id))["verification"].(map[string]any)
	if v["expected_arrival_date"] != "2026-11-13" {
		t.Errorf("expected_arrival_date = %v, want 2026-11-13 (Thursday's first window, effective Friday)", v["expected_arrival_date"])
	}
}

// TestSameDayPaymentRules: same_day is the originator's permission (a
// production originator without it: 403), and an entry above
// 1,000,000.00 is 422 limit_exceeded, the limit itself passing.
func TestSameDayPaymentRules(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.PaymentMaxCents = 5_000_000_00 })
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	// The originator's day of credits must hold the same-day entry limit
	// twice over, so only that limit is what refuses.
	daily := "5000000.00"
	if _, err := h.Svc.Originators.Set(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox},
		originator.Change{DailyCredit: &daily}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	src := h.Source(key, h.Customer(key), "123456789")
	body := func(amount string) string {
		return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"credit","same_day":true}`
	}
	p := th.WantOK(t, h.Post("/v2/payments", key, body("1000000.00")))
	if p["same_day"] != true || p["sent_at"] != nil || p["effective_date"] != nil || p["return_window_closes_at"] != nil {
		t.Errorf("a new same-day payment: %s", th.MustJSON(p))
	}
	r := h.Post("/v2/payments", key, body("1000000.01"))
	th.WantError(t, r, http.StatusUnprocessableEntity, "limit_exceeded")
	e := r.JSON(t)["error"].(map[string]any)
	if e["limit"] != "same_day_entry" || e["remaining"] != "1000000.00" {
		t.Errorf("limit_exceeded: %s", th.MustJSON(e))
	}
	if plain := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1000000.01"`, "credit"))); plain["same_day"] != false {
		t.Errorf("without same_day: same_day = %v", plain["same_day"])
	}

	live := h.Production(m).SecretKey
	lsrc := h.Source(live, h.Customer(live), "123456789")
	th.WantError(t, h.Post("/v2/payments", live, `{"funding_source_id":"`+lsrc+`","amount":"10.00","direction":"credit","same_day":true}`),
		http.StatusForbidden, "permission_denied")
	list := th.WantOK(t, h.Get("/v2/payments", live))["data"].([]any)
	if len(list) != 0 {
		t.Errorf("a refused same-day payment was stored: %d payments", len(list))
	}
}

// TestFinalityAndBalances: a settled sandbox debit of an individual
// carries its return windows and counts as at risk through the last
// minute of its 60th day, not the next; pending money is summed by
// direction, per environment.
func TestFinalityAndBalances(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // Monday 2026-11-02 15:04:05 UTC (10:04 EST)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "123456789")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.50"`, "credit")))
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"2.25"`, "debit")))
	wantBalances(t, h, key, "27.25", "7.50", "0.00")

	h.Clock.Advance(10 * time.Second)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := th.WantOK(t, h.Get("/v2/payments/"+debit, key))
	want := map[string]any{"status": "processed", "effective_date": "2026-11-02", "settlement_date": "2026-11-02",
		"sent_at":                              "2026-11-02T15:04:15Z",
		"return_window_closes_at":              "2026-11-05T04:59:59Z", // end of Wednesday 11-04, EST
		"unauthorized_return_window_closes_at": "2027-01-02T04:59:59Z", // end of 2027-01-01, 60 days on
	}
	for k, w := range want {
		if p[k] != w {
			t.Errorf("payment.%s = %v, want %v", k, p[k], w)
		}
	}
	wantBalances(t, h, key, "0.00", "0.00", "27.25")
	wantBalances(t, h, h.Production(m).SecretKey, "0.00", "0.00", "0.00")

	h.Clock.Set(webtest.Eastern(2027, 1, 1, 23, 59))
	wantBalances(t, h, key, "0.00", "0.00", "27.25")
	h.Clock.Set(webtest.Eastern(2027, 1, 2, 0, 0))
	wantBalances(t, h, key, "0.00", "0.00", "0.00")
}

// TestCompanyDebitHasNoUnauthorizedWindow: a company's debit may come
// back only within the standard window, and is never at risk.
func TestCompanyDebitHasNoUnauthorizedWindow(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	cus := th.WantOK(t, h.Post("/v2/customers", key,
		`{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","business_name":"Analytical Engines"}`))["user_id"].(string)
	src := h.VerifiedSource(key, cus, "123456789")
	id := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	h.Clock.Advance(10 * time.Second)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := th.WantOK(t, h.Get("/v2/payments/"+id, key))
	if p["return_window_closes_at"] != "2026-11-05T04:59:59Z" || p["unauthorized_return_window_closes_at"] != nil {
		t.Errorf("a company's debit: %s", th.MustJSON(p))
	}
	wantBalances(t, h, key, "0.00", "0.00", "0.00")
}

func wantBalances(t *testing.T, h *webtest.Harness, key, debits, credits, atRisk string) {
	t.Helper()
	b := th.WantOK(t, h.Get("/v2/balances", key))
	if b["pending_debits"] != debits || b["pending_credits"] != credits || b["at_risk_debits"] != atRisk {
		t.Errorf("balances = %s, want pending_debits %s, pending_credits %s, at_risk_debits %s", th.MustJSON(b), debits, credits, atRisk)
	}
}
