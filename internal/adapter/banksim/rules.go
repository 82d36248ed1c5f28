package banksim

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Accept is the answer of an entry the receiving bank posts: no file, the
// entry settles on its settlement date.
const Accept = "accept"

// Rule answers the entries to one account: those whose account number is
// Account, or ends in AccountSuffix.
type Rule struct {
	Account       string `json:"account,omitempty"`
	AccountSuffix string `json:"account_suffix,omitempty"`
	// Answer is a return code (R01…), a change code (C01, C02, C03, C04,
	// C05, C06, C07, C09, C13) or "accept".
	Answer string `json:"answer"`
	// AfterBankingDays counts from the settlement date to the day the
	// answer reaches the originator's bank (0: on the settlement date).
	AfterBankingDays int `json:"after_banking_days"`
	// Corrected is a notification of change's corrected data.
	Corrected Corrected `json:"corrected,omitzero"`
	// ConsumerAccount marks the account a consumer's: a corporate (CCD,
	// CTX) debit to it may come back R05.
	ConsumerAccount bool `json:"consumer_account,omitempty"`
	// Untimely makes the bank send its return past NACHA's deadline, for
	// the originator to dishonor (R68): AfterBankingDays after the
	// settlement date, but never before the first banking day past the
	// deadline (Late).
	Untimely bool `json:"untimely,omitempty"`
	// RepeatAfterBankingDays, when above 0, makes the bank send its return
	// a second time (another trace number) that many banking days after
	// the first, for the originator to dishonor as a duplicate (R67).
	RepeatAfterBankingDays int `json:"repeat_after_banking_days,omitempty"`
	// Contest is the contested dishonored return code (R71–R77) the bank
	// answers a dishonor of its return with, the banking day after the
	// dishonor settles; empty: the bank accepts the dishonor.
	Contest string `json:"contest,omitempty"`
}

// Corrected is the corrected data of a notification of change. Fields a
// change code needs and Corrected leaves empty are derived from the
// entry: AccountSuffix replaces the end of the account number, and an
// empty AccountType is the other of checking and savings.
type Corrected struct {
	RoutingNumber string `json:"routing_number,omitempty"`
	AccountNumber string `json:"account_number,omitempty"`
	AccountSuffix string `json:"account_suffix,omitempty"`
	AccountType   string `json:"account_type,omitempty"`  // checking or savings
	Name          string `json:"name,omitempty"`          // C04: the receiver's name, ≤ 22
	IndividualID  string `json:"individual_id,omitempty"` // C09: ≤ 15
}

// Rules are tried in order; the first that matches an entry answers it,
// and an entry no rule matches is accepted.
type Rules []Rule

// Sandbox is the built-in rule set, by the last four digits of the account
// number (the package doc lists it).
var Sandbox = Rules{
	{AccountSuffix: "0001", Answer: "R01", AfterBankingDays: 2},
	{AccountSuffix: "0002", Answer: "R02", AfterBankingDays: 2},
	{AccountSuffix: "0003", Answer: "R03", AfterBankingDays: 1},
	{AccountSuffix: "0004", Answer: "R04", AfterBankingDays: 1},
	{AccountSuffix: "0007", Answer: "R07", AfterBankingDays: 2},
	{AccountSuffix: "0010", Answer: "R10", AfterBankingDays: 2},
	{AccountSuffix: "0029", Answer: "R29", AfterBankingDays: 2},
	{AccountSuffix: "0017", Answer: "R17", AfterBankingDays: 2},
	{AccountSuffix: "1010", Answer: "R10", AfterBankingDays: 10},
	{AccountSuffix: "0005", Answer: "R05", AfterBankingDays: 2, ConsumerAccount: true},
	{AccountSuffix: "6801", Answer: "R01", AfterBankingDays: 4, Untimely: true},
	{AccountSuffix: "6810", Answer: "R10", Untimely: true},
	{AccountSuffix: "6701", Answer: "R01", AfterBankingDays: 1, RepeatAfterBankingDays: 1},
	{AccountSuffix: "7301", Answer: "R01", AfterBankingDays: 4, Untimely: true, Contest: "R73"},
	{AccountSuffix: "7501", Answer: "R01", AfterBankingDays: 1, RepeatAfterBankingDays: 1, Contest: "R75"},
	{AccountSuffix: "9101", Answer: "C01", AfterBankingDays: 2, Corrected: Corrected{AccountSuffix: "9100"}},
	{AccountSuffix: "9102", Answer: "C02", AfterBankingDays: 2, Corrected: Corrected{RoutingNumber: "021000021"}},
	{AccountSuffix: "9103", Answer: "C03", AfterBankingDays: 2, Corrected: Corrected{RoutingNumber: "021000021", AccountSuffix: "9100"}},
	{AccountSuffix: "9105", Answer: "C05", AfterBankingDays: 2},
	{AccountSuffix: "9104", Answer: "C04", AfterBankingDays: 2, Corrected: Corrected{Name: "CORRECTED HOLDER NAME"}},
	{AccountSuffix: "9109", Answer: "C09", AfterBankingDays: 2, Corrected: Corrected{IndividualID: "CORRECTEDID0009"}},
	{AccountSuffix: "9113", Answer: "C13", AfterBankingDays: 2},
}

// Return codes only a debit can come back with (funds, stops and
// authorization): a credit to such an account is accepted.
var debitOnly = []string{"R01", "R05", "R07", "R08", "R09", "R10", "R11", "R29", "R51"}

// consumerOnly are the unauthorized-debit codes of consumer entries
// (PPD, WEB, TEL).
var consumerOnly = []string{"R07", "R10", "R11", "R51"}

// extended are the returns that may come back up to 60 calendar days
// after the settlement date: consumerOnly, and R05 (a corporate debit to
// a consumer's account).
var extended = []string{"R05", "R07", "R10", "R11", "R51"}

// corporateOnly is the unauthorized-debit code of corporate accounts
// (CCD, CTX entries), due like any other return.
var corporateOnly = []string{"R29"}

// ExtendedWindow is how long after the settlement date an extended return
// (extended) may come back.
const ExtendedWindow = 60 * 24 * time.Hour

// StandardDays is how many banking days after the settlement date any
// other return, and a notification of change, may come back.
const StandardDays = 2

// changeCodes are the notifications of change the network sends, with
// what each corrects.
var changeCodes = map[string]struct{ routing, account, kind, name, id, addenda bool }{
	"C01": {account: true},
	"C02": {routing: true},
	"C03": {routing: true, account: true},
	"C04": {name: true},
	"C05": {kind: true},
	"C06": {account: true, kind: true},
	"C07": {routing: true, account: true, kind: true},
	"C09": {id: true},
	"C13": {addenda: true},
}

// LoadRules reads a rules file: {"rules": [ … ]}.
func LoadRules(path string) (Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Rules Rules `json:"rules"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	if err := f.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return f.Rules, nil
}

// Validate checks every rule: one way to match, a known answer, and a
// delay within NACHA's return window for it.
func (rs Rules) Validate() error {
	for i, r := range rs {
		if err := r.validate(); err != nil {
			return fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	return nil
}

func (r Rule) validate() error {
	switch {
	case (r.Account == "") == (r.AccountSuffix == ""):
		return fmt.Errorf("give exactly one of account and account_suffix")
	case !digits(r.Account + r.AccountSuffix):
		return fmt.Errorf("account and account_suffix are digits")
	case r.AfterBankingDays < 0:
		return fmt.Errorf("after_banking_days is 0 or more")
	}
	c := r.Corrected
	switch {
	case r.Contest != "" && (!isReturn(r.Answer) || !isContest(r.Contest)):
		return fmt.Errorf("contest is a contested dishonored return code, R71 to R77, on a return")
	case r.RepeatAfterBankingDays < 0 || r.RepeatAfterBankingDays > 0 && !isReturn(r.Answer):
		return fmt.Errorf("repeat_after_banking_days is 0 or more, on a return")
	case r.Untimely && !isReturn(r.Answer):
		return fmt.Errorf("untimely is for returns")
	case r.Answer == Accept:
		return nil
	case r.Untimely:
		return nil // late on purpose
	case isReturn(r.Answer):
		if slices.Contains(extended, r.Answer) {
			// Checked again at each entry against the 60 calendar days;
			// 40 banking days never pass them except across year-end holidays.
			if r.AfterBankingDays > 40 {
				return fmt.Errorf("%s comes back within 60 calendar days of settlement: after_banking_days is at most 40", r.Answer)
			}
			return nil
		}
		if r.AfterBankingDays > StandardDays {
			return fmt.Errorf("%s comes back within %d banking days of settlement", r.Answer, StandardDays)
		}
		return nil
	}
	what, ok := changeCodes[r.Answer]
	switch {
	case !ok:
		return fmt.Errorf("answer %q is not a return code, C01, C02, C03, C04, C05, C06, C07, C09, C13 or %q", r.Answer, Accept)
	case r.AfterBankingDays > StandardDays:
		return fmt.Errorf("a notification of change comes within %d banking days of settlement", StandardDays)
	case what.routing != (c.RoutingNumber != ""):
		return fmt.Errorf("%s needs corrected.routing_number, and only then", r.Answer)
	case c.RoutingNumber != "" && (len(c.RoutingNumber) != 9 || !digits(c.RoutingNumber)):
		return fmt.Errorf("corrected.routing_number is 9 digits")
	case what.account != (c.AccountNumber != "" || c.AccountSuffix != ""):
		return fmt.Errorf("%s needs corrected.account_number or corrected.account_suffix, and only then", r.Answer)
	case c.AccountNumber != "" && c.AccountSuffix != "":
		return fmt.Errorf("give one of corrected.account_number and corrected.account_suffix")
	case !digits(c.AccountNumber+c.AccountSuffix) || len(c.AccountNumber) > 17:
		return fmt.Errorf("corrected account digits: at most 17")
	case c.AccountType != "" && (!what.kind || (c.AccountType != "checking" && c.AccountType != "savings")):
		return fmt.Errorf("corrected.account_type is checking or savings, for C05, C06 and C07")
	case what.name != (strings.TrimSpace(c.Name) != "") || len(c.Name) > 22:
		return fmt.Errorf("%s needs corrected.name (at most 22 characters), and only then", r.Answer)
	case what.id != (strings.TrimSpace(c.IndividualID) != "") || len(c.IndividualID) > 15:
		return fmt.Errorf("%s needs corrected.individual_id (at most 15 characters), and only then", r.Answer)
	}
	return nil
}

// Match returns the rule for account, and false when none matches.
func (rs Rules) Match(account string) (Rule, bool) {
	for _, r := range rs {
		if r.Account != "" && r.Account == account || r.AccountSuffix != "" && strings.HasSuffix(account, r.AccountSuffix) {
			return r, true
		}
	}
	return Rule{}, false
}

// Applies reports whether a receiving bank would answer an entry of
// class sec (debit or credit) to an account (a consumer's or not) with
// code: funds and authorization returns are for debits, R07/R10/R11/R51
// for consumer entries, R29 for corporate ones, R05 for corporate entries
// to a consumer's account.
func Applies(code, sec string, debit, consumer bool) bool {
	corporate := sec == "CCD" || sec == "CTX"
	switch {
	case !debit && slices.Contains(debitOnly, code):
		return false
	case corporate && slices.Contains(consumerOnly, code):
		return false
	case code == "R05" && (!corporate || !consumer):
		return false
	case !corporate && slices.Contains(corporateOnly, code):
		return false
	}
	return true
}

// Due is the banking day an answer with code reaches the originator's
// bank, days banking days after the settlement date settled. An extended
// return never comes later than its 60 calendar days allow: it is moved
// to the last banking day within them.
func Due(code string, settled calendar.Date, days int) calendar.Date {
	due := calendar.AddBusinessDays(settled, days)
	if days == 0 {
		due = BankingDayOnOrAfter(settled)
	}
	if slices.Contains(extended, code) {
		for last := settled.Add(ExtendedWindow); due.After(last) || !calendar.IsBusinessDay(due); {
			due = due.AddDate(0, 0, -1)
		}
	}
	return due
}

// Late is the first banking day on which a return with code of an entry of
// SEC code sec settled on settled is past NACHA's deadline: the banking
// day after the one the originator's bank reads it on at the latest
// (ach.ReturnDeadline, the deadline the service judges returns by).
func Late(code, sec string, settled calendar.Date) calendar.Date {
	return calendar.AddBusinessDays(ach.ReturnDeadline(code, sec, settled), 1)
}

// BankingDayOnOrAfter is d when it is a banking day, else the next one.
func BankingDayOnOrAfter(d calendar.Date) calendar.Date {
	for !calendar.IsBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

func isReturn(code string) bool { return len(code) == 3 && code[0] == 'R' && digits(code[1:]) }

func isContest(code string) bool { return len(code) == 3 && code >= "R71" && code <= "R77" }

func isChange(code string) bool { _, ok := changeCodes[code]; return ok }

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
