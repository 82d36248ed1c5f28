package e2e_test

import (
	"context"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestACHNetworkUnauthorizedReturnCancelsTheOtherDebit: two debits of one
// consumer's source; the first goes out and the network answers it R10;
// importing the return blocks the source and cancels the second debit at
// once (funding_source_blocked, payment.canceled), before any file. A
// subscription debit whose mandate is revoked (POST /v2/mandates/{id}/revoke)
// is canceled too (mandate_revoked). The next file carries neither.
func TestACHNetworkUnauthorizedReturnCancelsTheOtherDebit(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	disputed := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123450010")))["funding_source_id"].(string)
	clean := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456789")))["funding_source_id"].(string)
	first := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(disputed, `"25.00"`)))["payment_id"].(string)
	n.originate(t)
	second := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(disputed, `"26.00"`)))["payment_id"].(string)

	sub := th.WantOK(t, h.Post("/v2/subscriptions", n.key, `{"funding_source_id":"`+clean+`","amount":"9.00","interval":"monthly","start_date":"2026-11-02","authorization":`+th.Authorization+`}`))
	if k, err := h.Payments.RunDue(context.Background()); err != nil || k != 1 {
		t.Fatalf("RunDue = %d, %v", k, err)
	}
	subDebits := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+clean, n.key))["data"].([]any)
	if len(subDebits) != 1 {
		t.Fatalf("subscription debits = %v", subDebits)
	}
	subDebit := subDebits[0].(map[string]any)["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/mandates/"+sub["mandate_id"].(string)+"/revoke", n.key, `{"revoke_reason":"customer called"}`))
	if p := th.WantOK(t, h.Get("/v2/payments/"+subDebit, n.key)); p["status"] != "canceled" || p["cancel_reason"] != "mandate_revoked" {
		t.Errorf("subscription debit after its mandate's revocation = %s", th.MustJSON(p))
	}

	n.step(t, "2026-11-02")
	sum, res := n.step(t, "2026-11-05")
	if len(sum.Written) != 1 || sum.Returns != 1 || res.Applied != 1 {
		t.Fatalf("achnet two banking days after settlement = %+v; import %+v", sum, res)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+first, n.key)); p["status"] != "failed" || p["failure_code"] != "R10" || p["cancel_reason"] != nil {
		t.Errorf("returned debit = %s", th.MustJSON(p))
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+disputed, n.key)); s["block"] == nil {
		t.Errorf("source after an R10 = %s", th.MustJSON(s))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+second, n.key)); p["status"] != "canceled" || p["cancel_reason"] != "funding_source_blocked" || p["settled_at"] == nil {
		t.Errorf("the other debit after the R10's import = %s", th.MustJSON(p))
	}
	reasons := map[string]any{}
	for _, ev := range h.Events("payment.canceled") {
		reasons[ev["payment_id"].(string)] = ev["cancel_reason"]
	}
	if reasons[second] != "funding_source_blocked" || reasons[subDebit] != "mandate_revoked" || len(reasons) != 2 {
		t.Errorf("payment.canceled events = %v", reasons)
	}

	// The next file: a credit goes, the canceled debits do not.
	th.WantOK(t, h.Post("/v2/payments", n.key, th.PaymentBody(clean, `"4.00"`, "credit")))
	n.originate(t)
	amounts := map[int]int{}
	for _, f := range readACH(t, n.outbox) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				amounts[e.Amount]++
			}
		}
	}
	if amounts[2500] != 1 || amounts[400] != 1 || amounts[2600] != 0 || amounts[900] != 0 {
		t.Errorf("entries by amount over both files = %v; want 25.00 and 4.00 once, never 26.00 or 9.00", amounts)
	}
	var entries int
	if err := h.SQL().Get(&entries, `SELECT count(*) FROM ach_entries WHERE payment_id IN ($1, $2)`, second, subDebit); err != nil || entries != 0 {
		t.Errorf("entries of the canceled debits = %d (%v)", entries, err)
	}
}
