package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/testing/apiclient"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestReturnRates counts the environment's debits of the last 60 days
// (canceled ones left aside, older ones and credits too) and their returns
// by group, over HTTP and through the generated client.
func TestReturnRates(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	debit := func(src string) string {
		return th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "debit")))["payment_id"].(string)
	}
	ret := func(id, code string) {
		th.WantOK(t, h.Post("/v2/sandbox/payments/"+id+"/return", key, `{"code":"`+code+`"}`))
	}
	empty := th.WantOK(t, h.Get("/v2/compliance/return-rates", key))
	if o := empty["overall"].(map[string]any); o["rate"] != float64(0) || o["debits"] != float64(0) || o["threshold"] != 0.15 {
		t.Errorf("without debits: %s", th.MustJSON(empty))
	}
	// Outside the window: an unauthorized return 61 days ago.
	ret(debit(h.VerifiedSource(key, user, "100000001")), "R05")
	h.Clock.Advance(61 * 24 * time.Hour)

	b := h.VerifiedSource(key, user, "100000002")
	unauthorized, _ := debit(b), debit(b)
	th.WantOK(t, h.Post("/v2/payments/"+debit(b)+"/cancel", key, ``))
	ret(unauthorized, "R10")
	ret(debit(h.VerifiedSource(key, user, "100000003")), "R03")
	d := h.VerifiedSource(key, user, "100000004")
	ret(debit(d), "R01")
	// Of another amount: 5.00 again would present the returned debit again.
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(d, `"6.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(d, `"7.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(d, `"5.00"`, "credit")))

	// The R10 blocked b and canceled its other pending debit: canceled
	// debits never went out and do not count.
	got := th.WantOK(t, h.Get("/v2/compliance/return-rates", key))
	want := map[string][3]float64{ // returns, debits, threshold
		"unauthorized": {1, 5, 0.005}, "administrative": {1, 5, 0.03}, "overall": {3, 5, 0.15},
	}
	for name, w := range want {
		r := got[name].(map[string]any)
		if r["returns"] != w[0] || r["debits"] != w[1] || r["threshold"] != w[2] || r["rate"] != w[0]/w[1] {
			t.Errorf("%s = %v, want %v returns of %v debits", name, r, w[0], w[1])
		}
	}
	if got["window_days"] != float64(60) {
		t.Errorf("window_days = %v", got["window_days"])
	}
	// Production's rates are its own.
	prod := h.Production(m).SecretKey
	if o := th.WantOK(t, h.Get("/v2/compliance/return-rates", prod))["overall"].(map[string]any); o["debits"] != float64(0) {
		t.Errorf("production's rates count sandbox debits: %v", o)
	}
	th.WantError(t, h.Get("/v2/compliance/return-rates?days=30", key), http.StatusBadRequest, "invalid_request")

	c, err := apiclient.NewClientWithResponses(h.Live().URL, apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetReturnRatesWithResponse(context.Background())
	if err != nil || res.JSON200 == nil || res.JSON200.Overall.Returns != 3 || res.JSON200.Unauthorized.Debits != 5 {
		t.Errorf("generated client: %v, %s", err, res.Body)
	}
}
