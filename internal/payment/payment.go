// Package payment holds the rules that make verification matter (spec:
// "Unverified funding sources are credit-only"): ACH
// payments against funding sources, their settlement and returns, and
// subscriptions that debit a Verified source on a schedule.
//
// It reads what it needs of a source through its own small store method
// rather than importing the funding package. The source row is
// share-locked while a payment is written, so a removal cannot slip in
// between, and removing a source cancels its subscriptions and its
// payments not sent yet in the removal's transaction (see authority.go for
// why an unsent payment is checked again when it leaves). The scheduler runs in every serve process; each
// due date is debited once however many run, because due subscriptions are
// claimed with FOR UPDATE SKIP LOCKED and a unique index on (subscription,
// due date, attempt) backs that up.
//
// Mandates (the customer's authorization of debits) live here rather than
// in a package of their own because every rule about them is a payment
// rule: one is created or checked in the transaction of the debit or
// subscription it authorizes, under the same share lock on the source;
// revoking one cancels the subscriptions and unsent debits it authorized;
// and an ACH return that says the authorization is gone revokes them in
// the return's transaction. A debit or subscription names an active mandate of its
// source (mandate_id) or brings the customer's authorization, from which
// one is created: single for a payment, recurring for a subscription, SEC
// code CCD for a business and WEB for a consumer. Production refuses a
// debit with neither (authorization_required); the sandbox creates a
// mandate of its own with a text that says so and no IP address, so that
// test flows need no authorization.
//
// A debit is written by one statement with its mandate, as a credit is
// (Store.CreateDebit): the mandate rule is decided in that statement,
// with the named mandate's row locked, rather than by reads before it,
// and the statement names its refusal, which Go turns into the error
// without deciding again (mandateRefused). A subscription's mandate is
// judged by the same SQL where it is locked (Store.MandateForUse). A
// single mandate's use is a mark on its row (used_at) rather than the
// existence of its payment, because the lock waits for a concurrent use
// or revocation and reads the row as it left it, where a read of
// payments would still see the statement's snapshot. The originator's
// status and limits are conditions of the same statements (limits.go),
// decided under the originator's row lock.
//
// A returned debit is presented again (reinitiation, retry.go) and an
// erroneous payment corrected (reversal, reversal.go) by payments of
// their own that name the payment they follow (retry_of, reversal_of):
// they go out through the one origination path like any payment, so each
// is in exactly one file, and the schema's unique indexes on those names
// keep two concurrent requests from storing two.
//
// Risk: a payment may be created held rather than pending (hold.go):
// sanctions screening of its customer (screening.go), its originator's
// return rates (guardrail.go) and the fraud-monitoring rules
// (monitoring.go) are judged from one read of facts before the creation
// statement, so the common path stays one statement and only a held
// payment is written in a transaction with its hold. Held payments leave
// only when an operator releases them.
//
// A refund (refund.go) pays back a processed debit with a credit of its
// own that goes through Create's path; the merchant's ledger (balance.go)
// is derived from the payments by one statement that both lists its lines
// and sums the balances, so the two cannot disagree.
//
// Mandates are evidence the originator must produce on request until two
// years after revocation, so nothing deletes them: a source's removal only
// marks the source, its mandates keep their rows, and the schema refuses
// to delete a source that has mandates or a mandate that is active or was
// revoked less than two years ago.
//
// Each money rule is decided in one place; rules.go lists where each
// lives.
package payment

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// Direction of a payment, seen from the customer's account.
type Direction string

// Directions: a debit takes money from the account, a credit pays into it.
const (
	Debit  Direction = "debit"
	Credit Direction = "credit"
)

// Status of a payment: pending until it settles (processed) or comes back
// (failed, with the ACH return code).
type Status string

// Statuses.
const (
	Pending   Status = "pending"
	Processed Status = "processed"
	Failed    Status = "failed"
	Voided    Status = "canceled" // canceled while pending: never sent
	// Held waits for an operator's review (hold.go): it is neither
	// originated nor settled until released to pending.
	Held Status = "held"
)

// MaxDescription is the longest payment or subscription description, in characters.
const MaxDescription = 100

// Payment is one ACH debit or credit.
type Payment struct {
	Scope       tenant.Scope `json:"-"`
	ID          string       `json:"payment_id"`
	SourceID    string       `json:"funding_source_id"`
	CustomerID  string       `json:"user_id"`
	Amount      string       `json:"amount"` // decimal dollars, "12.34"
	Currency    string       `json:"currency"`
	Direction   Direction    `json:"direction"`
	Description *string      `json:"description"`
	// Purpose is what the payment is for (purpose.go).
	Purpose Purpose `json:"purpose"`
	// EntryDescription is the company entry description the payment
	// named (entry.go); null: the service's default.
	EntryDescription *string `json:"entry_description"`
	Status           Status  `json:"status"`
	FailureCode      *string `json:"failure_code"`   // ACH return code, "R01"
	FailureReason    *string `json:"failure_reason"` // its meaning
	SubscriptionID   *string `json:"subscription_id"`
	MandateID        *string `json:"mandate_id"` // debits: the customer's authorization; null for credits
	Attempt          *int    `json:"attempt"`    // subscription debits: 1, or 2 and 3 for re-presentments; one-off re-presentments: 2 or 3
	// RetryOf names the original debit (its first presentment) that a
	// re-presentment presents again; nil otherwise.
	RetryOf *string `json:"retry_of"`
	// ReversalOf names the payment a reversal reverses; nil otherwise.
	ReversalOf *string `json:"reversal_of"`
	// Reversal is the payment's reversal, when it was reversed: read from
	// the reversal's row, not stored on this one.
	Reversal  *Reversal  `json:"reversal"`
	CreatedAt time.Time  `json:"created_at"` // UTC
	SettledAt *time.Time `json:"settled_at"` // processed, failed or canceled; UTC
	// CancelReason says why a canceled payment was: CancelRequested,
	// CancelSourceBlocked, CancelSourceRemoved, CancelMandateRevoked or
	// CancelOriginatorSuspended; nil otherwise.
	CancelReason *string `json:"cancel_reason"`
	// SameDay asks for a Same Day ACH entry (finality.go).
	SameDay bool `json:"same_day"`
	// Dates is when the payment left and until when it may come back
	// (finality.go): null until its entry is assigned to a file (sandbox:
	// until it settles by itself).
	Dates
	// Method is what the payment was asked to go by (instant.go):
	// standard, same_day, instant or auto.
	Method string `json:"method"`
	// Rail is what it went on: rtp, fednow or ach.
	Rail string `json:"rail"`
	// FallbackReason says why an auto credit did not go instant; nil
	// otherwise.
	FallbackReason *string `json:"fallback_reason"`
	// RailStatus is an instant credit's state on its rail (RailQueued…,
	// "unknown" while no answer came); nil for ACH.
	RailStatus *string `json:"rail_status"`
	// HoldReason says why a held payment waits for review (HoldSanctions,
	// a return-rate guardrail's, or "fraud_rule:<id>"); nil otherwise.
	HoldReason *string `json:"hold_reason"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
	// TraceNumber is the trace number of the payment's ACH entry once
	// the bank took its file; nil before and for payments in no file.
	TraceNumber *string `json:"trace_number"`
	// RefundOf names the debit a refund pays back, RefundReason the
	// merchant's reason (refund.go); nil on other payments.
	RefundOf     *string `json:"refund_of"`
	RefundReason *string `json:"refund_reason"`
	// RefundedAmount is a debit's total of refunds that are not canceled
	// or failed, read from the refunds' rows; nil on credits.
	RefundedAmount *string `json:"refunded_amount"`
	RefundedCents  int64   `json:"-"`

	Cents    int64      `json:"-"` // the amount in cents, > 0
	DueDate  *string    `json:"-"` // subscription debits: the due date, YYYY-MM-DD
	SettleAt *time.Time `json:"-"` // sandbox: when it settles by itself; production: set when its ACH file is assigned
	// Standing is filled by the statements that claim pending payments to
	// send them (ReleaseTx); zero elsewhere.
	Standing Standing `json:"-"`
	// ReversalReason is a reversal's reason (ReverseReasons); nil on
	// other payments.
	ReversalReason *string `json:"-"`
	// HolderIndividual: its source's account_holder_type is individual,
	// as read with the payment.
	HolderIndividual bool `json:"-"`
	// PendingInstant is a new instant credit, written and not sent yet:
	// the caller sends it once the writing transaction committed
	// (consequence.Service.DeliverInstant). Nil otherwise.
	PendingInstant *InstantCredit `json:"-"`
	// Day is the banking day (YYYY-MM-DD) a new payment counts toward in
	// its originator's usage (BankingDay); set by pending, not stored.
	Day string `json:"-"`
	// DescriptionFits are the SEC codes under which a new payment's
	// EntryDescription fits it (descriptionFits), for the statement that
	// creates it; not stored.
	DescriptionFits []string `json:"-"`
}

// Config are the operator's payment settings.
type Config struct {
	MaxAmount   int64         // cents; larger payments are refused
	SettleDelay time.Duration // sandbox: pending → final after this long
	// Schedule is when production ACH files are built (the zero value is
	// calendar.DefaultSchedule): a reversal must leave in a window by its
	// last day.
	Schedule calendar.Schedule
}

// Service applies the payment rules.
type Service struct {
	store Store
	cfg   Config
	now   func(context.Context) time.Time
	// originators says whether an originator may send entries; nil: all may.
	originators Originators
	// thresholds gives originators' fraud-rule thresholds; nil: defaults.
	thresholds Thresholds
	// checks answers sources' account checks for the rules that read
	// them (monitoring.go); nil: those rules cannot be judged.
	checks AccountChecks
	// sanctions is the list production entries are screened against as
	// they leave; nil: none.
	sanctions *sanctions.List
	// instant sends instant credits (instant.go); nil: no credit goes
	// instant.
	instant    InstantRails
	instantCfg InstantConfig
	// inTx: the service is bound to a caller's transaction (On), so it
	// makes no network call: an instant credit's send is the caller's,
	// after its commit (DeliverInstant).
	inTx bool
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store, c.inTx = tx, true
	return &c
}

// NewService returns a Service.
func NewService(store Store, cfg Config, now func() time.Time) *Service {
	return &Service{store: store, cfg: cfg, now: testclock.Scope(now)}
}

// Get returns a payment.
func (s *Service) Get(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	return s.GetTx(ctx, s.store, scope, id)
}

// List returns a page of payments, newest first, of one source when
// sourceID is not "".
func (s *Service) List(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]Payment, bool, error) {
	return s.Search(ctx, scope, Filter{SourceID: sourceID}, p)
}

// Filter narrows a list of payments or subscriptions; an empty field
// matches everything.
type Filter struct {
	SourceID string
	// CustomerID narrows to the payments (subscriptions) of the
	// customer's sources; "" for every customer.
	CustomerID string
	Status     string    // a payment's Status, or a subscription's
	Direction  Direction // payments only
	Rail       string    // payments only: rtp, fednow or ach
	Method     string    // payments only: standard, same_day, instant or auto
	// Metadata holds the keys and values a payment's metadata must
	// have (payments only).
	Metadata metadata.Metadata
}

// Search returns a page of payments, newest first, that match f; an
// unknown status or direction is invalid_request.
func (s *Service) Search(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Payment, bool, error) {
	switch Status(f.Status) {
	case "", Pending, Processed, Failed, Voided, Held:
	default:
		return nil, false, errs.Invalid("status", "status must be pending, held, processed, failed or canceled")
	}
	switch f.Direction {
	case "", Debit, Credit:
	default:
		return nil, false, errs.Invalid("direction", "direction must be debit or credit")
	}
	switch f.Rail {
	case "", RailACH, RailRTP, RailFedNow:
	default:
		return nil, false, errs.Invalid("rail", "rail must be rtp, fednow or ach")
	}
	switch f.Method {
	case "", MethodStandard, MethodSameDay, MethodInstant, MethodAuto:
	default:
		return nil, false, errs.Invalid("method", "method must be standard, same_day, instant or auto")
	}
	m, err := metadata.Filter(f.Metadata)
	if err != nil {
		return nil, false, err
	}
	f.Metadata = m
	items, err := s.store.ListPayments(ctx, scope, f, p)
	return paging.Result(items, err, p)
}

// batchSize is how many rows one transaction of a background job handles.
const batchSize = 100

func paymentNotFound() error {
	return &errs.Error{Code: errs.PaymentNotFound, Message: "No payment with this id exists."}
}
