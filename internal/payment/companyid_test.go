package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// wantHeld checks that a payment is held for reason ("" for pending, not
// held).
func wantHeld(t *testing.T, f *fixture.Fixture, p payment.Payment, reason string) {
	t.Helper()
	got, err := f.Payments.Get(ctx, p.Scope, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case reason == "" && (got.Status != payment.Pending || got.HoldReason != nil):
		t.Errorf("%s: %s %v, want pending", p.ID, got.Status, got.HoldReason)
	case reason != "" && (got.Status != payment.Held || got.HoldReason == nil || *got.HoldReason != reason):
		t.Errorf("%s: %s %v, want held for %s", p.ID, got.Status, got.HoldReason, reason)
	}
}

// TestAnUnassignedCompanyIDHoldsProductionPayments: an active production
// originator whose company id was never set by an operator (a database
// upgraded from before the mark) has its new production payments created
// held (originator_company_id), and its pending ones held as they are
// about to leave instead of going out under the placeholder; sandbox
// payments are not held. Setting the company id releases them all, and
// they leave under it.
func TestAnUnassignedCompanyIDHoldsProductionPayments(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scopes := envs(t, f)
	prod, sandbox := scopes["production"], scopes["sandbox"]
	src := f.VerifiedSource(prod, f.Customer(prod), "99990001").ID
	before := newDebit(t, f, prod, src, 1500) // created while the id counted as assigned
	if _, err := f.SQL().Exec(`UPDATE originators SET company_id_assigned = false WHERE merchant_id = $1`, prod.MerchantID); err != nil {
		t.Fatal(err)
	}
	if o, err := f.Originators.Get(ctx, prod); err != nil || o.CompanyIDAssigned || o.Status != orig.Active {
		t.Fatalf("upgraded originator = %+v, %v", o.Originator, err)
	}

	debit, credit := newDebit(t, f, prod, src, 1600), newCredit(t, f, prod, src)
	wantHeld(t, f, debit, payment.HoldOriginatorCompanyID)
	wantHeld(t, f, credit, payment.HoldOriginatorCompanyID)
	sbSrc := f.VerifiedSource(sandbox, f.Customer(sandbox), "99990002").ID
	wantHeld(t, f, newDebit(t, f, sandbox, sbSrc, 1700), "")

	wantHeld(t, f, before, "")
	o := originator(t, f)
	if written, err := o.Run(ctx); err != nil || len(written) != 0 {
		t.Fatalf("Run = %v, %v; want no file", written, err)
	}
	wantHeld(t, f, before, payment.HoldOriginatorCompanyID)
	if inFile(t, f, before.ID) {
		t.Error("a payment left under the placeholder company id")
	}

	id := "1555123456"
	if _, err := f.Originators.Set(ctx, prod, orig.Change{CompanyID: &id}, audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []payment.Payment{before, debit, credit} {
		wantHeld(t, f, p, "")
		if n := events(t, f, "payment.released", p.ID); n != 1 {
			t.Errorf("%s: %d payment.released events, want 1", p.ID, n)
		}
	}
	if written, err := o.Run(ctx); err != nil || len(written) != 1 {
		t.Fatalf("Run after the company id was set = %v, %v", written, err)
	}
	var ids []string
	if err := f.SQL().Select(&ids, `SELECT DISTINCT company_id FROM ach_entries WHERE merchant_id = $1`, prod.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != id {
		t.Errorf("entries went out under %v, want [%s]", ids, id)
	}
}
