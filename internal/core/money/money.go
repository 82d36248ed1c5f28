// Package money parses and prints US dollar amounts in whole cents, exactly:
// no floating point anywhere.
package money

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// ParseCents parses a non-negative decimal amount that is a whole number of
// cents ("0.12", ".5", "3", "1.00", "0.550") into cents. It refuses signs,
// exponents, spaces, a third decimal that is not zero ("0.123") and more
// than nine whole digits.
func ParseCents(s string) (int64, bool) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if len(frac) > 2 && strings.Trim(frac[2:], "0") == "" && len(frac) <= 20 {
		frac = frac[:2] // trailing zeros: still exact cents
	}
	if (whole == "" && (!hasDot || frac == "")) || len(frac) > 2 || (hasDot && frac == "") {
		return 0, false
	}
	if len(whole) > 9 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	var w, f int64
	if whole != "" {
		w, _ = strconv.ParseInt(whole, 10, 64)
	}
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return w*100 + f, true
}

// ParseJSON reads an amount given as a JSON number (12.5, 0.550, 1e2) or
// a decimal string ("12.50") into cents. A number must be exactly a whole
// number of cents, whatever its spelling.
func ParseJSON(raw json.RawMessage) (int64, bool) {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, false
		}
		return ParseCents(text)
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(text), "e")
	if !hasExp {
		return ParseCents(text)
	}
	// An exponent: computed exactly, within bounds a price can need.
	e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	if err != nil || e < -20 || e > 12 || len(mant) > 30 || !json.Valid(raw) {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(mant)
	if !ok || r.Sign() < 0 {
		return 0, false
	}
	r.Mul(r, new(big.Rat).SetFrac(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(e, 0)+2)), nil),
		new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(-e, 0))), nil)))
	if !r.IsInt() || !r.Num().IsInt64() || r.Num().Int64() > 99999999999 {
		return 0, false
	}
	return r.Num().Int64(), true
}

// Format prints cents as a decimal string with two decimals: 1234 → "12.34".
func Format(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}
