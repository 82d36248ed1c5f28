package ach

import (
	"slices"
	"strconv"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Return deadlines. A receiving bank must return an entry so that the
// return is available to the originating bank by the opening of business
// on the second banking day after the entry's settlement date; an
// individual's unauthorized-debit returns (extendedCodes on an entry of a
// consumer SEC code) by the opening of business on the banking day after
// the 60th calendar day after it. R29 (a company's unauthorized return)
// keeps the two banking days. A return past its deadline is the receiving
// bank's error: the originating bank may refuse it (dishonor it, R68), and
// owes its originators that refusal, because an untimely return would take
// back money that has become final.
//
// "By the opening of business on day D" means that a return file the ACH
// operator dated D is still in time: it is what the originating bank finds
// when it opens that day.
//
// The day a return arrived is the creation date of the file that carries
// it (the ACH operator's), not the day of the import: an import held up by
// an outage does not turn a timely return untimely, and a file imported
// again is judged the same way.

// StandardReturnDays is how many banking days after the settlement date a
// return may arrive.
const StandardReturnDays = 2

// ExtendedReturnDays is how many calendar days after the settlement date
// an extended return counts from: it may arrive until the banking day
// after the last of them.
const ExtendedReturnDays = 60

// extendedCodes are the returns an individual may make within
// ExtendedReturnDays: unauthorized (R05, R10, R51), revoked (R07), not as
// authorized (R11), stop payment on a source document or improper source
// document (R37, R53).
var extendedCodes = []string{"R05", "R07", "R10", "R11", "R37", "R51", "R53"}

// consumerSEC are the SEC codes of entries to an individual's account.
var consumerSEC = []string{SecPPD, SecWEB, "TEL", "ARC", "BOC", "POP", "RCK"}

// SettlementDate is the settlement date of the entries of a file created
// at created: its effective entry date.
func SettlementDate(created time.Time) calendar.Date {
	return effectiveDate(created)
}

// ReturnDeadline is the last day a return with code may arrive for an
// entry of SEC code sec settled on settled: for an extended return the
// banking day after the 60th calendar day (when the 60th is itself a
// weekend day or holiday, the next banking day), for any other the second
// banking day. R05 says by itself that the account is a consumer's (it is
// the return of a corporate entry to one), so it is extended whatever the
// entry's SEC code.
func ReturnDeadline(code, sec string, settled calendar.Date) calendar.Date {
	individual := slices.Contains(consumerSEC, sec)
	if code == "R05" || individual && slices.Contains(extendedCodes, code) {
		return calendar.AddBusinessDays(settled.AddDate(0, 0, ExtendedReturnDays), 1)
	}
	return calendar.AddBusinessDays(settled, StandardReturnDays)
}

// Timely reports whether a return with code that arrived on arrived is
// within the deadline of an entry of SEC code sec settled on settled.
func Timely(code, sec string, settled, arrived calendar.Date) bool {
	return !arrived.After(ReturnDeadline(code, sec, settled))
}

// DishonorDays is how many banking days after a return's settlement date
// the originating bank may dishonor it. A dishonor that cannot leave by
// then is not sent: the return stands, kept as late for dishonor for an
// operator to see.
const DishonorDays = 5

// DishonorDeadline is the last day a dishonor of a return that settled
// on returnSettled may go out: the fifth banking day after it.
func DishonorDeadline(returnSettled calendar.Date) calendar.Date {
	return calendar.AddBusinessDays(returnSettled, DishonorDays)
}

// DishonorInTime reports whether a dishonor of a return that settled on
// returnSettled still goes out when it is sent on day.
func DishonorInTime(returnSettled, day calendar.Date) bool {
	return !day.After(DishonorDeadline(returnSettled))
}

// ReturnSettledOn is the date of a return's settlement day, written as a
// Julian day (three digits, julian) in its batch header, near the day its
// file arrived: of the year before, the same or the next, whichever lies
// closest (a return that settles on December 31 may be read in January).
func ReturnSettledOn(julian string, arrived calendar.Date) calendar.Date {
	n, err := strconv.Atoi(julian)
	if err != nil || len(julian) != 3 || n < 1 || n > 366 {
		return arrived
	}
	var best calendar.Date
	for _, y := range []int{arrived.Year() - 1, arrived.Year(), arrived.Year() + 1} {
		d := time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n-1)
		if d.Year() != y {
			continue // day 366 of a year of 365
		}
		if best.IsZero() || distance(d, arrived) < distance(best, arrived) {
			best = d
		}
	}
	return best
}

func distance(a, b time.Time) time.Duration {
	if a.After(b) {
		return a.Sub(b)
	}
	return b.Sub(a)
}
