package payment

import (
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// A payment may name the company entry description of its batch, which
// the receiver's bank statement shows ("RENT", "INVOICE"). NACHA fixes it
// for some entries and the service writes those itself: RETRY PYMT for a
// re-presentment, REVERSAL for a reversal, ACCTVERIFY for micro-deposits,
// and by purpose PURCHASE and PAYROLL (purpose.go). Anywhere else the
// choice is the originator's. Which entry a payment makes is its SEC code:
// a debit's is its mandate's (WEB for an individual, CCD for a company), a
// credit's the source's account_holder_type (PPD, CCD), which the
// statement that writes the payment reads: the service gives it the SEC
// codes under which the description fits (descriptionFits), it writes
// nothing under another, and the service then says why.

// Company entry descriptions with a rule of their own.
const (
	EntryPurchase = "PURCHASE"
	EntryPayroll  = "PAYROLL"
	EntryPayment  = "PAYMENT" // every entry without a description of its own
	// MaxEntryDescription is the width of the batch header's field.
	MaxEntryDescription = 10
)

// reservedEntryDescriptions are written by the service alone.
var reservedEntryDescriptions = []string{"RETRY PYMT", "REVERSAL", "ACCTVERIFY"}

// entryDescription validates the form of an optional entry_description,
// before its source is read: nil when none was given.
func entryDescription(v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	ed := *v
	if ed == "" || len(ed) > MaxEntryDescription || strings.Trim(ed, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ") != "" || strings.TrimSpace(ed) == "" {
		return nil, errs.Invalid("entry_description", "entry_description must be 1 to 10 characters: capital letters A-Z, digits and spaces.")
	}
	if slices.Contains(reservedEntryDescriptions, ed) {
		return nil, errs.Invalid("entry_description", ed+" is written by the service itself; leave entry_description out.")
	}
	return &ed, nil
}

// entryDescriptionRefusal is why entry description ed does not fit an
// entry of SEC code sec in direction d for purpose (nil when it fits, or
// when there is none): PURCHASE and PAYROLL fit only the entries they are
// fixed for, and those entries take no other.
func entryDescriptionRefusal(ed *string, d Direction, purpose Purpose, sec string) error {
	if ed == nil {
		return nil
	}
	fixed := FixedDescription(sec, d, purpose)
	switch {
	case *ed == fixed:
		return nil
	case *ed == EntryPurchase:
		return errs.Invalid("entry_description", `PURCHASE describes an individual's debit (WEB) for purpose "goods" only.`)
	case *ed == EntryPayroll:
		return errs.Invalid("entry_description", `PAYROLL describes a credit to an individual's account (PPD) for purpose "payroll" only.`)
	case fixed == EntryPurchase:
		return errs.Invalid("entry_description", `A debit from an individual's account for purpose "goods" is described PURCHASE; leave entry_description out, or give the purpose the debit is for.`)
	case fixed == EntryPayroll:
		return errs.Invalid("entry_description", `A payroll credit to an individual's account is described PAYROLL; leave entry_description out.`)
	}
	return nil
}

// descriptionFits are the SEC codes under which entry description ed
// fits a payment in direction d for purpose; nil when there is no ed.
// They are derived from entryDescriptionRefusal, the rule's one home: the
// creating statements only look their entry's SEC code up in them.
func descriptionFits(ed *string, d Direction, purpose Purpose) []string {
	if ed == nil {
		return nil
	}
	fits := []string{}
	for _, sec := range []string{secWEB, secCCD, secPPD} {
		if entryDescriptionRefusal(ed, d, purpose, sec) == nil {
			fits = append(fits, sec)
		}
	}
	return fits
}

// EntrySEC is the SEC code of a new entry in direction d to or from an
// account whose holder is a company (business) or an individual, which a
// new mandate takes and a credit's entry description is judged by: CCD
// for a company's, WEB for an individual's debit (the authorizations this
// service takes are online), PPD for a credit to an individual. The
// creating statements take it as parameters rather than writing it again.
func EntrySEC(d Direction, business bool) string {
	switch {
	case business:
		return secCCD
	case d == Debit:
		return secWEB
	}
	return secPPD
}
