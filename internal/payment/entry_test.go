package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestEntryDescriptionRules: PAYROLL only on credits to individuals'
// accounts; the service's own descriptions never; a free one on credits
// and on debits from companies' accounts; the format at its edges (10
// characters and 11, lower case). A refusal is invalid_request on
// entry_description and writes nothing; an accepted one is on the
// payment as stored.
func TestEntryDescriptionRules(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	person := f.VerifiedSource(scope, f.Customer(scope), "600000000001").ID
	company := f.VerifiedSource(scope, f.Customer(scope), "600000000002").ID
	holder := funding.HolderCompany
	if _, err := f.Funding.Update(ctx, scope, company, funding.Update{AccountHolderType: &holder}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, source string
		d            payment.Direction
		ed           string
		ok           bool
	}{
		{"PAYROLL to an individual", person, payment.Credit, "PAYROLL", true},
		{"PAYROLL to a company", company, payment.Credit, "PAYROLL", false},
		{"PAYROLL as a debit", person, payment.Debit, "PAYROLL", false},
		{"free credit to an individual", person, payment.Credit, "REFUND", true},
		{"free credit to a company", company, payment.Credit, "REBATE 2026", false}, // 11 characters
		{"ten characters", company, payment.Credit, "REBATE 202", true},
		{"free debit from a company", company, payment.Debit, "SUPPLIES", true},
		{"free debit from an individual", person, payment.Debit, "SUPPLIES", false},
		{"PURCHASE is the service's", company, payment.Debit, "PURCHASE", false},
		{"RETRY PYMT is the service's", company, payment.Credit, "RETRY PYMT", false},
		{"REVERSAL is the service's", person, payment.Credit, "REVERSAL", false},
		{"ACCTVERIFY is the service's", person, payment.Credit, "ACCTVERIFY", false},
		{"lower case", person, payment.Credit, "payroll", false},
		{"punctuation", person, payment.Credit, "PAY-OUT", false},
		{"empty", person, payment.Credit, "", false},
		{"spaces only", person, payment.Credit, "   ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := pay(c.source, c.d)
			ed := c.ed
			in.EntryDescription = &ed
			var before int
			if err := f.SQL().Get(&before, `SELECT count(*) FROM payments`); err != nil {
				t.Fatal(err)
			}
			p, err := f.Payments.Create(ctx, scope, in)
			if c.ok {
				if err != nil || p.EntryDescription == nil || *p.EntryDescription != c.ed {
					t.Fatalf("got %+v, %v", p.EntryDescription, err)
				}
				got, err := f.Payments.Get(ctx, scope, p.ID)
				if err != nil || got.EntryDescription == nil || *got.EntryDescription != c.ed {
					t.Errorf("stored %+v, %v", got.EntryDescription, err)
				}
				return
			}
			if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || e.Param != "entry_description" {
				t.Fatalf("got %v, want invalid_request on entry_description", err)
			}
			var after int
			if err := f.SQL().Get(&after, `SELECT count(*) FROM payments`); err != nil || after != before {
				t.Errorf("payments %d → %d, %v", before, after, err)
			}
		})
	}
	if p, err := f.Payments.Create(ctx, scope, pay(person, payment.Debit)); err != nil || p.EntryDescription != nil {
		t.Errorf("no entry_description: %+v, %v", p.EntryDescription, err)
	}
}
