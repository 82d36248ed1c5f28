package funding_test

import (
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestHolderTypeStaysWhileMandatesAreActive: a source with an active
// mandate keeps its account_holder_type (409 mandates_active on
// account_holder_type, nothing written, no event); a nickname alone still
// changes; once every mandate is revoked, the holder type changes.
func TestHolderTypeStaysWhileMandatesAreActive(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "000123456789")
	var mandates []string
	for range 2 {
		p, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src.ID, Amount: json.RawMessage(`"10.00"`), Direction: payment.Debit})
		if err != nil {
			t.Fatal(err)
		}
		mandates = append(mandates, *p.MandateID)
	}
	updated := func() int {
		var n int
		if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = 'funding_source.updated' AND data->>'funding_source_id' = $1`, src.ID); err != nil {
			t.Fatal(err)
		}
		return n
	}

	_, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr(funding.HolderCompany)})
	if e, ok := errs.As(err); !ok || e.Code != errs.MandatesActive || e.Param != "account_holder_type" {
		t.Fatalf("holder type change with two active mandates: %v; want mandates_active on account_holder_type", err)
	}
	if got, _ := f.DB.Source(ctx, scope, src.ID); got.AccountHolderType != funding.HolderIndividual || updated() != 0 {
		t.Errorf("a refused change wrote: %q, %d events", got.AccountHolderType, updated())
	}
	// The same type is no change, and a nickname is not the holder's.
	if _, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr(funding.HolderIndividual),
		Nickname: &funding.NicknameUpdate{Value: ptr("Checking")}}); err != nil {
		t.Errorf("nickname with the same holder type: %v", err)
	}

	// One revoked, one still active: still refused.
	if _, err := f.Payments.Revoke(ctx, scope, mandates[0], payment.RevokeInput{}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr(funding.HolderCompany)}); !errs.Is(err, errs.MandatesActive) {
		t.Errorf("holder type change with one active mandate: %v; want mandates_active", err)
	}
	if _, err := f.Payments.Revoke(ctx, scope, mandates[1], payment.RevokeInput{}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	got, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr(funding.HolderCompany)})
	if err != nil || got.AccountHolderType != funding.HolderCompany {
		t.Fatalf("holder type change once the mandates are revoked = %q, %v", got.AccountHolderType, err)
	}
	if r, err := f.Funding.Receiver(ctx, scope, src.ID); err != nil || !r.Company {
		t.Errorf("receiver after the change = %+v, %v", r, err)
	}
}
