package dashboard

import "strings"

// usd is a decimal dollar amount ("12345.67", as the API writes it) for
// people: "$12,345.67", the thousands grouped so a large amount reads at
// a glance.
func usd(amount string) string {
	sign := ""
	if rest, ok := strings.CutPrefix(amount, "-"); ok {
		sign, amount = "-", rest
	}
	whole, frac, hasFrac := strings.Cut(amount, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + "$" + b.String()
}
