package achcode

// Action is what a return does to the funding source it came back from,
// beyond failing the payment or verification.
type Action string

// Actions of the return policy.
const (
	// Keep leaves the source as it is (R01 and R09 may be presented again;
	// other codes fail only the entry).
	Keep Action = ""
	// Remove removes the source (removed_reason "return_R03"): the account
	// is closed, missing, malformed or cannot take debits at all.
	Remove Action = "remove"
	// Block revokes the source's mandates and refuses debits until the
	// merchant attests that the customer authorized again: the customer
	// disputes the authorization, or the account is frozen.
	Block Action = "block"
)

// policy is the return policy: the one place that says which codes change
// the source. docs/ach.md's table shows the same.
var policy = map[string]Action{
	"R02": Remove, // account closed
	"R03": Remove, // no account
	"R04": Remove, // invalid account number
	"R20": Remove, // non-transaction account
	"R05": Block,  // unauthorized consumer debit
	"R07": Block,  // authorization revoked
	"R10": Block,  // not known or not authorized
	"R11": Block,  // not as authorized
	"R29": Block,  // corporate: not authorized
	"R16": Block,  // account frozen
	// questionable circumstances: the receiver's bank believes the entry
	// was sent under false pretenses (the receiver did not authorize it
	// as what it was), so the source is treated as for R10.
	"R17": Block,
}

// SourceAction is what a return with code does to its funding source.
func SourceAction(code string) Action { return policy[code] }

// ReturnReason is the removed_reason or revoke_reason a return with code
// gives: "return_R03".
func ReturnReason(code string) string { return "return_" + code }
