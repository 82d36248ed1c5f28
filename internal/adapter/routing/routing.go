// Package routing checks ABA routing numbers and names their banks: the
// check digit, an embedded sample directory of well-known banks and the
// sandbox test numbers, and a loader for the Federal Reserve's FedACH
// directory file. With a full directory loaded, unknown numbers are refused.
package routing

import (
	"strings"

	"github.com/fundsource/fundsource/internal/core/aba"
	"github.com/fundsource/fundsource/internal/core/errs"
)

// Sandbox test routing numbers: valid check digits, accepted everywhere, and
// named in the sandbox guide.
const (
	SandboxRouting1 = "110000000"
	SandboxRouting2 = "222222226"
	SandboxRouting3 = "333333334"
)

// ValidChecksum reports whether rn is 9 ASCII digits with a correct ABA check
// digit (the rule is internal/core/aba's).
func ValidChecksum(rn string) bool { return aba.ValidChecksum(rn) }

// Directory maps routing numbers to bank names.
type Directory struct {
	names map[string]string
	full  bool // a complete directory: unknown numbers are refused
}

// embedded is a sample of real routing numbers of well-known US banks, plus
// the sandbox test numbers.
var embedded = map[string]string{
	"021000021":     "JPMorgan Chase Bank",
	"044000037":     "JPMorgan Chase Bank",
	"322271627":     "JPMorgan Chase Bank",
	"026009593":     "Bank of America",
	"111000025":     "Bank of America",
	"121000248":     "Wells Fargo Bank",
	"121042882":     "Wells Fargo Bank",
	"091000019":     "Wells Fargo Bank",
	"021000089":     "Citibank",
	"031176110":     "Capital One",
	"124003116":     "Ally Bank",
	"256074974":     "Navy Federal Credit Union",
	SandboxRouting1: "fundsource Sandbox Bank",
	SandboxRouting2: "fundsource Sandbox Credit Union",
	SandboxRouting3: "fundsource Sandbox Savings",
	// The provider simulator's sandbox institutions (Plaid's sandbox names).
	"011401533": "First Platypus Bank",
	"011401546": "First Gingham Credit Union",
	"011401559": "Tattersall Federal Credit Union",
	"011401562": "Tartan Bank",
	"011401575": "Houndstooth Bank",
}

// Embedded returns the built-in sample directory (not full).
func Embedded() *Directory {
	names := make(map[string]string, len(embedded))
	for k, v := range embedded {
		names[k] = v
	}
	return &Directory{names: names}
}

// Full reports whether the directory is complete (loaded from FedACH).
func (d *Directory) Full() bool { return d.full }

// Len is the number of routing numbers known.
func (d *Directory) Len() int { return len(d.names) }

// Check validates rn and returns the bank's name ("" when unknown to a
// sample directory). Errors are invalid_routing_number on routing_number.
func (d *Directory) Check(rn string) (string, error) {
	if !ValidChecksum(rn) {
		switch {
		case len(rn) != 9 || strings.Trim(rn, "0123456789") != "":
			return "", invalid("routing_number must be exactly 9 digits")
		case rn == "000000000":
			return "", invalid("routing_number 000000000 names no bank")
		}
		return "", invalid("routing_number has an invalid check digit; check it for typos")
	}
	name, ok := d.names[rn]
	if !ok && d.full {
		return "", invalid("routing_number is not in the Federal Reserve's directory of ACH participants")
	}
	return name, nil
}

// SandboxOnly reports whether rn is one of the sandbox's test routing
// numbers: no bank has them, so production refuses them.
func (d *Directory) SandboxOnly(rn string) bool {
	return rn == SandboxRouting1 || rn == SandboxRouting2 || rn == SandboxRouting3
}

func invalid(msg string) error {
	return &errs.Error{Code: errs.InvalidRoutingNumber, Message: msg, Param: "routing_number"}
}
