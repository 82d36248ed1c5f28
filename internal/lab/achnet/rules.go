package achnet

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

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
	{AccountSuffix: "1010", Answer: "R10", AfterBankingDays: 10},
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

// consumerOnly are the unauthorized-debit codes of consumer accounts
// (PPD, WEB, TEL entries); extended, they may come back up to 60
// calendar days after the settlement date.
var consumerOnly = []string{"R05", "R07", "R10", "R11", "R51"}

// corporateOnly is the unauthorized-debit code of corporate accounts
// (CCD, CTX entries), due like any other return.
var corporateOnly = []string{"R29"}

// ExtendedWindow is how long after the settlement date an extended return
// (consumerOnly) may come back.
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
	case r.Answer == Accept:
		return nil
	case isReturn(r.Answer):
		if slices.Contains(consumerOnly, r.Answer) {
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
// class sec (debit or credit) with code: funds and authorization returns
// are for debits, R05/R07/R10/R11/R51 for consumer entries, R29 for
// corporate ones.
func Applies(code, sec string, debit bool) bool {
	corporate := sec == "CCD" || sec == "CTX"
	switch {
	case !debit && slices.Contains(debitOnly, code):
		return false
	case corporate && slices.Contains(consumerOnly, code):
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
	if slices.Contains(consumerOnly, code) {
		for last := settled.Add(ExtendedWindow); due.After(last) || !calendar.IsBusinessDay(due); {
			due = due.AddDate(0, 0, -1)
		}
	}
	return due
}

// BankingDayOnOrAfter is d when it is a banking day, else the next one.
func BankingDayOnOrAfter(d calendar.Date) calendar.Date {
	for !calendar.IsBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

func isReturn(code string) bool { return len(code) == 3 && code[0] == 'R' && digits(code[1:]) }

func isChange(code string) bool { _, ok := changeCodes[code]; return ok }

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
