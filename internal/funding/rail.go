package funding

import (
	"context"
	"errors"
	"time"
)

// Instant rails a bank can receive on.
const (
	RailRTP    = "rtp"
	RailFedNow = "fednow"
)

// ISO 20022 rejection reasons that are answers about the account itself:
// the verification fails at once with the reason as failure_code.
const (
	ReasonNoSuchAccount = "AC03" // invalid creditor account number
	ReasonClosed        = "AC04" // closed account
	ReasonBlocked       = "AC06" // blocked account
)

// accountReason reports whether a rail's rejection reason says the account
// cannot be verified. Any other rejection is the rail's own trouble (a
// limit, a format, a participant offline) and counts as unavailable.
func accountReason(code string) bool {
	return code == ReasonNoSuchAccount || code == ReasonClosed || code == ReasonBlocked
}

// ErrRailUnavailable is wrapped by a Rail's errors when the rail is down,
// refused the message for a reason of its own, or did not answer in time:
// nothing is known about the account.
var ErrRailUnavailable = errors.New("instant rail unavailable")

// ErrRailAnswerUnknown is wrapped by a Rail's errors when the rail took the
// credit (it answered) but the answer cannot be read or does not settle
// it: the credit may have been made, so it is neither resent under another
// message nor replaced by micro-deposits, and its outcome is "unknown"
// until a status answer or the customer's code settles it.
var ErrRailAnswerUnknown = errors.New("instant rail's answer unknown")

// InstantCredit is one credit transfer over an instant rail. It carries the
// account number in clear: it must never be logged.
type InstantCredit struct {
	// MessageID identifies the message; a resend of the same credit keeps
	// it, so the rail credits once.
	MessageID     string
	Rail          string // rtp or fednow
	RoutingNumber string
	AccountNumber string
	AccountType   string
	AmountCents   int
	// Remittance is the unstructured remittance line: the code.
	Remittance string
}

// RailAnswer is the rail's status report on a credit.
type RailAnswer struct {
	Accepted bool
	// Reason is the ISO 20022 status reason of a rejection (AC03…).
	Reason string
	At     time.Time // when the rail answered, UTC
}

// Rail sends instant credits and reads their status (rail.Client). Its
// errors wrap ErrRailUnavailable when no answer about the account came,
// ErrRailAnswerUnknown when one came that says nothing readable.
type Rail interface {
	Credit(ctx context.Context, c InstantCredit) (RailAnswer, error)
}

// Reach names the instant rail a routing number receives on, "" for none
// (routing.Rails).
type Reach interface {
	Rail(routingNumber string) string
}
