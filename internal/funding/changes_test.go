package funding_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestAChangeIsAppliedOncePerEntry applies the same entry's NOC twice and
// another entry's once: the source is corrected by each distinct one, its
// history keeps what each replaced, and a removed source takes none.
func TestAChangeIsAppliedOncePerEntry(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "000123456789")
	apply := func(id string, c funding.Correction) (bool, error) {
		var applied bool
		err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
			var err error
			applied, err = f.Funding.ApplyChangeTx(ctx, tx, scope, id, c)
			return err
		})
		return applied, err
	}
	c01 := funding.Correction{ChangeCode: funding.ChangeAccount, OriginalTrace: "121042880000001",
		CorrectedData: funding.CorrectedData{AccountNumber: "44445555"}}
	for i, want := range []bool{true, false} {
		if applied, err := apply(src.ID, c01); err != nil || applied != want {
			t.Fatalf("import %d: applied %v, %v; want %v", i+1, applied, err, want)
		}
	}
	c05 := funding.Correction{ChangeCode: funding.ChangeType, OriginalTrace: "121042880000002",
		CorrectedData: funding.CorrectedData{AccountType: funding.Savings}}
	if applied, err := apply(src.ID, c05); err != nil || !applied {
		t.Fatalf("C05: %v, %v", applied, err)
	}
	got, err := f.Funding.Get(ctx, scope, src.ID)
	if err != nil || got.LastFour != "5555" || got.AccountType != funding.Savings || got.RoutingNumber != src.RoutingNumber {
		t.Errorf("corrected source = %+v, %v", got, err)
	}
	if a, err := f.Funding.BankAccount(ctx, scope, src.ID); err != nil || a.AccountNumber != "44445555" {
		t.Errorf("account number = %q, %v", a.AccountNumber, err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM funding_source_changes WHERE funding_source_id = $1`, src.ID); err != nil || n != 2 {
		t.Errorf("history rows = %d, %v; want 2", n, err)
	}
	bad := funding.Correction{ChangeCode: funding.ChangeRoutingAccount, OriginalTrace: "121042880000003",
		CorrectedData: funding.CorrectedData{RoutingNumber: fixture.RoutingNumber}}
	if _, err := apply(src.ID, bad); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("C03 without an account number: %v, want invalid_request", err)
	}
	if _, err := f.Consequences.Remove(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
	c02 := funding.Correction{ChangeCode: funding.ChangeRouting, OriginalTrace: "121042880000004",
		CorrectedData: funding.CorrectedData{RoutingNumber: fixture.RoutingNumber}}
	if applied, err := apply(src.ID, c02); err != nil || applied {
		t.Errorf("a removed source's change: %v, %v; want nothing applied", applied, err)
	}
}
