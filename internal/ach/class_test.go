package ach

import "testing"

func TestClassifyFollowsTheSECRules(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Payer
		want Class
	}{
		{"consumer one-off debit", Payer{Debit: true}, Class{SecWEB, DescriptionPurchase, "S"}},
		{"consumer subscription debit", Payer{Debit: true, Subscription: true}, Class{SecWEB, DescriptionPurchase, "R"}},
		{"consumer re-presentment", Payer{Debit: true, Subscription: true, Retry: true}, Class{SecWEB, DescriptionRetry, "R"}},
		{"consumer credit", Payer{}, Class{SecPPD, DescriptionPayments, ""}},
		{"business debit", Payer{Business: true, Debit: true}, Class{SecCCD, DescriptionPayments, ""}},
		{"business re-presentment", Payer{Business: true, Debit: true, Subscription: true, Retry: true}, Class{SecCCD, DescriptionRetry, ""}},
		{"business credit", Payer{Business: true}, Class{SecCCD, DescriptionPayments, ""}},
		{"consumer micro-deposit", Payer{MicroDeposit: true}, Class{SecPPD, DescriptionMicroDeposits, ""}},
		{"business micro-deposit", Payer{MicroDeposit: true, Business: true}, Class{SecCCD, DescriptionMicroDeposits, ""}},
		// A debit goes out under its mandate's SEC code, whatever the
		// source's holder type says now.
		{"WEB mandate, company holder", Payer{Business: true, Debit: true, MandateSEC: SecWEB}, Class{SecWEB, DescriptionPurchase, "S"}},
		{"WEB mandate, company holder, subscription", Payer{Business: true, Debit: true, Subscription: true, MandateSEC: SecWEB}, Class{SecWEB, DescriptionPurchase, "R"}},
		{"CCD mandate, individual holder", Payer{Debit: true, MandateSEC: SecCCD}, Class{SecCCD, DescriptionPayments, ""}},
		{"WEB mandate, re-presentment", Payer{Business: true, Debit: true, Retry: true, MandateSEC: SecWEB}, Class{SecWEB, DescriptionRetry, "S"}},
		{"a credit takes no mandate's class", Payer{Business: true, MandateSEC: SecWEB}, Class{SecCCD, DescriptionPayments, ""}},
		{"nor a micro-deposit", Payer{MicroDeposit: true, MandateSEC: SecWEB}, Class{SecPPD, DescriptionMicroDeposits, ""}},
	} {
		if got := Classify(c.p); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
