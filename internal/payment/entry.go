package payment

import (
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// A payment may name the company entry description of its batch, which
// the receiver's bank statement shows ("PAYROLL", "RENT"). NACHA fixes it
// for some entries and the service writes those itself: PURCHASE for an
// individual's WEB debit, RETRY PYMT for a re-presentment, REVERSAL for a
// reversal and ACCTVERIFY for micro-deposits; PAYROLL is for a credit to
// an individual's account (PPD). Anywhere else the choice is the
// originator's: any credit and a company's (CCD) debit. Whether the
// account is an individual's is the source's account_holder_type, which
// the statement that writes the payment reads: it writes nothing when the
// description does not fit the source, and the service then says why.

// Company entry descriptions with a rule of their own.
const (
	EntryPayroll = "PAYROLL"
	// MaxEntryDescription is the width of the batch header's field.
	MaxEntryDescription = 10
)

// reservedEntryDescriptions are written by the service alone.
var reservedEntryDescriptions = []string{"PURCHASE", "RETRY PYMT", "REVERSAL", "ACCTVERIFY"}

// entryDescription validates an optional entry_description for a payment
// in direction d, before its source is read: nil when none was given.
func entryDescription(v *string, d Direction) (*string, error) {
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
	if ed == EntryPayroll && d == Debit {
		return nil, errs.Invalid("entry_description", "PAYROLL describes credits to an individual's account only.")
	}
	return &ed, nil
}

// entryDescriptionRefusal is why a payment's entry description does not
// fit its source (nil when it fits): PAYROLL is for individuals' accounts,
// and a debit from an individual's account is a WEB debit, described
// PURCHASE.
func entryDescriptionRefusal(ed *string, d Direction, src SourceInfo) error {
	switch {
	case ed == nil:
		return nil
	case *ed == EntryPayroll && src.Business:
		return errs.Invalid("entry_description", `PAYROLL describes credits to an individual's account; this funding source's account_holder_type is "company".`)
	case d == Debit && !src.Business:
		return errs.Invalid("entry_description", `A debit from an individual's account is described PURCHASE; entry_description is for credits and for debits from a "company" account.`)
	}
	return nil
}
