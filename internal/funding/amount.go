package funding

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fundsource/fundsource/internal/errs"
)

// Micro-deposit amounts are whole cents from MinDeposit to MaxDeposit.
const (
	MinDeposit = 1
	MaxDeposit = 99
)

// ParseAmounts reads exactly two micro-deposit amounts, each a JSON number
// (0.12) or decimal string ("0.12") of 0.01 to 0.99 with at most two
// decimals, into cents. Parsing is exact: no floating point.
func ParseAmounts(raw []json.RawMessage) ([2]int, error) {
	var out [2]int
	if len(raw) != 2 {
		return out, invalidAmounts("amounts must be an array of exactly two amounts, like [0.12, 0.34]")
	}
	for i, r := range raw {
		text := strings.TrimSpace(string(r))
		if strings.HasPrefix(text, `"`) {
			if err := json.Unmarshal(r, &text); err != nil {
				return out, invalidAmounts("amounts must be numbers or decimal strings")
			}
		}
		c, ok := ParseCents(text)
		if !ok || c < MinDeposit || c > MaxDeposit {
			return out, invalidAmounts("each amount must be from 0.01 to 0.99 with at most two decimals, like 0.12")
		}
		out[i] = c
	}
	return out, nil
}

// ParseCents parses a non-negative decimal amount with at most two decimals
// ("0.12", ".5", "3", "1.00") into cents. It refuses signs, exponents,
// spaces and more than two decimals.
func ParseCents(s string) (int, bool) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if (whole == "" && (!hasDot || frac == "")) || len(frac) > 2 || (hasDot && frac == "") {
		return 0, false
	}
	if len(whole) > 9 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	w := 0
	if whole != "" {
		w, _ = strconv.Atoi(whole)
	}
	f := 0
	if frac != "" {
		f, _ = strconv.Atoi(frac)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return w*100 + f, true
}

func invalidAmounts(msg string) error {
	return &errs.Error{Code: errs.InvalidAmounts, Param: "amounts", Message: msg}
}

// ParseStatementAmount reads one micro-deposit amount as a person types it
// from a bank statement: "0.12", ".12", "$0.12" or "0,12" are 12 cents, and
// a bare whole number is cents ("12" and "012" are 12 cents), since every
// deposit is under a dollar. Surrounding spaces are ignored. param names the
// form field in the error.
func ParseStatementAmount(param, s string) (int, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "$"))
	if !strings.Contains(s, ".") && strings.Count(s, ",") == 1 {
		s = strings.Replace(s, ",", ".", 1)
	}
	c, ok := ParseCents(s)
	if ok && !strings.Contains(s, ".") {
		c /= 100 // a bare number is cents
	}
	switch {
	case s == "":
		return 0, &errs.Error{Code: errs.InvalidAmounts, Param: param, Message: "Enter the amount of this deposit."}
	case !ok:
		return 0, &errs.Error{Code: errs.InvalidAmounts, Param: param,
			Message: "Enter the amount in dollars and cents, like 0.12, or just the cents, like 12."}
	case c < MinDeposit || c > MaxDeposit:
		return 0, &errs.Error{Code: errs.InvalidAmounts, Param: param,
			Message: "Each deposit is between 0.01 and 0.99; enter it as it appears on your statement, like 0.12."}
	}
	return c, nil
}
