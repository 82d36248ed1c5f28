package ach

import (
	"testing"

	"github.com/fundsource/fundsource/internal/payment"
)

// TestClassifyFollowsTheSECRules: the class of an entry as a function of
// its facts: who holds the account, the mandate's SEC code, debit or
// credit, the purpose and the payment's own entry description.
func TestClassifyFollowsTheSECRules(t *testing.T) {
	const (
		goods    = payment.PurposeGoods
		services = payment.PurposeServices
		payroll  = payment.PurposePayroll
		bill     = payment.PurposeBill
		donation = payment.PurposeDonation
		other    = payment.PurposeOther
	)
	for _, c := range []struct {
		name string
		p    Payer
		want Class
	}{
		// An individual's WEB debit: PURCHASE for goods, and only for goods.
		{"consumer debit for goods", Payer{Debit: true, Purpose: goods}, Class{SecWEB, DescriptionPurchase, "S"}},
		{"consumer subscription debit for goods", Payer{Debit: true, Subscription: true, Purpose: goods}, Class{SecWEB, DescriptionPurchase, "R"}},
		{"consumer debit for services", Payer{Debit: true, Purpose: services}, Class{SecWEB, DescriptionPayments, "S"}},
		{"consumer debit for a bill, described", Payer{Debit: true, Purpose: bill, EntryDescription: "RENT"}, Class{SecWEB, "RENT", "S"}},
		{"consumer subscription debit for a donation", Payer{Debit: true, Subscription: true, Purpose: donation}, Class{SecWEB, DescriptionPayments, "R"}},
		{"consumer debit for payroll", Payer{Debit: true, Purpose: payroll}, Class{SecWEB, DescriptionPayments, "S"}},
		{"consumer re-presentment for goods", Payer{Debit: true, Subscription: true, Retry: true, Purpose: goods}, Class{SecWEB, DescriptionRetry, "R"}},
		// A credit to an individual: PAYROLL for payroll, and only for payroll.
		{"consumer credit for payroll", Payer{Purpose: payroll}, Class{SecPPD, DescriptionPayroll, ""}},
		{"consumer credit for goods", Payer{Purpose: goods}, Class{SecPPD, DescriptionPayments, ""}},
		{"consumer credit, described", Payer{Purpose: other, EntryDescription: "REFUND"}, Class{SecPPD, "REFUND", ""}},
		// A company's entries are CCD: neither fixed description applies.
		{"business debit for goods", Payer{Business: true, Debit: true, Purpose: goods}, Class{SecCCD, DescriptionPayments, ""}},
		{"business debit, described", Payer{Business: true, Debit: true, Purpose: goods, EntryDescription: "SUPPLIES"}, Class{SecCCD, "SUPPLIES", ""}},
		{"business credit for payroll", Payer{Business: true, Purpose: payroll}, Class{SecCCD, DescriptionPayments, ""}},
		{"business re-presentment", Payer{Business: true, Debit: true, Subscription: true, Retry: true, Purpose: goods}, Class{SecCCD, DescriptionRetry, ""}},
		{"consumer micro-deposit", Payer{MicroDeposit: true}, Class{SecPPD, DescriptionMicroDeposits, ""}},
		{"business micro-deposit", Payer{MicroDeposit: true, Business: true}, Class{SecCCD, DescriptionMicroDeposits, ""}},
		// A debit goes out under its mandate's SEC code, whatever the
		// source's holder type says now.
		{"WEB mandate, company holder, goods", Payer{Business: true, Debit: true, MandateSEC: SecWEB, Purpose: goods}, Class{SecWEB, DescriptionPurchase, "S"}},
		{"WEB mandate, company holder, subscription", Payer{Business: true, Debit: true, Subscription: true, MandateSEC: SecWEB, Purpose: goods}, Class{SecWEB, DescriptionPurchase, "R"}},
		{"CCD mandate, individual holder, goods", Payer{Debit: true, MandateSEC: SecCCD, Purpose: goods}, Class{SecCCD, DescriptionPayments, ""}},
		{"WEB mandate, re-presentment", Payer{Business: true, Debit: true, Retry: true, MandateSEC: SecWEB, Purpose: goods}, Class{SecWEB, DescriptionRetry, "S"}},
		{"a credit takes no mandate's class", Payer{Business: true, MandateSEC: SecWEB, Purpose: goods}, Class{SecCCD, DescriptionPayments, ""}},
		{"nor a micro-deposit", Payer{MicroDeposit: true, MandateSEC: SecWEB}, Class{SecPPD, DescriptionMicroDeposits, ""}},
	} {
		if got := Classify(c.p); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
