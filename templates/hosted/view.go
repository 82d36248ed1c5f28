// Package hosted holds the templ components of the hosted verification page.
package hosted

// View is what the hosted verification page shows. It carries masked values
// only: the last four digits of the account, never the number.
type View struct {
	Merchant     string // the merchant's name
	Bank         string // the bank's name, or "Your bank"
	Account      string // "Checking •••• 6789"
	State        string // pending, not_initiated, verified, failed, refused or expired
	Action       string // where the form posts: the page's own path and query
	CancelAction string // where Cancel posts; "" when the link has no cancelUrl
	ContinueURL  string // verified: successUrl with the result appended; "" without one
	Arrival      string // expected arrival date, "Tuesday, November 24, 2026"
	Arrived      bool   // the expected arrival date has passed (US Eastern)
	ArrivesToday bool   // the expected arrival date is today (US Eastern)
	Expires      string // the date the deposits expire
	Attempts     int    // attempts remaining
	Amounts      [2]string
	// Instant: the pending verification is one deposit with a code, typed
	// into Code; Rail names its rail ("RTP" or "FedNow").
	Instant bool
	Code    string
	Rail    string
	// RailUnknown: the rail took the deposit but its answer could not be
	// read, so whether it has arrived is not known.
	RailUnknown bool
	// CodePrefix, CodeFormat and CodeExample describe the code (the
	// funding service's): "FS", "FS followed by four letters or digits",
	// "FS7KQ2".
	CodePrefix  string
	CodeFormat  string
	CodeExample string
	Error       string // the message to announce, "" when none
	ErrorField  string // "amount1", "amount2" or "code" when Error is about one input
	Sandbox     bool   // a sandbox link: test data, no real deposits
	// The merchant's brand: Logo and Theme are addresses on this origin
	// ("" for none); the logo's alt text is Merchant.
	Logo  string
	Theme string
}

// invalid reports whether input name carries the error.
func (v View) invalid(name string) bool { return v.Error != "" && v.ErrorField == name }

// focus reports whether input name takes the focus when the page loads:
// the wrong input, or the first one after a wrong pair, so a keyboard user
// is back where to type.
func (v View) focus(name string) bool {
	return v.invalid(name) || (v.Error != "" && v.ErrorField == "" && (name == "amount1" || name == "code"))
}

// describedBy links an input to the hint and, when it is wrong, its error.
// A wrong pair is about both inputs: both point at the form's error.
func (v View) describedBy(name string) string {
	hint := "amount-hint"
	if name == "code" {
		hint = "code-hint"
	}
	switch {
	case v.invalid(name):
		return hint + " " + name + "-error"
	case v.Error != "" && v.ErrorField == "":
		return hint + " form-error"
	}
	return hint
}

// title is the page's title for its state.
func (v View) title() string {
	switch v.State {
	case "verified":
		return "Bank account verified"
	case "failed":
		return "Verification locked"
	case "refused":
		return "Deposit refused by the bank"
	case "expired":
		return "Deposits expired"
	case "not_initiated":
		return "Deposits not sent yet"
	}
	return "Confirm your bank account"
}
