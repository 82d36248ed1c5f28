// Package event defines the events the service tells merchants about, and
// the outbox they travel through. The path of one event, from the change
// to the merchant's endpoint:
//
//  1. A use case (funding.Service.InitiateVerification, say) makes its
//     change and calls Recorder.RecordEvent with the event, inside the
//     same database transaction: the change and its event commit
//     together or not at all.
//  2. RecordEvent (internal/adapter/postgres/events.go) writes the event row and,
//     when the merchant's environment has a webhook endpoint, a pending
//     delivery row due now. Once the transaction has committed, the store
//     notifies the dispatchers in a statement of its own (see the waker in
//     internal/adapter/postgres).
//  3. Every process's webhook.Dispatcher, woken by the notification (or
//     by its poll), claims the due delivery, signs the event's envelope
//     with the endpoint's secret and POSTs it, then records the attempt
//     and the delivery's next state (delivered, a retry, or failed).
//
// The events API (webhook.Service.Events) reads the same rows.
package event

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

// Event types of the contract.
const (
	CustomerCreated                  = "customer.created"
	CustomerUpdated                  = "customer.updated"
	FundingSourceUpdated             = "funding_source.updated"
	PaymentCanceled                  = "payment.canceled"
	FundingSourceCreated             = "funding_source.created"
	FundingSourceVerificationPending = "funding_source.verification_pending"
	FundingSourceVerified            = "funding_source.verified"
	FundingSourceVerificationFailed  = "funding_source.verification_failed"
	FundingSourceVerificationExpired = "funding_source.verification_expired"
	FundingSourceRemoved             = "funding_source.removed"
	PaymentSuccess                   = "payment.success"
	PaymentFailed                    = "payment.failed"
	SubscriptionCreated              = "subscription.created"
	SubscriptionCanceled             = "subscription.canceled"
	WebhookTest                      = "webhook.test"
	WebhookDisabled                  = "webhook.disabled"
	MandateCreated                   = "mandate.created"
	MandateRevoked                   = "mandate.revoked"
	FundingSourceBlocked             = "funding_source.blocked"
	FundingSourceUnblocked           = "funding_source.unblocked"
	PaymentReversed                  = "payment.reversed"
	PaymentHeld                      = "payment.held"
	PaymentReleased                  = "payment.released"
	CustomerScreeningMatch           = "customer.screening_match"
	OriginatorReturnRateWarning      = "originator.return_rate_warning"
	PaymentRefunded                  = "payment.refunded"
	TestClockReady                   = "test_clock.ready"
)

// Event is one notification. Data is marshalled to JSON as the envelope's
// data member; it must never hold a full account number or a secret.
type Event struct {
	ID        string
	Scope     tenant.Scope
	Type      string
	CreatedAt time.Time // UTC
	Data      any
	// TestClock is the sandbox test clock the event happened on ("" for
	// the wall clock), and ClockTime that clock's time then (UTC; zero
	// without a clock). The store sets both from the context the event is
	// recorded under (OnClock) unless they are set already.
	TestClock string
	ClockTime time.Time
}

// Types lists every event type, in the order of the contract.
var Types = []string{
	CustomerCreated, FundingSourceCreated, FundingSourceVerificationPending, FundingSourceVerified,
	FundingSourceVerificationFailed, FundingSourceVerificationExpired, FundingSourceRemoved,
	PaymentSuccess, PaymentFailed, SubscriptionCreated, WebhookTest, WebhookDisabled,
	CustomerUpdated, FundingSourceUpdated, PaymentCanceled, SubscriptionCanceled,
	MandateCreated, MandateRevoked, FundingSourceBlocked, FundingSourceUnblocked,
	PaymentReversed, PaymentHeld, PaymentReleased, CustomerScreeningMatch, OriginatorReturnRateWarning,
	PaymentRefunded, TestClockReady,
}

// ValidFilter reports whether f names an event type or a group of them
// ("funding_source.*").
func ValidFilter(f string) bool {
	for _, t := range Types {
		if t == f || (strings.HasSuffix(f, ".*") && strings.HasPrefix(t, f[:len(f)-1])) {
			return true
		}
	}
	return false
}

// Envelope is the JSON form of an event: the webhook payload and the API resource.
type Envelope struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Livemode  bool      `json:"livemode"`
	Data      any       `json:"data"`
	// TestClock and ClockTime are present only for an event on a test clock.
	TestClock string     `json:"test_clock,omitempty"`
	ClockTime *time.Time `json:"clock_time,omitempty"`
}

// Envelope returns the event's JSON form.
func (e Event) Envelope() Envelope {
	env := Envelope{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt, Livemode: e.Scope.Env.Live(), Data: e.Data}
	if e.TestClock != "" {
		at := e.ClockTime.UTC()
		env.TestClock, env.ClockTime = e.TestClock, &at
	}
	return env
}

// OnClock returns e on the test clock ctx carries, if e names none yet:
// an event recorded under a clock is the clock's, at the clock's time.
func OnClock(ctx context.Context, e Event) Event {
	if e.TestClock != "" {
		return e
	}
	if c, ok := testclock.From(ctx); ok {
		e.TestClock, e.ClockTime = c.ID, c.Now.UTC()
	}
	return e
}

// MarshalJSON writes {id, type, created_at, livemode, data}.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.Envelope())
}

// New returns an event with a fresh evt_ id.
func New(scope tenant.Scope, typ string, data any, now time.Time) Event {
	return Event{ID: ids.New(ids.Event), Scope: scope, Type: typ, CreatedAt: now.UTC(), Data: data}
}

// Recorder writes events; called inside the transaction of the change.
type Recorder interface {
	RecordEvent(ctx context.Context, e Event) error
}
