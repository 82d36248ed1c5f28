// Package achcode names the ACH return codes (NACHA) the service meets:
// what each means, which may be re-presented, and what a code looks like.
package achcode

import "slices"

// ACH return codes the service names (NACHA). Unknown codes are kept as
// they came, with a generic reason.
var returnReasons = map[string]string{
	"R01": "Insufficient funds",
	"R02": "Account closed",
	"R03": "No account or unable to locate account",
	"R04": "Invalid account number structure",
	"R05": "Unauthorized debit to consumer account",
	"R07": "Authorization revoked by customer",
	"R08": "Payment stopped",
	"R09": "Uncollected funds",
	"R10": "Customer advises originator is not known or not authorized",
	"R11": "Customer advises entry not in accordance with the terms of the authorization",
	"R16": "Account frozen",
	"R17": "Entry returned under questionable circumstances",
	"R20": "Non-transaction account",
	"R29": "Corporate customer advises not authorized",
}

// returnTitles are the codes' names short enough for a form's choice on
// a phone; the reasons above stay the answer's words.
var returnTitles = map[string]string{
	"R01": "Insufficient funds",
	"R02": "Account closed",
	"R03": "No account",
	"R04": "Invalid account number",
	"R05": "Unauthorized (consumer)",
	"R07": "Authorization revoked",
	"R08": "Payment stopped",
	"R09": "Uncollected funds",
	"R10": "Not authorized",
	"R11": "Not as authorized",
	"R16": "Account frozen",
	"R17": "Questionable",
	"R20": "Non-transaction account",
	"R29": "Corporate: not authorized",
}

// Re-presentment (NACHA): a debit returned for insufficient or uncollected
// funds may be presented again at most twice; every other return is final.
const MaxAttempts = 3 // the first presentment and two re-presentments

// RetriableCodes are the returns after which a debit may be re-presented:
// insufficient and uncollected funds.
var RetriableCodes = []string{"R01", "R09"}

// Retriable reports whether a debit returned with code may be re-presented.
func Retriable(code string) bool { return slices.Contains(RetriableCodes, code) }

// Valid reports whether code looks like an ACH return code: R and
// two digits.
func Valid(code string) bool {
	return len(code) == 3 && code[0] == 'R' && code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9'
}

// Reason is the meaning of an ACH return code.
func Reason(code string) string {
	if r, ok := returnReasons[code]; ok {
		return r
	}
	return "Returned by the receiving bank"
}

// Title is the short name of a code the service names (Reason otherwise).
func Title(code string) string {
	if t, ok := returnTitles[code]; ok {
		return t
	}
	return Reason(code)
}

// Known returns the codes the service names, in order.
func Known() []string {
	codes := make([]string, 0, len(returnReasons))
	for c := range returnReasons {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}
