package ach

import (
	"slices"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Return deadlines. A receiving bank must return an entry so that the
// return reaches the originating bank by the second banking day after the
// entry's settlement date; an individual's unauthorized-debit returns
// (extendedCodes on a WEB or PPD entry) may come within 60 calendar days
// after it. A return past its deadline is the receiving bank's error: the
// originating bank may refuse it (dishonor it, R68), and owes its
// originators that refusal, because an untimely return would take back
// money that has become final.
//
// The day a return arrived is the creation date of the file that carries
// it (the ACH operator's), not the day of the import: an import held up by
// an outage does not turn a timely return untimely, and a file imported
// again is judged the same way.

// StandardReturnDays is how many banking days after the settlement date a
// return may arrive.
const StandardReturnDays = 2

// ExtendedReturnDays is how many calendar days after the settlement date
// an extended return may arrive.
const ExtendedReturnDays = 60

// extendedCodes are the returns an individual may make within
// ExtendedReturnDays: unauthorized, revoked, not as authorized.
var extendedCodes = []string{"R05", "R07", "R10", "R11", "R29"}

// SettlementDate is the settlement date of the entries of a file created
// at created: its effective entry date.
func SettlementDate(created time.Time) calendar.Date {
	return effectiveDate(created)
}

// ReturnDeadline is the last day a return with code may arrive for an
// entry of SEC code sec settled on settled. R05 says by itself that the
// account is a consumer's (it is the return of a corporate entry to one),
// so it is extended whatever the entry's SEC code.
func ReturnDeadline(code, sec string, settled calendar.Date) calendar.Date {
	individual := sec == SecWEB || sec == SecPPD || sec == ""
	if code == "R05" || individual && slices.Contains(extendedCodes, code) {
		return settled.AddDate(0, 0, ExtendedReturnDays)
	}
	return calendar.AddBusinessDays(settled, StandardReturnDays)
}

// Timely reports whether a return with code that arrived on arrived is
// within the deadline of an entry of SEC code sec settled on settled.
func Timely(code, sec string, settled, arrived calendar.Date) bool {
	return !arrived.After(ReturnDeadline(code, sec, settled))
}
