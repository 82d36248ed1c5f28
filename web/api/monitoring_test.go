package api_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestSandboxRehearsesEveryHold: the names and amounts docs/api.md's
// sandbox guide documents hold their payments with the documented
// hold_reason, and GET /v2/compliance/monitoring reports the rules, the
// alerts by rule and the held payments.
func TestSandboxRehearsesEveryHold(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	n := 0
	account := func() string { n++; return fmt.Sprintf("6100000%02d", n) }
	wantHeld := func(what string, r map[string]any, reason string) {
		t.Helper()
		if r["status"] != "held" || r["hold_reason"] != reason {
			t.Errorf("%s: got %v %v, want held for %s", what, r["status"], r["hold_reason"], reason)
		}
	}
	for _, name := range []string{
		`"first_name":"Mirela","last_name":"Drakovic"`,
		`"first_name":"Ilya Petrovich","last_name":"Volkanov"`,
		`"first_name":"Hector Ramon","last_name":"Sandoval Quintero"`,
		`"first_name":"Ann","last_name":"Lee","business_name":"Kestrel Trading FZE"`,
		`"first_name":"Ann","last_name":"Lee","business_name":"Orinoco Blue Shipping Ltd"`,
	} {
		c := th.WantOK(t, h.Post("/v2/customers", key, `{`+name+`,"email":"x@example.com"}`))
		if s, _ := c["screening"].(map[string]any); s["status"] != "potential_match" {
			t.Errorf("%s: screening %v", name, c["screening"])
			continue
		}
		src := h.Source(key, c["user_id"].(string), account())
		wantHeld(name, th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "credit"))), "sanctions_screening")
	}
	if c := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ann","last_name":"Lee","email":"a@example.com"}`)); c["screening"].(map[string]any)["status"] != "clear" {
		t.Errorf("Ann Lee: screening %v", c["screening"])
	}

	first := h.VerifiedSource(key, h.Customer(key), account())
	wantHeld("first debit of 2500.01", th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(first, `"2500.01"`, "debit"))), "fraud_rule:first_debit_amount")
	busy := h.VerifiedSource(key, h.Customer(key), account())
	for range 5 {
		th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(busy, `"1.00"`, "debit")))
	}
	wantHeld("sixth debit", th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(busy, `"1.00"`, "debit"))), "fraud_rule:daily_velocity")
	moved := h.VerifiedSource(key, h.Customer(key), account())
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+moved+"/notification-of-change", key,
		`{"change_code":"C01","corrected_data":{"account_number":"987654321"}}`))
	wantHeld("500.01 after a C01", th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(moved, `"500.01"`, "debit"))), "fraud_rule:changed_account")
	payout := h.Source(key, h.Customer(key), account())
	wantHeld("credit of 1000.01", th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(payout, `"1000.01"`, "credit"))), "fraud_rule:unverified_credit")
	payee := h.VerifiedSource(key, h.Customer(key), account())
	wantHeld("first credit of 2500.01", th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(payee, `"2500.01"`, "credit"))), "fraud_rule:first_credit_amount")

	m := th.WantOK(t, h.Get("/v2/compliance/monitoring", key))
	if rules, _ := m["rules"].([]any); len(rules) != 6 {
		t.Errorf("rules: %v", m["rules"])
	}
	alerts := map[string]float64{}
	for _, a := range m["alerts"].([]any) {
		a := a.(map[string]any)
		alerts[a["rule_id"].(string)] = a["alerts"].(float64)
	}
	for _, rule := range []string{"first_debit_amount", "daily_velocity", "changed_account", "unverified_credit", "first_credit_amount"} {
		if alerts[rule] < 1 {
			t.Errorf("alerts of %s: %v", rule, alerts[rule])
		}
	}
	if held, _ := m["held_payments"].([]any); len(held) != 10 {
		t.Errorf("held payments: got %d, want 10", len(held))
	}
	if m["last_annual_review"] != nil {
		t.Errorf("last annual review: %v, want null", m["last_annual_review"])
	}
}
