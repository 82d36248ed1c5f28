package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// The micro-deposit rules (states, attempts, initiation limit, expiry,
// amount parsing, events) are internal/funding's tests; these check what
// HTTP adds: each refusal's status and envelope, and the verification
// object as the API shows it.

// TestMicroDepositRefusalsAnswerTheirStatusAndCode walks one source from
// creation to Verified and checks each refusal on the way.
func TestMicroDepositRefusalsAnswerTheirStatusAndCode(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // clock: Monday 2026-11-02 15:04 UTC
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")

	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[0.1, 0.2]`)), 409, "verification_not_initiated")
	th.WantError(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key), 409, "verification_not_initiated")

	r := th.WantOK(t, h.Initiate(key, id))
	v := r["verification"].(map[string]any)
	want := map[string]any{"method": "micro_deposits", "status": "pending", "expected_arrival_date": "2026-11-02",
		"expires_at": "2026-11-12T15:04:05Z", "initiated_at": "2026-11-02T15:04:05Z", "attempts_remaining": float64(3)}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("verification.%s = %v, want %v", k, v[k], w)
		}
	}
	th.WantError(t, h.Initiate(key, id), 409, "verification_pending")

	right := h.Amounts(key, id)
	bad := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, th.WrongPair(right)))
	th.WantError(t, bad, 400, "verification_failed")
	if got := bad.JSON(t)["error"].(map[string]any)["attempts_remaining"]; got != float64(2) {
		t.Errorf("error.attempts_remaining after one miss = %v, want 2", got)
	}

	// Decimal strings are accepted as amounts.
	ok := th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `["`+right[0]+`","`+right[1]+`"]`)))
	if ok["status"] != "Verified" || ok["verification"].(map[string]any)["status"] != "succeeded" {
		t.Errorf("after the right pair: %s", th.MustJSON(ok))
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[`+right[0]+`,`+right[1]+`]`)), 409, "funding_source_already_verified")
	th.WantError(t, h.Initiate(key, id), 409, "funding_source_already_verified")
}

// TestExhaustedExpiredAndLimitedVerificationsAnswer409 checks the refusals
// that end a verification: attempts exceeded, expired, and the initiation
// limit, with the verification's status as the API shows it.
func TestExhaustedExpiredAndLimitedVerificationsAnswer409(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	verification := func() map[string]any {
		t.Helper()
		return th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any)
	}

	th.WantOK(t, h.Initiate(key, id)) // first
	right := h.Amounts(key, id)
	for range 3 {
		th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, th.WrongPair(right))), 400, "verification_failed")
	}
	r := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, "["+right[0]+","+right[1]+"]"))
	th.WantError(t, r, 409, "verification_attempts_exceeded")
	if got := r.JSON(t)["error"].(map[string]any)["attempts_remaining"]; got != float64(0) {
		t.Errorf("error.attempts_remaining = %v, want 0", got)
	}
	if v := verification(); v["status"] != "failed" {
		t.Errorf("verification status = %v, want failed", v["status"])
	}

	th.WantOK(t, h.Initiate(key, id)) // second
	right = h.Amounts(key, id)
	h.Clock.Advance(10 * 24 * time.Hour)
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, "["+right[0]+","+right[1]+"]")), 409, "verification_expired")
	if v := verification(); v["status"] != "expired" {
		t.Errorf("verification status = %v, want expired", v["status"])
	}

	th.WantOK(t, h.Initiate(key, id)) // third
	h.Clock.Advance(10 * 24 * time.Hour)
	th.WantError(t, h.Initiate(key, id), 409, "verification_limit_reached")
}

// TestVerifyRefusesMalformedInputWithoutUsingAnAttempt: amounts that do
// not parse answer 400 invalid_amounts, a body of the wrong shape 400
// invalid_request, and neither reaches the attempt count.
func TestVerifyRefusesMalformedInputWithoutUsingAnAttempt(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, id))
	for _, amounts := range []string{`[]`, `[0.12]`, `[0.123, 0.1]`, `["abc", 0.1]`} {
		r := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, amounts))
		th.WantError(t, r, 400, "invalid_amounts")
		if r.ErrParam(t) != "amounts" {
			t.Errorf("%s: param = %q, want amounts", amounts, r.ErrParam(t))
		}
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `"0.12,0.34"`)), 400, "invalid_request")
	th.WantError(t, h.Post("/v2/funding-source/verify", key, `{"amounts":[0.1,0.2]}`), 400, "invalid_request")
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any)["attempts_remaining"]; got != float64(3) {
		t.Errorf("attempts_remaining = %v after invalid input, want 3", got)
	}
}

func TestSandboxAmountsEndpoint(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, id))
	r := th.WantOK(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key))
	for _, a := range r["amounts"].([]any) {
		if f := a.(float64); f < 0.01 || f > 0.99 {
			t.Errorf("amount %v out of range", f)
		}
	}
	if r["verification"].(map[string]any)["status"] != "pending" {
		t.Errorf("verification = %v", r["verification"])
	}
	th.WantError(t, h.Get("/v2/sandbox/funding-source/fs_unknown/micro-deposits", key), http.StatusNotFound, "funding_source_not_found")
}
