package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestGetOriginatorShowsLimitsUsageAndReturnRates: the merchant sees its
// environment's originator, with today's usage and its return rates.
func TestGetOriginatorShowsLimitsUsageAndReturnRates(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.50"`, "credit")))
	o := th.WantOK(t, h.Get("/v2/originator", key))
	limits, _ := o["limits"].(map[string]any)
	usage, _ := o["usage"].(map[string]any)
	rates, _ := o["return_rates"].(map[string]any)
	if o["status"] != "active" || o["company_name"] != "ACME" || o["same_day"] != true || o["environment"] != "sandbox" ||
		limits["per_entry_debit"] != "10000.00" || limits["daily_debit"] != "50000.00" || limits["daily_credit"] != "50000.00" {
		t.Errorf("originator = %s", th.MustJSON(o))
	}
	if usage["banking_day"] != "2026-11-02" || usage["debits"] != "25.00" || usage["credits"] != "7.50" {
		t.Errorf("usage = %v", usage)
	}
	if rates["window_days"] != float64(60) {
		t.Errorf("return_rates = %v", rates)
	}
}

// TestLimitExceededOverHTTP: a debit past the day's limit is 422
// limit_exceeded with the limit and what remains, writes nothing, and
// under an Idempotency-Key is answered the same again; the remaining
// amount still passes.
func TestLimitExceededOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	perEntry, daily := "100.00", "150.00"
	if _, err := h.Svc.Originators.Set(context.Background(), scope, originator.Change{PerEntryDebit: &perEntry, DailyDebit: &daily},
		audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"100.00"`, "debit")))
	r := h.Post("/v2/payments", key, th.PaymentBody(src, `"100.01"`, "debit"))
	th.WantError(t, r, http.StatusUnprocessableEntity, "limit_exceeded")
	if e := r.JSON(t)["error"].(map[string]any); e["limit"] != "per_entry_debit" || e["remaining"] != "100.00" {
		t.Errorf("error = %v", e)
	}
	payments := h.Count("payments")
	keyed := th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: th.PaymentBody(src, `"50.01"`, "debit"),
		Header: map[string]string{"Idempotency-Key": "over-the-day"}}
	first := h.Do(keyed)
	th.WantError(t, first, http.StatusUnprocessableEntity, "limit_exceeded")
	if e := first.JSON(t)["error"].(map[string]any); e["limit"] != "daily_debit" || e["remaining"] != "50.00" {
		t.Errorf("error = %v", e)
	}
	again := h.Do(keyed)
	if again.Code != first.Code || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("replay = %d %s, want the stored %d %s", again.Code, again.Body, first.Code, first.Body)
	}
	if n := h.Count("payments"); n != payments {
		t.Errorf("payments %d after refusals, want %d", n, payments)
	}
	th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: th.PaymentBody(src, `"50.00"`, "debit"),
		Header: map[string]string{"Idempotency-Key": "the-rest-of-the-day"}}))
}

// TestProductionWaitsForItsOriginator: after activate-production the
// originator is pending_review, with its placeholder company id not
// assigned, and production payments are 403 originator_not_active until
// an operator has set the company id (activation is refused before) and
// activated it.
func TestProductionWaitsForItsOriginator(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := h.ProductionPending(m).SecretKey
	if o := th.WantOK(t, h.Get("/v2/originator", key)); o["status"] != "pending_review" || o["same_day"] != false || o["company_id_assigned"] != false {
		t.Errorf("production originator = %s", th.MustJSON(o))
	}
	src := h.Source(key, h.Customer(key), "987654321")
	th.WantError(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"10.00"`, "credit")), http.StatusForbidden, "originator_not_active")
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if _, err := h.Svc.Originators.Activate(context.Background(), scope, audit.Operator("test")); !errs.Is(err, errs.Conflict) {
		t.Fatalf("activation with the placeholder company id: %v, want conflict", err)
	}
	id := "1987654321"
	if _, err := h.Svc.Originators.Set(context.Background(), scope, originator.Change{CompanyID: &id}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Originators.Activate(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if o := th.WantOK(t, h.Get("/v2/originator", key)); o["status"] != "active" || o["company_id"] != id || o["company_id_assigned"] != true {
		t.Errorf("activated originator = %s", th.MustJSON(o))
	}
	p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"10.00"`, "credit")))
	if p["status"] != "pending" {
		t.Errorf("payment of an originator with its company id = %s", th.MustJSON(p))
	}
}
