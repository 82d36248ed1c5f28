package payment_test

import (
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestEntryDescriptionRules: PURCHASE only on an individual's debit for
// goods, which takes no other; PAYROLL only on a credit to an
// individual's account for payroll, which takes no other; the service's
// own descriptions never; a free one everywhere else; the format at its
// edges (10 characters and 11, lower case). A refusal is invalid_request
// on entry_description and writes nothing; an accepted one is on the
// payment as stored, with its purpose.
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
	const (
		goods    = payment.PurposeGoods
		services = payment.PurposeServices
		payroll  = payment.PurposePayroll
		other    = payment.PurposeOther
	)
	for _, c := range []struct {
		name, source string
		d            payment.Direction
		purpose      payment.Purpose
		ed           string
		ok           bool
	}{
		{"PAYROLL to an individual for payroll", person, payment.Credit, payroll, "PAYROLL", true},
		{"PAYROLL to an individual for other", person, payment.Credit, other, "PAYROLL", false},
		{"PAYROLL to a company for payroll", company, payment.Credit, payroll, "PAYROLL", false},
		{"PAYROLL as a debit for payroll", person, payment.Debit, payroll, "PAYROLL", false},
		{"another description on a payroll credit to an individual", person, payment.Credit, payroll, "SALARY", false},
		{"another description on a payroll credit to a company", company, payment.Credit, payroll, "SALARY", true},
		{"PURCHASE from an individual for goods", person, payment.Debit, goods, "PURCHASE", true},
		{"PURCHASE from an individual for services", person, payment.Debit, services, "PURCHASE", false},
		{"PURCHASE from a company for goods", company, payment.Debit, goods, "PURCHASE", false},
		{"PURCHASE on a credit for goods", person, payment.Credit, goods, "PURCHASE", false},
		{"another description from an individual for goods", person, payment.Debit, goods, "SUPPLIES", false},
		{"a description from an individual for services", person, payment.Debit, services, "LESSONS", true},
		{"free credit to an individual", person, payment.Credit, other, "REFUND", true},
		{"free credit to a company", company, payment.Credit, other, "REBATE 2026", false}, // 11 characters
		{"ten characters", company, payment.Credit, other, "REBATE 202", true},
		{"free debit from a company for goods", company, payment.Debit, goods, "SUPPLIES", true},
		{"RETRY PYMT is the service's", company, payment.Credit, other, "RETRY PYMT", false},
		{"REVERSAL is the service's", person, payment.Credit, other, "REVERSAL", false},
		{"ACCTVERIFY is the service's", person, payment.Credit, other, "ACCTVERIFY", false},
		{"lower case", person, payment.Credit, payroll, "payroll", false},
		{"punctuation", person, payment.Credit, other, "PAY-OUT", false},
		{"empty", person, payment.Credit, other, "", false},
		{"spaces only", person, payment.Credit, other, "   ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := pay(c.source, c.d)
			ed, purpose := c.ed, string(c.purpose)
			in.EntryDescription, in.Purpose = &ed, &purpose
			var before int
			if err := f.SQL().Get(&before, `SELECT count(*) FROM payments`); err != nil {
				t.Fatal(err)
			}
			p, err := f.Payments.Create(ctx, scope, in)
			if c.ok {
				if err != nil || p.EntryDescription == nil || *p.EntryDescription != c.ed || p.Purpose != c.purpose {
					t.Fatalf("got %+v %q, %v", p.EntryDescription, p.Purpose, err)
				}
				got, err := f.Payments.Get(ctx, scope, p.ID)
				if err != nil || got.EntryDescription == nil || *got.EntryDescription != c.ed || got.Purpose != c.purpose {
					t.Errorf("stored %+v %q, %v", got.EntryDescription, got.Purpose, err)
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

// TestPurposeDefaultsToTheOriginators: a payment or subscription without
// a purpose has its originator's default_purpose (other for a new
// originator; what the operator set after); a subscription's debits have
// the subscription's; an unknown purpose
// is invalid_request on purpose and writes nothing, as is an unknown
// default_purpose.
func TestPurposeDefaultsToTheOriginators(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "600000000003").ID
	if o, err := f.Originators.Get(ctx, scope); err != nil || o.DefaultPurpose != payment.PurposeOther {
		t.Fatalf("a new originator's default_purpose = %q, %v; want other", o.DefaultPurpose, err)
	}
	p, err := f.Payments.Create(ctx, scope, pay(src, payment.Credit))
	if err != nil || p.Purpose != payment.PurposeOther {
		t.Fatalf("credit without a purpose = %q, %v; want other", p.Purpose, err)
	}

	for _, bad := range []string{"Goods", "", "rent"} {
		in := pay(src, payment.Debit)
		in.Purpose = &bad
		if _, err := f.Payments.Create(ctx, scope, in); !isInvalidParam(err, "purpose") {
			t.Errorf("purpose %q: %v, want invalid_request on purpose", bad, err)
		}
		if _, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"5.00"`),
			Interval: payment.Monthly, StartDate: "2026-11-02", Purpose: &bad}); !isInvalidParam(err, "purpose") {
			t.Errorf("subscription purpose %q: %v, want invalid_request on purpose", bad, err)
		}
		if _, err := f.Originators.Set(ctx, scope, orig.Change{DefaultPurpose: &bad}, audit.Operator("ops")); !isInvalidParam(err, "default_purpose") {
			t.Errorf("default_purpose %q: %v, want invalid_request on default_purpose", bad, err)
		}
	}
	if n := count(t, f, "payments", scope); n != 1 {
		t.Errorf("%d payments after refusals, want 1", n)
	}

	goods := string(payment.PurposeGoods)
	if o, err := f.Originators.Set(ctx, scope, orig.Change{DefaultPurpose: &goods}, audit.Operator("ops")); err != nil || o.DefaultPurpose != payment.PurposeGoods {
		t.Fatalf("set default_purpose = %q, %v", o.DefaultPurpose, err)
	}
	debit, err := f.Payments.Create(ctx, scope, pay(src, payment.Debit))
	if err != nil || debit.Purpose != payment.PurposeGoods {
		t.Fatalf("debit after the default changed = %q, %v; want goods", debit.Purpose, err)
	}
	bill := string(payment.PurposeBill)
	sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"5.00"`),
		Interval: payment.Monthly, StartDate: "2026-11-02", Purpose: &bill})
	if err != nil || sub.Purpose != payment.PurposeBill {
		t.Fatalf("subscription for a bill = %q, %v", sub.Purpose, err)
	}
	if got, err := f.Payments.GetSubscription(ctx, scope, sub.ID); err != nil || got.Purpose != payment.PurposeBill {
		t.Errorf("stored subscription = %q, %v", got.Purpose, err)
	}
	due, err := f.Payments.Advance(ctx, scope, sub.ID)
	if err != nil || due.Purpose != payment.PurposeBill {
		t.Errorf("the subscription's debit = %q, %v; want bill", due.Purpose, err)
	}
	if stored, err := f.Payments.Get(ctx, scope, due.ID); err != nil || stored.Purpose != payment.PurposeBill {
		t.Errorf("the stored debit = %q, %v; want bill", stored.Purpose, err)
	}
	defaulted, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"6.00"`),
		Interval: payment.Weekly, StartDate: "2026-11-02"})
	if err != nil || defaulted.Purpose != payment.PurposeGoods {
		t.Errorf("subscription without a purpose = %q, %v; want goods", defaulted.Purpose, err)
	}
}

func isInvalidParam(err error, param string) bool {
	e, ok := errs.As(err)
	return ok && e.Code == errs.InvalidRequest && e.Param == param
}
