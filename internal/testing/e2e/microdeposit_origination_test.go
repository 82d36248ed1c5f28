package e2e_test

import (
	"bytes"
	"context"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestMicroDepositsLeaveUnderTheMerchantAndOnlyWhileTheyMay: a
// verification's deposits go out under the merchant's originator company
// name and id, described ACCTVERIFY (the name the receiver will see on
// the merchant's later entries); those of a source removed before they
// leave are not sent and the verification is canceled; those of a
// customer held as a potential sanctions match wait, and leave once an
// operator clears the screening.
func TestMicroDepositsLeaveUnderTheMerchantAndOnlyWhileTheyMay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, key, scope := namedLiveMerchant(t, h, "Widgets")
	setCompany(t, h, scope, "ACME WIDGETS", "9876543210")
	sourceOf := func(customer, account string) string {
		t.Helper()
		id := h.Source(key, customer, account)
		th.WantOK(t, h.Initiate(key, id))
		return id
	}
	sourceOf(h.Customer(key), "000111000111")
	removed := sourceOf(h.Customer(key), "000222000222")
	listed := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Mirela","last_name":"Drakovic","email":"m@example.com"}`))["user_id"].(string)
	held := sourceOf(listed, "000333000333")
	if _, err := h.Consequences.Remove(ctx, scope, removed); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	written, err := o.Run(ctx)
	if err != nil || len(written) != 1 {
		t.Fatalf("Run = %v, %v", written, err)
	}
	f := readACH(t, dir)[written[0]]
	var deposits []string
	for _, b := range f.Batches {
		bh := b.GetHeader()
		if bh.CompanyEntryDescription != ach.DescriptionMicroDeposits {
			continue
		}
		if bh.CompanyName != "ACME WIDGETS" || bh.CompanyIdentification != "9876543210" {
			t.Errorf("micro-deposit batch under %q %q, want the merchant's ACME WIDGETS 9876543210", bh.CompanyName, bh.CompanyIdentification)
		}
		for _, e := range b.GetEntries() {
			if e.TransactionCode == 22 || e.TransactionCode == 32 {
				deposits = append(deposits, e.DFIAccountNumber)
			}
		}
	}
	if len(deposits) != 2 || deposits[0][:12] != "000111000111" || deposits[1][:12] != "000111000111" {
		t.Errorf("deposits sent = %q, want the plain source's two only", deposits)
	}
	var status string
	if err := h.SQL().Get(&status, `SELECT status FROM micro_deposits WHERE funding_source_id = $1`, removed); err != nil || status != "canceled" {
		t.Errorf("the removed source's verification = %q (%v), want canceled", status, err)
	}
	var heldEntries int
	if err := h.SQL().Get(&heldEntries, `SELECT count(*) FROM ach_entries WHERE funding_source_id = $1`, held); err != nil || heldEntries != 0 {
		t.Errorf("entries of the held customer's deposits = %d (%v), want none before the screening is cleared", heldEntries, err)
	}

	if _, _, err := h.Payments.ClearScreening(ctx, listed, "a different person: date of birth checked", audit.Operator("compliance")); err != nil {
		t.Fatal(err)
	}
	if written, err := o.Run(ctx); err != nil || len(written) != 1 {
		t.Fatalf("Run after clearing = %v, %v", written, err)
	}
	if err := h.SQL().Get(&heldEntries, `SELECT count(*) FROM ach_entries WHERE funding_source_id = $1`, held); err != nil || heldEntries != 2 {
		t.Errorf("entries of the cleared customer's deposits = %d (%v), want 2", heldEntries, err)
	}
}

// TestAnEntrysReceiverNameIsScreenedAsItLeaves: a notification of change
// corrects a source's receiver name to a listed person's; the customer's
// own names screen clear, but the next payment to the source carries the
// corrected name, so it is held for sanctions screening as it would
// leave, and the customer is marked a potential match.
func TestAnEntrysReceiverNameIsScreenedAsItLeaves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, key, _ := liveMerchant(t, h)
	customer := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(customer, "021000021", "000123456789")))["funding_source_id"].(string)
	o := h.originator(achConfig(t.TempDir()))
	first := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "credit")))["payment_id"].(string)
	if _, err := o.Run(ctx); err != nil {
		t.Fatal(err)
	}
	trace, _ := h.entryOf(t, first)
	res, err := o.ImportReturns(ctx, bytes.NewReader(h.nocFile(t, []nocEntry{{trace, "C04", &nacha.CorrectedData{Name: "MIRELA DRAKOVIC"}}})))
	if err != nil || res.ChangesApplied != 1 {
		t.Fatalf("C04 = %+v, %v", res, err)
	}
	second := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"2.00"`, "credit")))["payment_id"].(string)
	if p := th.WantOK(t, h.Get("/v2/payments/"+second, key)); p["status"] != "pending" {
		t.Fatalf("the payment before it leaves = %v", p["status"])
	}
	if written, err := o.Run(ctx); err != nil || len(written) != 0 {
		t.Errorf("Run = %v, %v; want no file: the only payment is held", written, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+second, key)); p["status"] != "held" || p["hold_reason"] != "sanctions_screening" {
		t.Errorf("the payment to the corrected name = %v %v, want held sanctions_screening", p["status"], p["hold_reason"])
	}
	if c := th.WantOK(t, h.Get("/v2/customers/"+customer, key)); c["screening"].(map[string]any)["status"] != "potential_match" {
		t.Errorf("the customer after its receiver's name matched = %v", c["screening"])
	}
}
