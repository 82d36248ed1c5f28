package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// The instant payout rules are internal/payment's tests; these check what
// HTTP adds: the members of a payment, the refusals' statuses and
// Retry-After, the list filters and the evidence.

func TestInstantPayoutOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(t, th.WithRail(rail.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	rtp := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	none := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456780")))["funding_source_id"].(string)
	body := func(src, amount, method, direction string) string {
		return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"` + direction + `","method":"` + method + `"}`
	}

	p := th.WantOK(t, h.Post("/v2/payments", key, body(rtp, "12.34", "instant", "credit")))
	if p["status"] != "processed" || p["rail"] != "rtp" || p["method"] != "instant" || p["rail_status"] != "accepted" || p["fallback_reason"] != nil {
		t.Errorf("instant credit = %v", p)
	}
	id := p["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+id+"/reverse", key, `{"reason":"duplicate"}`), http.StatusConflict, "not_reversible")
	ev := th.WantOK(t, h.Get("/v2/payments/"+id+"/evidence", key))
	if pay := ev["payment"].(map[string]any); pay["rail"] != "rtp" || pay["method"] != "instant" {
		t.Errorf("evidence payment = %v", pay)
	}

	auto := th.WantOK(t, h.Post("/v2/payments", key, body(none, "5.00", "auto", "credit")))
	if auto["rail"] != "ach" || auto["method"] != "auto" || auto["fallback_reason"] != "instant_unavailable" || auto["rail_status"] != nil {
		t.Errorf("auto credit = %v", auto)
	}
	th.WantError(t, h.Post("/v2/payments", key, body(none, "5.00", "instant", "credit")), http.StatusUnprocessableEntity, "instant_unavailable")
	th.WantError(t, h.Post("/v2/payments", key, body(rtp, "5.00", "instant", "debit")), http.StatusBadRequest, "invalid_request")

	sim.SetDown(true)
	down := h.Post("/v2/payments", key, body(rtp, "5.00", "instant", "credit"))
	th.WantError(t, down, http.StatusServiceUnavailable, "rail_unavailable")
	if down.Header.Get("Retry-After") == "" {
		t.Error("rail_unavailable without Retry-After")
	}
	sim.SetDown(false)

	list := th.WantOK(t, h.Get("/v2/payments?rail=rtp", key))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["payment_id"] != id {
		t.Errorf("?rail=rtp = %v", list)
	}
	list = th.WantOK(t, h.Get("/v2/payments?method=auto", key))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["payment_id"] != auto["payment_id"] {
		t.Errorf("?method=auto = %v", list)
	}
	th.WantError(t, h.Get("/v2/payments?rail=swift", key), http.StatusBadRequest, "invalid_request")
}

// TestInstantPayoutUnderAnIdempotencyKey: the credit's intent commits with
// the key before the credit leaves; the key then answers as the request
// did, and a refusal of the rail forgets it.
func TestInstantPayoutUnderAnIdempotencyKey(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(t, th.WithRail(rail.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	body := `{"funding_source_id":"` + src + `","amount":"7.00","direction":"credit","method":"instant"}`
	post := func(idem string) *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: body, Header: map[string]string{"Idempotency-Key": idem}})
	}
	first := th.WantOK(t, post("k1"))
	if first["status"] != "processed" || first["rail_status"] != "accepted" {
		t.Fatalf("first = %v", first)
	}
	again := post("k1")
	if got := th.WantOK(t, again); got["payment_id"] != first["payment_id"] || got["status"] != "processed" || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %v (%v)", got, again.Header)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail received %d credits, want 1", n)
	}

	sim.SetDown(true)
	th.WantError(t, post("k2"), http.StatusServiceUnavailable, "rail_unavailable")
	sim.SetDown(false)
	retry := th.WantOK(t, post("k2"))
	if retry["status"] != "processed" || retry["payment_id"] == first["payment_id"] {
		t.Errorf("a retry after the rail came back = %v", retry)
	}
	var n int
	if err := h.SQL().Get(&n, `SELECT count(*) FROM payments`); err != nil || n != 2 {
		t.Errorf("%d payments (%v), want 2: the refused one left nothing", n, err)
	}
}
