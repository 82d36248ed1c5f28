// Package money parses and prints US dollar amounts in whole cents, exactly:
// no floating point anywhere.
package money

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ParseCents parses a non-negative decimal amount with at most two decimals
// ("0.12", ".5", "3", "1.00") into cents. It refuses signs, exponents,
// spaces, more than two decimals and more than nine whole digits.
func ParseCents(s string) (int64, bool) {
	whole, frac, hasDot := strings.Cut(s, ".")
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

// ParseJSON reads an amount given as a JSON number (12.5) or a decimal
// string ("12.50") into cents.
func ParseJSON(raw json.RawMessage) (int64, bool) {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, false
		}
	}
	return ParseCents(text)
}

// Format prints cents as a decimal string with two decimals: 1234 → "12.34".
func Format(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}
