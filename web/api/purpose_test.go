package api_test

import (
	"net/http"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestPurposeOverHTTP: purpose is on a payment and a subscription as
// created and read, and on the payment's evidence; a request without one
// has the originator's default_purpose (GET /v2/originator, other for a
// new merchant); an unknown purpose is 400 invalid_request on purpose and
// writes nothing; an entry description the purpose does not allow is 400
// invalid_request on entry_description.
func TestPurposeOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	if o := th.WantOK(t, h.Get("/v2/originator", key)); o["default_purpose"] != "other" {
		t.Errorf("a new originator's default_purpose = %v, want other", o["default_purpose"])
	}
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	body := func(extra string) string {
		return `{"funding_source_id":"` + src + `","amount":"12.00","direction":"debit"` + extra + `}`
	}
	p := th.WantOK(t, h.Post("/v2/payments", key, body(`,"purpose":"services"`)))
	if p["purpose"] != "services" {
		t.Errorf("created = %s", th.MustJSON(p))
	}
	id := p["payment_id"].(string)
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key)); got["purpose"] != "services" {
		t.Errorf("read = %s", th.MustJSON(got))
	}
	ev := th.WantOK(t, h.Get("/v2/payments/"+id+"/evidence", key))
	if pay, _ := ev["payment"].(map[string]any); pay["purpose"] != "services" {
		t.Errorf("evidence's payment = %v", ev["payment"])
	}
	if d := th.WantOK(t, h.Post("/v2/payments", key, body(""))); d["purpose"] != "other" {
		t.Errorf("without a purpose = %v, want other", d["purpose"])
	}

	payments := h.Count("payments")
	for _, bad := range []string{`"rent"`, `7`, `null`} {
		r := h.Post("/v2/payments", key, body(`,"purpose":`+bad))
		if bad == `null` {
			// null is no purpose: the default.
			if got := th.WantOK(t, r); got["purpose"] != "other" {
				t.Errorf("purpose null = %v, want other", got["purpose"])
			}
			payments++
			continue
		}
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if e := r.JSON(t)["error"].(map[string]any); e["param"] != "purpose" {
			t.Errorf("purpose %s: error %v, want param purpose", bad, e)
		}
	}
	if n := h.Count("payments"); n != payments {
		t.Errorf("payments %d after refusals, want %d", n, payments)
	}
	r := h.Post("/v2/payments", key, body(`,"purpose":"goods","entry_description":"SUPPLIES"`))
	th.WantError(t, r, http.StatusBadRequest, "invalid_request")
	if e := r.JSON(t)["error"].(map[string]any); e["param"] != "entry_description" {
		t.Errorf("SUPPLIES on an individual's debit for goods: error %v, want param entry_description", e)
	}
	if d := th.WantOK(t, h.Post("/v2/payments", key, body(`,"purpose":"goods","entry_description":"PURCHASE"`))); d["entry_description"] != "PURCHASE" {
		t.Errorf("PURCHASE for goods = %s", th.MustJSON(d))
	}

	sub := th.WantOK(t, h.Post("/v2/subscriptions", key,
		`{"funding_source_id":"`+src+`","amount":"9.99","interval":"monthly","start_date":"2026-11-02","purpose":"donation"}`))
	if sub["purpose"] != "donation" {
		t.Errorf("subscription = %s", th.MustJSON(sub))
	}
	if got := th.WantOK(t, h.Get("/v2/subscriptions/"+sub["subscription_id"].(string), key)); got["purpose"] != "donation" {
		t.Errorf("subscription read = %s", th.MustJSON(got))
	}
	r = h.Post("/v2/subscriptions", key, `{"funding_source_id":"`+src+`","amount":"9.99","interval":"monthly","start_date":"2026-11-02","purpose":"tips"}`)
	th.WantError(t, r, http.StatusBadRequest, "invalid_request")
	if e := r.JSON(t)["error"].(map[string]any); e["param"] != "purpose" {
		t.Errorf("subscription purpose tips: error %v, want param purpose", e)
	}
}
