package e2e_test

import (
	"context"
	"slices"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// accountCheck is the account_check of a funding source response.
func accountCheck(t *testing.T, src map[string]any) (string, []string) {
	t.Helper()
	c, _ := src["account_check"].(map[string]any)
	if c == nil {
		t.Fatalf("no account_check in %s", th.MustJSON(src))
	}
	var reasons []string
	for _, r := range c["reasons"].([]any) {
		reasons = append(reasons, r.(string))
	}
	return c["result"].(string), reasons
}

// TestManyCustomersInProductionCountsOnlyOtherMerchantsPayingCustomers: in
// production, merchant A links an account under two customers and
// deletes both with no money moved: merchant B's link of it is unknown.
// Then two more of A's customers each get a credit that leaves in an ACH
// file and settles (processed): B's next link is many_customers.
func TestManyCustomersInProductionCountsOnlyOtherMerchantsPayingCustomers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, aKey, _ := liveMerchant(t, h)
	bKey := h.Production(h.Merchant("Beta")).SecretKey
	const account = "770044556"
	remove := func(key, id string) {
		t.Helper()
		th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+id+`"}`))
	}
	want := func(what string, src map[string]any, result string, reasons ...string) {
		t.Helper()
		if r, rs := accountCheck(t, src); r != result || !slices.Equal(rs, reasons) {
			t.Errorf("%s: account_check = %s %v, want %s %v", what, r, rs, result, reasons)
		}
	}

	for range 2 {
		remove(aKey, h.Source(aKey, h.Customer(aKey), account))
	}
	bCus := h.Customer(bKey)
	bSrc := h.Source(bKey, bCus, account)
	want(bSrc+"'s GET after A's unused links", th.WantOK(t, h.Get("/v2/funding-source/"+bSrc, bKey)), "unknown")
	remove(bKey, bSrc)

	o := h.originator(achConfig(t.TempDir()))
	var credits []string
	for range 2 {
		src := h.Source(aKey, h.Customer(aKey), account)
		credits = append(credits, th.WantOK(t, h.Post("/v2/payments", aKey, th.PaymentBody(src, `"10.00"`, "credit")))["payment_id"].(string))
		if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
			t.Fatalf("origination: %v, %v", written, err)
		}
		remove(aKey, src) // the credit has left: it still settles
	}
	h.Clock.Advance(7 * 24 * time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range credits {
		if p := th.WantOK(t, h.Get("/v2/payments/"+id, aKey)); p["status"] != "processed" {
			t.Fatalf("credit %s = %v, want processed", id, p["status"])
		}
	}
	created := th.WantOK(t, h.Post("/v2/funding-source", bKey, th.SourceBody(bCus, "021000021", account)))
	want("B's link after A's two paying customers", created, "caution", "many_customers")
	want("its GET", th.WantOK(t, h.Get("/v2/funding-source/"+created["funding_source_id"].(string), bKey)), "caution", "many_customers")
}
