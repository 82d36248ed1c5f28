package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestRetryEndpoint: POST /v2/payments/{id}/retry answers the new debit
// with retry_of, runs once per Idempotency-Key, and answers 409
// retry_not_allowed with the rule, or 404 for an unknown payment.
func TestRetryEndpoint(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	orig := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"13.01"`)))["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+orig+"/retry", key, ""), http.StatusConflict, "retry_not_allowed")
	webtest.SettleSandbox(t, h)

	send := func() *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments/" + orig + "/retry", Key: key,
			Header: map[string]string{"Idempotency-Key": "retry-1"}})
	}
	first := th.WantOK(t, send())
	if first["retry_of"] != orig || first["attempt"] != float64(2) || first["amount"] != "13.01" || first["status"] != "pending" ||
		first["payment_id"] == orig {
		t.Fatalf("retry = %s", th.MustJSON(first))
	}
	again := send()
	if th.WantOK(t, again)["payment_id"] != first["payment_id"] || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %s", again.Body)
	}
	r := h.Post("/v2/payments/"+orig+"/retry", key, "")
	th.WantError(t, r, http.StatusConflict, "retry_not_allowed")
	if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "pending") {
		t.Errorf("message = %q, want it to name the pending re-presentment", msg)
	}
	if got := th.WantOK(t, h.Get("/v2/payments/"+first["payment_id"].(string), key)); got["retry_of"] != orig || got["reversal"] != nil {
		t.Errorf("GET retry = %s", th.MustJSON(got))
	}
	th.WantError(t, h.Post("/v2/payments/pay_unknown/retry", key, ""), http.StatusNotFound, "payment_not_found")
	th.WantError(t, h.Post("/v2/payments/"+orig+"/retry", key, `{"x":1}`), http.StatusBadRequest, "invalid_request")
	var n int
	if err := h.SQL().Get(&n, `SELECT count(*) FROM payments WHERE retry_of = $1`, orig); err != nil || n != 1 {
		t.Errorf("retries stored = %d, %v; want 1", n, err)
	}
}

// TestReverseEndpoint: POST /v2/payments/{id}/reverse answers the
// reversed payment with its reversal; a bad reason is 400 with param
// reason; a second reversal and a pending payment are 409 conflict.
func TestReverseEndpoint(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"40.00"`, "credit")))["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"duplicate"}`), http.StatusConflict, "conflict")
	webtest.SettleSandbox(t, h)

	r := h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"oops"}`)
	th.WantError(t, r, http.StatusBadRequest, "invalid_request")
	if r.ErrParam(t) != "reason" {
		t.Errorf("param = %q, want reason", r.ErrParam(t))
	}
	th.WantError(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{}`), http.StatusBadRequest, "invalid_request")
	got := th.WantOK(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"duplicate"}`))
	rev, _ := got["reversal"].(map[string]any)
	if got["payment_id"] != credit || rev == nil || rev["reason"] != "duplicate" {
		t.Fatalf("reversed = %s", th.MustJSON(got))
	}
	reversal := th.WantOK(t, h.Get("/v2/payments/"+rev["payment_id"].(string), key))
	if reversal["direction"] != "debit" || reversal["amount"] != "40.00" || reversal["reversal_of"] != credit || reversal["mandate_id"] != nil {
		t.Errorf("reversal = %s", th.MustJSON(reversal))
	}
	th.WantError(t, h.Post("/v2/payments/"+credit+"/reverse", key, `{"reason":"wrong_date"}`), http.StatusConflict, "conflict")
	if evs := h.Events("payment.reversed"); len(evs) != 1 {
		t.Errorf("payment.reversed events = %d, want 1", len(evs))
	}
}

// TestANewDebitThatPresentsAReturnedOneAgainIs409: after a sandbox debit
// of 13.01 came back R01, POST /v2/payments of 13.01 from the same source
// is 409 reinitiation_required on funding_source_id, its message naming
// the retry endpoint of the returned debit; with an authorization
// accepted after the return it is created.
func TestANewDebitThatPresentsAReturnedOneAgainIs409(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	orig := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"13.01"`)))["payment_id"].(string)
	webtest.SettleSandbox(t, h)
	r := h.Post("/v2/payments", key, th.DebitBody(src, `"13.01"`))
	th.WantError(t, r, http.StatusConflict, "reinitiation_required")
	e := r.JSON(t)["error"].(map[string]any)
	if e["param"] != "funding_source_id" || !strings.Contains(e["message"].(string), "POST /v2/payments/"+orig+"/retry") {
		t.Errorf("error = %v", e)
	}
	h.Clock.Advance(time.Minute)
	accepted := h.Clock.Now().UTC().Format(time.RFC3339)
	th.WantOK(t, h.Post("/v2/payments", key, `{"funding_source_id":"`+src+`","amount":"13.01","direction":"debit",`+
		`"authorization":{"accepted_at":"`+accepted+`","text":"I authorize Acme to debit my account again."}}`))
}
