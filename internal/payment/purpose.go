package payment

import (
	"cmp"
	"slices"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// A payment's purpose says what the money is for (purpose on payments and
// subscriptions; a subscription's debits have its purpose). It decides the
// company entry description NACHA fixes for two kinds of entry, which the
// receiver's statement shows and its bank reads: PURCHASE for an
// individual's online (WEB) debit for goods, PAYROLL for a payroll credit
// to an individual's account (PPD). Each of those descriptions is kept
// for its entry: no other entry may carry it, and such an entry carries no
// other. A request without a purpose has its originator's default_purpose
// (package originator).

// Purpose is what a payment is for.
type Purpose string

// Purposes.
const (
	PurposeGoods    Purpose = "goods"
	PurposeServices Purpose = "services"
	PurposeBill     Purpose = "bill"
	PurposeDonation Purpose = "donation"
	PurposePayroll  Purpose = "payroll"
	PurposeOther    Purpose = "other"
)

// Purposes are the valid purposes, in the order messages name them.
var Purposes = []Purpose{PurposeGoods, PurposeServices, PurposeBill, PurposeDonation, PurposePayroll, PurposeOther}

// ParsePurpose validates a purpose named by param ("purpose",
// "default_purpose"); "" when v is nil.
func ParsePurpose(param string, v *string) (Purpose, error) {
	if v == nil {
		return "", nil
	}
	if p := Purpose(*v); slices.Contains(Purposes, p) {
		return p, nil
	}
	return "", errs.Invalid(param, param+" must be goods, services, bill, donation, payroll or other")
}

// purposeOr is the purpose of a payment or subscription that named
// purpose (ParsePurpose: "" for none) under an originator whose
// default_purpose is byDefault: the one named, else the originator's
// default, else other (a scope without an originator).
func purposeOr(purpose Purpose, byDefault string) Purpose {
	return cmp.Or(purpose, Purpose(byDefault), PurposeOther)
}

// SEC codes an entry may go out under (the ach package's).
const (
	secWEB = "WEB"
	secCCD = "CCD"
	secPPD = "PPD"
)

// FixedDescription is the company entry description NACHA fixes for an
// entry of SEC code sec in direction d for purpose: PURCHASE for a WEB
// debit for goods (WEB debits are individuals'), PAYROLL for a PPD credit
// for payroll (PPD credits are to individuals' accounts); "" for every
// other entry, whose description the originator chooses.
func FixedDescription(sec string, d Direction, purpose Purpose) string {
	switch {
	case sec == secWEB && d == Debit && purpose == PurposeGoods:
		return EntryPurchase
	case sec == secPPD && d == Credit && purpose == PurposePayroll:
		return EntryPayroll
	}
	return ""
}

// BatchDescription is the company entry description of an entry of SEC
// code sec in direction d for purpose whose payment named entry ("" for
// none): the fixed one (FixedDescription), else the payment's, else
// PAYMENT.
func BatchDescription(sec string, d Direction, purpose Purpose, entry string) string {
	if fixed := FixedDescription(sec, d, purpose); fixed != "" {
		return fixed
	}
	if entry != "" {
		return entry
	}
	return EntryPayment
}
