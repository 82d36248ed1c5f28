package ach

import (
	"testing"
	"time"
)

// TestMatchEntryHoldsAnAnswerToEveryFact: an answer matches the one
// candidate whose trace number, amount (returns only), company
// identification, account (as sent, or the source's now) and horizon all
// agree; none is unmatched, two are ambiguous.
func TestMatchEntryHoldsAnAnswerToEveryFact(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	sentFP, nowFP, otherFP := []byte("sent"), []byte("corrected"), []byte("other")
	entry := func(effective string) Candidate {
		return Candidate{Entry: Entry{Trace: "121042880000001", FileDate: effective, EffectiveDate: effective},
			Cents: 4000, AccountFPs: [][]byte{sentFP, nowFP}, CompanyID: "1234567890"}
	}
	ret := Answer{Kind: AnswerReturn, OriginalTrace: "121042880000001", Code: "R10", Cents: 4000, AccountFP: sentFP,
		CompanyID: "1234567890", Arrived: day("2026-11-10")}
	with := func(f func(*Answer)) Answer { a := ret; f(&a); return a }
	legacy := entry("2026-11-03")
	legacy.AccountFPs = [][]byte{nil, nowFP} // assigned before entries kept their account

	for _, c := range []struct {
		name   string
		a      Answer
		cands  []Candidate
		want   int
		reason string
	}{
		{"every fact agrees", ret, []Candidate{entry("2026-11-03")}, 0, ""},
		{"the account as corrected since", with(func(a *Answer) { a.AccountFP = nowFP }), []Candidate{entry("2026-11-03")}, 0, ""},
		{"an entry of an earlier release, the source's account", with(func(a *Answer) { a.AccountFP = nowFP }), []Candidate{legacy}, 0, ""},
		{"an earlier release's entry and an account it never had", ret, []Candidate{legacy}, -1, ReasonUnmatched},
		{"another amount", with(func(a *Answer) { a.Cents = 4001 }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"a notification of change carries no amount", with(func(a *Answer) { a.Kind, a.Cents = AnswerChange, 0 }), []Candidate{entry("2026-11-03")}, 0, ""},
		{"another company", with(func(a *Answer) { a.CompanyID = "9876543210" }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"the company padded as the batch writes it", with(func(a *Answer) { a.CompanyID = "1234567890 " }), []Candidate{entry("2026-11-03")}, 0, ""},
		{"another account", with(func(a *Answer) { a.AccountFP = otherFP }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"another trace", with(func(a *Answer) { a.OriginalTrace = "121042880000002" }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"the last day of the horizon", with(func(a *Answer) { a.Arrived = day("2026-11-03").Add(AnswerHorizon) }), []Candidate{entry("2026-11-03")}, 0, ""},
		{"the day after the horizon", with(func(a *Answer) { a.Arrived = day("2026-11-03").Add(AnswerHorizon).AddDate(0, 0, 1) }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"an answer dated before its entry", with(func(a *Answer) { a.Arrived = day("2026-11-01") }), []Candidate{entry("2026-11-03")}, -1, ReasonUnmatched},
		{"the older of two entries, the newer's horizon not yet open", with(func(a *Answer) { a.Arrived = day("2026-11-04") }),
			[]Candidate{entry("2026-11-20"), entry("2026-11-03")}, 1, ""},
		{"two entries alike", ret, []Candidate{entry("2026-11-04"), entry("2026-11-03")}, -1, ReasonAmbiguous},
		{"no entry", ret, nil, -1, ReasonUnmatched},
	} {
		got, reason := MatchEntry(c.a, c.cands)
		if got != c.want || reason != c.reason {
			t.Errorf("%s: MatchEntry = %d %q, want %d %q", c.name, got, reason, c.want, c.reason)
		}
	}
}
