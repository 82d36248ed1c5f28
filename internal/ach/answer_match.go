package ach

import (
	"bytes"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Matching an answer to the entry it answers. A return or notification of
// change names its entry by the original trace number, but a trace number
// alone is not enough: numbers wrap, older releases restarted them each
// file date, and a bank's file can carry an answer for an entry another
// originator sent. So an answer is held to everything it carries about the
// entry: the trace number, the amount (returns; a notification of change
// carries none), the receiver's account (as it was sent, or as the
// source's account reads now, corrected by an applied notification of
// change), the batch's company identification, and an entry whose
// answers can still come (AnswerHorizon). Exactly one candidate is the
// entry; none or several make an unmatched answer that an operator
// resolves (answer_unmatched.go). Nothing is ever applied to a best guess.

// Answer kinds.
const (
	AnswerReturn = "return" // an Addenda99 return
	AnswerChange = "change" // an Addenda98 notification of change
)

// Reasons an answer is kept unmatched.
const (
	ReasonUnmatched = "unmatched" // no entry carries all it says
	ReasonAmbiguous = "ambiguous" // more than one does
)

// AnswerHorizon is how long after its effective date an entry can still
// be answered: the longest return deadline (an unauthorized return, 60
// calendar days after settlement) with room for an untimely return to
// still be found, and dishonored, rather than lost.
const AnswerHorizon = 120 * 24 * time.Hour

// Answer is what a return or notification of change says about the entry
// it answers.
type Answer struct {
	Kind          string // AnswerReturn or AnswerChange
	OriginalTrace string // the answered entry's trace number
	Trace         string // the answer's own trace number
	Code          string // the return reason or change code
	// Cents is the amount of the returned entry; a notification of change
	// carries none (zero) and its amount is not compared.
	Cents int64
	// AccountFP is the fingerprint of the account number the answer names
	// (funding.Service.AccountFingerprint); AccountLast4 its last four.
	AccountFP    []byte
	AccountLast4 string
	CompanyID    string        // the answer's batch's company identification
	Arrived      calendar.Date // the answer's file date
}

// Candidate is an entry with the trace number an answer names, with the
// facts the answer is held to.
type Candidate struct {
	Entry Entry
	// Cents is the entry's amount: a payment's, or a micro-deposit's
	// opened from its verification.
	Cents int64
	// AccountFPs are the fingerprints of the accounts the answer may name:
	// the one the entry was sent to and the source's account now.
	AccountFPs [][]byte
	// CompanyID is the company identification the entry's batch carried.
	CompanyID string
}

// MatchEntry picks the one candidate answer a answers: its index, or -1 with
// ReasonUnmatched or ReasonAmbiguous.
func MatchEntry(a Answer, cands []Candidate) (int, string) {
	found := -1
	for i, c := range cands {
		if !answers(a, c) {
			continue
		}
		if found >= 0 {
			return -1, ReasonAmbiguous
		}
		found = i
	}
	if found < 0 {
		return -1, ReasonUnmatched
	}
	return found, ""
}

// answers reports whether a names candidate c on every fact it carries.
func answers(a Answer, c Candidate) bool {
	if c.Entry.Trace != a.OriginalTrace {
		return false
	}
	if a.Kind == AnswerReturn && a.Cents != c.Cents {
		return false
	}
	if strings.TrimSpace(a.CompanyID) != strings.TrimSpace(c.CompanyID) {
		return false
	}
	if !open(c.Entry, a.Arrived) {
		return false
	}
	for _, fp := range c.AccountFPs {
		if len(fp) > 0 && bytes.Equal(fp, a.AccountFP) {
			return true
		}
	}
	return false
}

// open reports whether e can still be answered on arrived: its horizon
// counts from its effective date, or its file date for an entry written
// without one.
func open(e Entry, arrived calendar.Date) bool {
	from := e.EffectiveDate
	if from == "" {
		from = e.FileDate
	}
	d, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return true // an entry of the first releases: no date to hold it to
	}
	return !arrived.Before(d.AddDate(0, 0, -1)) && !arrived.After(d.Add(AnswerHorizon))
}
