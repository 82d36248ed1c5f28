package payment_test

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestSettledTakesTheStatementsDate: the bank's booking date becomes a
// sent payment's settlement date, with the windows after it. A pending
// payment is processed then (one payment.success); one processed before
// (its SettleAt came first) only takes the date; a returned one is left
// as it is.
func TestSettledTakesTheStatementsDate(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := envs(t, f)["production"]
	src := f.VerifiedSource(scope, f.Customer(scope), "44440001").ID
	pending, early, returned := newDebit(t, f, scope, src, 2500), newDebit(t, f, scope, src, 2600), newDebit(t, f, scope, src, 2700)
	if _, err := originator(t, f).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
		return f.Consequences.ReturnTx(ctx, tx, scope, returned.ID, "R01")
	}); err != nil {
		t.Fatal(err)
	}
	// early passed its SettleAt: processed by the clock.
	if _, err := f.SQL().Exec(`UPDATE payments SET settle_at = $2 WHERE id = $1`, early.ID, f.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(time.Second)
	if n, err := f.Consequences.SettleDue(ctx); err != nil || n != 1 {
		t.Fatalf("settle due = %d, %v; want early alone", n, err)
	}
	wantState(t, f, scope, early.ID, payment.Processed, "")
	before, err := f.Payments.Get(ctx, scope, returned.ID)
	if err != nil {
		t.Fatal(err)
	}
	booked := time.Date(2026, 12, 9, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{pending.ID, early.ID, returned.ID} {
		if err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
			return f.Consequences.SettledTx(ctx, tx, scope, id, booked)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{pending.ID, early.ID} {
		p, err := f.Payments.Get(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != payment.Processed || p.SettlementDate == nil || *p.SettlementDate != "2026-12-09" ||
			p.ReturnWindowClosesAt == nil || !p.ReturnWindowClosesAt.Equal(time.Date(2026, 12, 12, 4, 59, 59, 0, time.UTC)) ||
			p.UnauthorizedReturnWindowClosesAt == nil || !p.UnauthorizedReturnWindowClosesAt.Equal(time.Date(2027, 2, 8, 4, 59, 59, 0, time.UTC)) {
			t.Errorf("%s settled on 2026-12-09: %s, %+v", id, p.Status, p.Dates)
		}
	}
	after, err := f.Payments.Get(ctx, scope, returned.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != payment.Failed || *after.SettlementDate != *before.SettlementDate {
		t.Errorf("returned payment: %s %v, want failed on %v", after.Status, *after.SettlementDate, *before.SettlementDate)
	}
	var successes int
	if err := f.SQL().Get(&successes, `SELECT count(*) FROM events WHERE type = 'payment.success' AND data->>'payment_id' IN ($1, $2)`,
		pending.ID, early.ID); err != nil || successes != 2 {
		t.Errorf("payment.success events = %d, %v; want one each", successes, err)
	}
}
