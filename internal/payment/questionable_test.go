package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestR17ActsOnTheSourceLikeR10: a debit returned R17 (questionable
// circumstances) blocks its source, revokes its mandates with
// return_R17, cancels its unsent debits and fails its account check,
// exactly as R10 does.
func TestR17ActsOnTheSourceLikeR10(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	for i, code := range []string{"R10", "R17"} {
		t.Run(code, func(t *testing.T) {
			src := f.VerifiedSource(scope, f.Customer(scope), account(700+i)).ID
			returned := newDebit(t, f, scope, src, 2500)
			unsent := newDebit(t, f, scope, src, 2600)
			if _, err := f.Consequences.SimulateReturn(ctx, scope, returned.ID, code); err != nil {
				t.Fatal(err)
			}
			wantState(t, f, scope, unsent.ID, payment.Voided, payment.CancelSourceBlocked)
			s, err := f.Funding.Get(ctx, scope, src)
			if err != nil {
				t.Fatal(err)
			}
			if s.Block == nil || s.Block.Code != code {
				t.Errorf("block: %+v, want %s", s.Block, code)
			}
			if s.AccountCheck.Result != funding.CheckFail {
				t.Errorf("account check: %+v, want fail", s.AccountCheck)
			}
			var live, revoked int
			if err := f.SQL().Get(&live, `SELECT count(*) FROM mandates WHERE funding_source_id = $1 AND status <> 'revoked'`, src); err != nil {
				t.Fatal(err)
			}
			if err := f.SQL().Get(&revoked, `SELECT count(*) FROM mandates WHERE funding_source_id = $1 AND revoke_reason = $2`,
				src, "return_"+code); err != nil {
				t.Fatal(err)
			}
			if live != 0 || revoked == 0 {
				t.Errorf("mandates: %d not revoked, %d revoked with return_%s", live, revoked, code)
			}
		})
	}
}
