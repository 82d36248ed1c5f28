package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/lab/bench"
	"github.com/fundsource/fundsource/internal/testing/harness"
)

// TestInstantPayoutsMeasure runs the bench's instant payout measurement
// alone: the service over HTTP, its rail the simulator over HTTP.
func TestInstantPayoutsMeasure(t *testing.T) {
	rail := httptest.NewServer(railsim.New().Handler())
	defer rail.Close()
	h := harness.New(t, harness.WithRail(rail.URL))
	api := httptest.NewServer(h.Engine)
	defer api.Close()
	m := h.Merchant("Payouts")
	c, err := h.Svc.Customers.Create(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bench.InstantPayouts(context.Background(), http.DefaultClient, api.URL, m.Sandbox.SecretKey, c.ID, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops != 20 || r.Errors != 0 || r.P50 <= 0 || r.P99 < r.P50 {
		t.Fatalf("%d payouts, %d failed (first: %s), p50 %s, p99 %s", r.Ops, r.Errors, r.FirstError, r.P50, r.P99)
	}
	t.Logf("instant payout to processed: p50 %s, p99 %s", r.P50, r.P99)
}
