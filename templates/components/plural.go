// Package components holds templ pieces the hosted page and the dashboard
// share: whole-page messages (errors, not found) and wording helpers.
package components

// Plural picks the word for n: one for 1, many otherwise.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AccountLabel is an account for people: "Checking •••• 6789" for the
// account type "checking" and the last four digits "6789".
func AccountLabel(accountType, lastFour string) string {
	kind := "Account"
	switch accountType {
	case "checking":
		kind = "Checking"
	case "savings":
		kind = "Savings"
	}
	return kind + " •••• " + lastFour
}
