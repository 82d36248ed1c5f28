package web_test

import (
	"net/http"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestMicroDepositFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // clock: Monday 2026-11-02 15:04 UTC
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")

	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[0.1, 0.2]`)), 409, "verification_not_initiated")
	th.WantError(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key), 409, "verification_not_initiated")

	r := th.WantOK(t, h.Initiate(key, id))
	v := r["verification"].(map[string]any)
	want := map[string]any{"method": "micro_deposits", "status": "pending", "expected_arrival_date": "2026-11-04",
		"expires_at": "2026-11-12T15:04:05Z", "initiated_at": "2026-11-02T15:04:05Z", "attempts_remaining": float64(3)}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("verification.%s = %v, want %v", k, v[k], w)
		}
	}
	if r["status"] != "Unverified" {
		t.Errorf("status while pending = %v, want Unverified", r["status"])
	}
	if ev := h.Events("funding_source.verification_pending"); len(ev) != 1 || ev[0]["status"] != "PendingVerified" || ev[0]["funding_source_id"] != id {
		t.Errorf("pending events = %v", ev)
	}
	th.WantError(t, h.Initiate(key, id), 409, "verification_pending")

	right := h.Amounts(key, id)
	bad := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, th.WrongPair(right)))
	th.WantError(t, bad, 400, "verification_failed")
	if got := bad.JSON(t)["error"].(map[string]any)["attempts_remaining"]; got != float64(2) {
		t.Errorf("attempts_remaining after one miss = %v, want 2", got)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any)["attempts_remaining"]; got != float64(2) {
		t.Errorf("resource attempts_remaining = %v, want 2", got)
	}

	// The right pair, reversed, as decimal strings.
	ok := th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `["`+right[1]+`","`+right[0]+`"]`)))
	if ok["status"] != "Verified" || ok["verification"].(map[string]any)["status"] != "succeeded" {
		t.Errorf("after the right pair: %s", th.MustJSON(ok))
	}
	if ev := h.Events("funding_source.verified"); len(ev) != 1 || ev[0]["status"] != "Verified" || ev[0]["funding_source_id"] != id {
		t.Errorf("verified events = %v", ev)
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[`+right[0]+`,`+right[1]+`]`)), 409, "funding_source_already_verified")
	th.WantError(t, h.Initiate(key, id), 409, "funding_source_already_verified")
}

func TestAmountsAreValidated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, id))
	for _, amounts := range []string{`[]`, `[0.12]`, `[0.1, 0.2, 0.3]`, `[1.00, 0.5]`, `[0, 0.5]`, `[0.123, 0.1]`,
		`[-0.1, 0.2]`, `["abc", 0.1]`, `["0.1 ", 0.2]`, `[1e-3, 0.2]`, `[0.1230, 0.2]`, `[null, 0.1]`} {
		th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, amounts)), 400, "invalid_amounts")
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `"0.12,0.34"`)), 400, "invalid_request")
	th.WantError(t, h.Post("/v2/funding-source/verify", key, `{"amounts":[0.1,0.2]}`), 400, "invalid_request")
	// None of that used an attempt.
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any)["attempts_remaining"]; got != float64(3) {
		t.Errorf("attempts_remaining = %v after invalid input, want 3", got)
	}
}

func TestThreeWrongPairsFailAndInitiationsAreLimited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, id))
	wrong := th.WrongPair(h.Amounts(key, id))
	for i, left := range []float64{2, 1, 0} {
		r := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, wrong))
		th.WantError(t, r, 400, "verification_failed")
		if got := r.JSON(t)["error"].(map[string]any)["attempts_remaining"]; got != left {
			t.Errorf("miss %d: attempts_remaining = %v, want %v", i+1, got, left)
		}
	}
	if ev := h.Events("funding_source.verification_failed"); len(ev) != 1 || ev[0]["funding_source_id"] != id {
		t.Errorf("failed events = %v", ev)
	}
	// Even the right pair is refused now.
	right := h.Amounts(key, id)
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, "["+right[0]+","+right[1]+"]")), 409, "verification_attempts_exceeded")
	if v := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any); v["status"] != "failed" {
		t.Errorf("verification status = %v, want failed", v["status"])
	}

	// A failed verification may be initiated again, up to three times in all;
	// an expired one counts too.
	th.WantOK(t, h.Initiate(key, id)) // second
	h.Clock.Advance(11 * 24 * time.Hour)
	r := th.WantOK(t, h.Initiate(key, id)) // third: the second expires on the way
	if v := r["verification"].(map[string]any); v["status"] != "pending" || v["attempts_remaining"] != float64(3) {
		t.Errorf("third initiation = %v", v)
	}
	if ev := h.Events("funding_source.verification_expired"); len(ev) != 1 {
		t.Errorf("%d expired events, want 1", len(ev))
	}
	h.Clock.Advance(11 * 24 * time.Hour)
	th.WantError(t, h.Initiate(key, id), 409, "verification_limit_reached")
}

func TestConcurrentWrongGuessesCountAtMostThree(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, id))
	wrong := th.WrongPair(h.Amounts(key, id))
	const n = 50
	results := th.Concurrently(n, func(int) *th.Response {
		return h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, wrong))
	})
	counts := map[string]int{}
	for _, r := range results {
		counts[r.ErrCode(t)]++
	}
	if counts["verification_failed"] != 3 || counts["verification_attempts_exceeded"] != n-3 {
		t.Fatalf("outcomes = %v, want 3 verification_failed and %d verification_attempts_exceeded", counts, n-3)
	}
	var left int
	if err := h.SQL().Get(&left, `SELECT attempts_remaining FROM micro_deposits`); err != nil || left != 0 {
		t.Errorf("stored attempts_remaining = %d (%v), want 0", left, err)
	}
}

func TestMicroDepositsExpire(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	a, b := h.Source(key, user, "1111222233"), h.Source(key, user, "4444555566")
	th.WantOK(t, h.Initiate(key, a))
	th.WantOK(t, h.Initiate(key, b))
	right := h.Amounts(key, a)

	h.Clock.Advance(10*24*time.Hour - time.Second)
	if n, err := h.Funding.ExpireDue(t.Context()); err != nil || n != 0 {
		t.Fatalf("ExpireDue before expiry = %d, %v", n, err)
	}
	h.Clock.Advance(time.Second)

	// Verifying at expiry refuses even the right pair, and expires it.
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(a, "["+right[0]+","+right[1]+"]")), 409, "verification_expired")
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(a, "["+right[0]+","+right[1]+"]")), 409, "verification_expired")

	// The sweeper expires the other one, once.
	if n, err := h.Funding.ExpireDue(t.Context()); err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v; want 1", n, err)
	}
	if n, _ := h.Funding.ExpireDue(t.Context()); n != 0 {
		t.Errorf("second sweep expired %d more", n)
	}
	for _, id := range []string{a, b} {
		if v := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any); v["status"] != "expired" {
			t.Errorf("%s verification = %v, want expired", id, v["status"])
		}
	}
	if ev := h.Events("funding_source.verification_expired"); len(ev) != 2 {
		t.Errorf("%d expired events, want 2", len(ev))
	}
	// A new verification can start after expiry.
	th.WantOK(t, h.Initiate(key, a))
}

func TestSandboxAmountsEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
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
