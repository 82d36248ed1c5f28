package dashboard

// Balances is the money of an environment in flight and at risk, in
// dollars as shown ("$12.34").
type Balances struct {
	PendingDebits  string
	PendingCredits string
	AtRiskDebits   string // processed debits still open to an unauthorized return
}

// Finality is when a payment left and until when it may come back; ""
// for what it does not have yet.
type Finality struct {
	SameDay            bool
	Pending            bool   // waiting for its ACH window
	Effective          string // "Nov 2, 2026"
	Settlement         string
	Sent               string // "Nov 2, 2026, 20:45 UTC"; "" until the bank took its file
	ReturnCloses       string // "Nov 4, 2026, 11:59 PM EST"
	UnauthorizedCloses string // "" unless an individual's debit
}
