package funding

import (
	"encoding/json"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/money"
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
		c, ok := money.ParseJSON(r)
		if !ok || c < MinDeposit || c > MaxDeposit {
			return out, invalidAmounts("each amount must be from 0.01 to 0.99 with at most two decimals, like 0.12")
		}
		out[i] = int(c)
	}
	return out, nil
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
	c, ok := money.ParseCents(s)
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
	return int(c), nil
}
