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
// (Store.CreateDebit): the mandate's checks are conditions of that
// statement rather than reads before it. A single mandate's use is a mark
// on its row (used_at) rather than the existence of its payment, because
// the statement's update of the row waits for a concurrent use or
// revocation and re-reads the row, where a read of payments would still
// see the statement's snapshot. Errors are explained after the statement,
// by reads on the error path only. The originator's status and limits are
// conditions of the same statements (limits.go), checked under the
// originator's row lock.
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
// Mandates are evidence the originator must produce on request until two
// years after revocation, so nothing deletes them: a source's removal only
// marks the source, its mandates keep their rows, and the schema refuses
// to delete a source that has mandates or a mandate that is active or was
// revoked less than two years ago.
package payment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
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
	// HoldReason says why a held payment waits for review (HoldSanctions,
	// a return-rate guardrail's, or "fraud_rule:<id>"); nil otherwise.
	HoldReason *string `json:"hold_reason"`

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
	// Day is the banking day (YYYY-MM-DD) a new payment counts toward in
	// its originator's usage (BankingDay); set by pending, not stored.
	Day string `json:"-"`
}

// SourceInfo is what payments need to know about a funding source.
type SourceInfo struct {
	CustomerID string
	Verified   bool
	Removed    bool
	Business   bool // its account_holder_type is company
	Blocked    bool // a return blocked its debits
}

// NewDebit is a debit for Store.CreateDebit: Payment, whose MandateID
// names its mandate, and either Mandate, the new single mandate that
// authorizes it with its mandate.created event Created, or nil when the
// request named an existing one. A new mandate's customer and SEC code are
// its source's: SECCodes gives the SEC code of a consumer's and of a
// business's.
type NewDebit struct {
	Payment  Payment
	Mandate  *Mandate
	Created  event.Event
	SECCodes [2]string
}

// DebitOutcome is what CreateDebit or CreatePayment found: the source,
// the originator's terms as its creation read them under lock, and
// whether the payment was stored.
type DebitOutcome struct {
	Source     SourceInfo
	Originator Terms
	Created    bool
}

// Store is the persistence of payments and subscriptions.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	event.Recorder
	audit.Recorder

	// PaymentSource reads a funding source and holds a share lock on it
	// until the transaction ends; errs.NotFound when unknown.
	PaymentSource(ctx context.Context, scope tenant.Scope, id string) (SourceInfo, error)
	// InsertPayment stores p and counts it into its originator's usage
	// of p.Day, whatever the limits (limits.go).
	InsertPayment(ctx context.Context, p Payment) error
	// CreatePayment stores p when its source exists, is live and, for a
	// debit, Verified, and its originator takes it (Terms.Refusal, read
	// under the originator's row lock, and counted into its usage of
	// p.Day), holding the source's share lock until the transaction ends
	// (p's customer is the source's); it returns the source as found
	// (errs.NotFound when unknown), the originator's terms and whether p
	// was stored.
	CreatePayment(ctx context.Context, p Payment) (DebitOutcome, error)
	// CreateDebit is CreatePayment for a debit with its mandate: d's new
	// mandate with its event, or the mandate p names, which it locks and,
	// when single, marks used. The debit is stored only when the source
	// takes it (live, Verified, not blocked), the originator takes it and
	// the named mandate is active, of the source and, when single, unused
	// as it stands once concurrent uses or revocations have committed.
	CreateDebit(ctx context.Context, d NewDebit) (DebitOutcome, error)
	// Payment returns a payment; errs.NotFound when unknown.
	// PaymentForUpdate also locks it until the transaction ends.
	Payment(ctx context.Context, scope tenant.Scope, id string) (Payment, error)
	PaymentForUpdate(ctx context.Context, scope tenant.Scope, id string) (Payment, error)
	// ListPayments returns up to p.Limit+1 payments, newest first, that
	// match f (its empty fields match everything).
	ListPayments(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Payment, error)
	// SettlingPayments locks up to limit pending payments whose SettleAt is
	// at or before now, skipping rows other processes hold, with their
	// Standing.
	SettlingPayments(ctx context.Context, now time.Time, limit int) ([]Payment, error)
	// UnsentPayments locks the pending payments u selects, oldest first.
	// A production payment being assigned to an ACH file meanwhile is
	// waited for and then left out.
	UnsentPayments(ctx context.Context, scope tenant.Scope, u Unsent) ([]Payment, error)
	// FinishPayment stores a payment's final status, failure, cancel
	// reason and settle time.
	FinishPayment(ctx context.Context, p Payment) error
	// SetPaymentSettleAt sets when a pending payment settles.
	SetPaymentSettleAt(ctx context.Context, scope tenant.Scope, id string, at time.Time) error
	// SetPaymentSent stores when and how a payment left (finality.go),
	// and when it settles.
	SetPaymentSent(ctx context.Context, scope tenant.Scope, id string, sent Sent) error
	// Balances sums a scope's money in flight and at risk on day today
	// (US Eastern).
	Balances(ctx context.Context, scope tenant.Scope, today calendar.Date) (BalanceCents, error)

	InsertSubscription(ctx context.Context, s Subscription) error
	// Subscription returns a subscription; errs.NotFound when unknown.
	// SubscriptionForUpdate also locks it until the transaction ends.
	Subscription(ctx context.Context, scope tenant.Scope, id string) (Subscription, error)
	SubscriptionForUpdate(ctx context.Context, scope tenant.Scope, id string) (Subscription, error)
	// ListSubscriptions returns up to p.Limit+1 subscriptions, newest
	// first, that match f (Direction is ignored).
	ListSubscriptions(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Subscription, error)
	// DueSubscriptions locks up to limit active subscriptions whose next
	// date is at or before today, skipping rows other processes hold.
	DueSubscriptions(ctx context.Context, today string, limit int) ([]Subscription, error)
	// ActiveSubscriptionsOfSource locks a source's active subscriptions.
	ActiveSubscriptionsOfSource(ctx context.Context, scope tenant.Scope, sourceID string) ([]Subscription, error)
	UpdateSubscription(ctx context.Context, s Subscription) error

	InsertMandate(ctx context.Context, m Mandate) error
	// Mandate returns a mandate; errs.NotFound when unknown.
	// MandateForUpdate also locks it until the transaction ends.
	Mandate(ctx context.Context, scope tenant.Scope, id string) (Mandate, error)
	MandateForUpdate(ctx context.Context, scope tenant.Scope, id string) (Mandate, error)
	// ListMandates returns up to p.Limit+1 mandates, newest first, of one
	// funding source when sourceID is not "".
	ListMandates(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]Mandate, error)
	// ActiveMandatesOfSource locks a source's active mandates.
	ActiveMandatesOfSource(ctx context.Context, scope tenant.Scope, sourceID string) ([]Mandate, error)
	// RevokeMandate stores a mandate's revocation.
	RevokeMandate(ctx context.Context, m Mandate) error

	// PaymentFiledAt is when the ACH file holding a payment's entry was
	// created; nil while the payment is in no file (sandbox payments never
	// are).
	PaymentFiledAt(ctx context.Context, scope tenant.Scope, id string) (*time.Time, error)
	// Presentments returns the re-presentments of an original debit
	// (retry_of), by attempt.
	Presentments(ctx context.Context, scope tenant.Scope, originalID string) ([]Payment, error)
	// SubscriptionDebit returns a subscription's debit of a due date and
	// attempt; errs.NotFound when there is none.
	SubscriptionDebit(ctx context.Context, scope tenant.Scope, subscriptionID, dueDate string, attempt int) (Payment, error)

	// OriginatorTerms reads a scope's originator with its usage of the
	// banking day day (YYYY-MM-DD); errs.NotFound when it has none.
	OriginatorTerms(ctx context.Context, scope tenant.Scope, day string) (Terms, error)

	// ReturnCounts counts a scope's debits created since since, and their
	// returns: with a code of unauthorized, of administrative, and all.
	ReturnCounts(ctx context.Context, scope tenant.Scope, since time.Time, unauthorized, administrative []string) (ReturnCounts, error)

	RiskStore
}

// RiskStore is the persistence of holds, alerts, reviews, guardrails and
// the screening the payment rules read (hold.go, monitoring.go).
type RiskStore interface {
	// RiskFacts reads, in one statement, what the risk rules judge a new
	// payment from sourceID by; Found false when the source is unknown.
	RiskFacts(ctx context.Context, scope tenant.Scope, sourceID string, dayStart time.Time) (RiskFacts, error)
	// HoldPayment marks a pending payment held with its HoldReason.
	HoldPayment(ctx context.Context, p Payment) error
	// ReleaseHeld makes a held payment pending again, with its SettleAt.
	ReleaseHeld(ctx context.Context, p Payment) error
	InsertAlert(ctx context.Context, a Alert) error
	// HeldPayments returns up to limit held payments, oldest first, of
	// scope, or of every scope when scope is nil.
	HeldPayments(ctx context.Context, scope *tenant.Scope, limit int) ([]Payment, error)
	// HeldPaymentForUpdate locks a payment found by id alone (the
	// operator's review names no merchant); errs.NotFound when unknown.
	HeldPaymentForUpdate(ctx context.Context, id string) (Payment, error)
	// HeldOfCustomer locks a customer's payments held for reason.
	HeldOfCustomer(ctx context.Context, scope tenant.Scope, customerID, reason string) ([]Payment, error)
	// AlertCounts counts scope's alerts since since, by rule id.
	AlertCounts(ctx context.Context, scope tenant.Scope, since time.Time) (map[string]int, error)
	InsertReview(ctx context.Context, r Review) error
	// LastReview is the newest annual review; errs.NotFound when none.
	LastReview(ctx context.Context) (Review, error)
	// Guardrail reads scope's guardrail (zero when never computed);
	// GuardrailForUpdate also locks its row, when there is one.
	Guardrail(ctx context.Context, scope tenant.Scope) (Guardrail, error)
	GuardrailForUpdate(ctx context.Context, scope tenant.Scope) (Guardrail, error)
	SaveGuardrail(ctx context.Context, scope tenant.Scope, g Guardrail) error
	// CustomerScreening reads a customer's names (person, business) and
	// screening; CustomerScreeningForUpdate finds the customer by id
	// alone and locks it.
	CustomerScreening(ctx context.Context, scope tenant.Scope, customerID string) ([]string, sanctions.Screening, error)
	CustomerScreeningForUpdate(ctx context.Context, customerID string) (tenant.Scope, sanctions.Screening, error)
	SetCustomerScreening(ctx context.Context, scope tenant.Scope, customerID string, sc sanctions.Screening) error
}

// Config are the operator's payment settings.
type Config struct {
	MaxAmount   int64         // cents; larger payments are refused
	SettleDelay time.Duration // sandbox: pending → final after this long
}

// Service applies the payment rules.
type Service struct {
	store Store
	cfg   Config
	now   func() time.Time
	// onReturn applies the return policy to a returned payment's source in
	// the return's transaction; nil: nothing more.
	onReturn func(ctx context.Context, tx Store, scope tenant.Scope, sourceID, code string) error
	// onProcessed records, in the settlement's transaction, that money
	// moved through the source's account; nil: nothing more.
	onProcessed func(ctx context.Context, tx Store, scope tenant.Scope, sourceID string) error
	// originators says whether an originator may send entries; nil: all may.
	originators Originators
	// thresholds gives originators' fraud-rule thresholds; nil: defaults.
	thresholds Thresholds
	// sanctions is the list production entries are screened against as
	// they leave; nil: none.
	sanctions *sanctions.List
}

// OnReturn sets what else a payment's return does in its transaction, tx
// (the funding service applies the return policy to the source).
func (s *Service) OnReturn(fn func(ctx context.Context, tx Store, scope tenant.Scope, sourceID, code string) error) *Service {
	s.onReturn = fn
	return s
}

// OnProcessed sets what else a payment's settlement (processed) does in
// its transaction, tx (the funding service records that the account was
// paid with, which its account check counts).
func (s *Service) OnProcessed(fn func(ctx context.Context, tx Store, scope tenant.Scope, sourceID string) error) *Service {
	s.onProcessed = fn
	return s
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store = tx
	return &c
}

// NewService returns a Service.
func NewService(store Store, cfg Config, now func() time.Time) *Service {
	return &Service{store: store, cfg: cfg, now: now}
}

// Input is a payment request.
type Input struct {
	SourceID    string          `json:"funding_source_id"`
	Amount      json.RawMessage `json:"amount"`
	Direction   Direction       `json:"direction"`
	Description *string         `json:"description"`
	// EntryDescription names the batch's company entry description (entry.go).
	EntryDescription *string `json:"entry_description"`
	// A debit's authorization: an existing mandate, or the customer's
	// consent from which a single mandate is created.
	MandateID     *string        `json:"mandate_id"`
	Authorization *Authorization `json:"authorization"`
	// SameDay asks for Same Day ACH (finality.go).
	SameDay bool `json:"same_day"`
}

// Create records a pending payment. A debit needs a Verified source (403
// debit_not_allowed otherwise) and a mandate (see authorize); credits go to
// any live source and take none.
func (s *Service) Create(ctx context.Context, scope tenant.Scope, in Input) (Payment, error) {
	if in.SourceID == "" {
		return Payment{}, errs.Invalid("funding_source_id", "funding_source_id is required")
	}
	if in.Direction != Debit && in.Direction != Credit {
		return Payment{}, errs.Invalid("direction", `direction must be "debit" or "credit"`)
	}
	cents, err := s.amount(in.Amount)
	if err != nil {
		return Payment{}, err
	}
	desc, err := description(in.Description)
	if err != nil {
		return Payment{}, err
	}
	if in.EntryDescription, err = entryDescription(in.EntryDescription, in.Direction); err != nil {
		return Payment{}, err
	}
	if in.SameDay {
		if err := s.sameDayAllowed(ctx, scope, cents); err != nil {
			return Payment{}, err
		}
	}
	// The risk rules read what they need first (hold.go); a payment they
	// hold is created and held in one transaction, any other the usual way.
	v, err := s.assess(ctx, s.store, scope, in.SourceID, in.Direction, cents)
	if err != nil || v.reason == "" {
		if err != nil {
			return Payment{}, err
		}
		return s.create(ctx, scope, in, cents, desc)
	}
	var out Payment
	err = s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.On(tx).create(ctx, scope, in, cents, desc)
		if err == nil {
			out, err = s.hold(ctx, tx, p, v)
		}
		return err
	})
	return out, err
}

// create records a pending payment of a validated request.
func (s *Service) create(ctx context.Context, scope tenant.Scope, in Input, cents int64, desc *string) (Payment, error) {
	if in.Direction == Debit {
		return s.createDebit(ctx, scope, in, cents, desc)
	}
	if in.MandateID != nil || in.Authorization != nil {
		return Payment{}, errs.Invalid("mandate_id", "A credit takes no mandate_id or authorization; only debits are authorized by the customer.")
	}
	p := s.pending(scope, in.SourceID, "", cents, in.Direction, desc, nil)
	p.EntryDescription, p.SameDay = in.EntryDescription, in.SameDay
	out, err := s.store.CreatePayment(ctx, p)
	src := out.Source
	switch {
	case err == nil && out.Created:
		p.CustomerID = src.CustomerID
		return p, nil
	case err == nil:
		err = cmp.Or(src.allows(in.Direction), entryDescriptionRefusal(p.EntryDescription, in.Direction, src),
			out.Originator.Refusal(in.Direction, cents))
	}
	if err == nil {
		err = fmt.Errorf("credit on %s: a live source took no credit", in.SourceID)
	}
	return Payment{}, sourceRefusal(err)
}

// createDebit records a pending debit and, unless the request names a
// mandate, the mandate that authorizes it, in one statement (see
// Store.CreateDebit). A refusal is explained after it: the source's first,
// then the mandate's, read afresh so that a use or revocation that won a
// race is seen.
func (s *Service) createDebit(ctx context.Context, scope tenant.Scope, in Input, cents int64, desc *string) (Payment, error) {
	p := s.pending(scope, in.SourceID, "", cents, Debit, desc, nil)
	p.EntryDescription, p.SameDay = in.EntryDescription, in.SameDay
	d := NewDebit{Payment: p, SECCodes: [2]string{secCode(SourceInfo{}), secCode(SourceInfo{Business: true})}}
	var authErr error
	switch {
	case in.MandateID != nil && in.Authorization != nil:
		authErr = bothGiven()
	case in.MandateID != nil:
		d.Payment.MandateID = in.MandateID
	default:
		m, err := s.newMandate(scope, in.SourceID, Single, in.Authorization)
		if err != nil {
			authErr = err
			break
		}
		m.UsedAt = &m.CreatedAt
		d.Mandate, d.Payment.MandateID = &m, &m.ID
		d.Created = event.New(scope, event.MandateCreated, m, m.CreatedAt)
	}
	if authErr != nil {
		// The source's refusal comes first, as for any debit.
		if _, err := s.usableSource(ctx, s.store, scope, in.SourceID, Debit); err != nil {
			return Payment{}, err
		}
		return Payment{}, authErr
	}
	out, err := s.store.CreateDebit(ctx, d)
	if err == nil {
		err = out.Source.allows(Debit)
	}
	if err == nil && !out.Created {
		err = cmp.Or(entryDescriptionRefusal(p.EntryDescription, Debit, out.Source), out.Originator.Refusal(Debit, cents))
	}
	if err != nil {
		return Payment{}, sourceRefusal(err)
	}
	if !out.Created && in.MandateID == nil {
		return Payment{}, fmt.Errorf("debit on %s: a live source took no debit", in.SourceID)
	}
	if !out.Created {
		m, err := s.store.Mandate(ctx, scope, *in.MandateID)
		if err == nil {
			err = m.refusal(in.SourceID, Single)
		}
		if err == nil {
			err = errs.New(errs.Conflict, "The mandate changed while the debit was written; try again.")
		}
		return Payment{}, mandateRefusal(err)
	}
	d.Payment.CustomerID = out.Source.CustomerID
	return d.Payment, nil
}

// usableSource checks that a live source may take a payment in direction d.
func (s *Service) usableSource(ctx context.Context, tx Store, scope tenant.Scope, id string, d Direction) (SourceInfo, error) {
	src, err := tx.PaymentSource(ctx, scope, id)
	if err == nil {
		err = src.allows(d)
	}
	if err != nil {
		return SourceInfo{}, sourceRefusal(err)
	}
	return src, nil
}

// sourceRefusal names an unknown source as such; other errors pass.
func sourceRefusal(err error) error {
	if errs.Is(err, errs.NotFound) {
		return &errs.Error{Code: errs.FundingSourceNotFound, Param: "funding_source_id",
			Message: "No funding source with this funding_source_id exists."}
	}
	return err
}

// allows is the rule that makes verification matter: a removed source takes
// no payment, and an Unverified one only credits.
func (src SourceInfo) allows(d Direction) error {
	if src.Removed {
		return &errs.Error{Code: errs.FundingSourceRemoved, Param: "funding_source_id",
			Message: "This funding source was removed and cannot be used for payments."}
	}
	if d == Debit && !src.Verified {
		return &errs.Error{Code: errs.DebitNotAllowed, Param: "funding_source_id",
			Message: "A debit against an Unverified funding source is refused; verify it first. Credits are allowed."}
	}
	if d == Debit && src.Blocked {
		return &errs.Error{Code: errs.FundingSourceBlocked, Param: "funding_source_id",
			Message: "A return blocked debits from this funding source; unblock it once the customer has authorized again. Credits are allowed."}
	}
	return nil
}

// debitOf names the subscription debit a payment is: which subscription,
// which due date and which attempt, under which mandate.
type debitOf struct {
	subscriptionID, dueDate string
	attempt                 int
	mandateID               *string
	retryOf                 *string // a re-presentment's original debit
}

func (s *Service) insert(ctx context.Context, tx Store, scope tenant.Scope, sourceID, customerID string, cents int64, d Direction,
	desc *string, of *debitOf) (Payment, error) {
	p := s.pending(scope, sourceID, customerID, cents, d, desc, of)
	if err := tx.InsertPayment(ctx, p); err != nil {
		return Payment{}, err
	}
	return s.holdIfHeld(ctx, tx, p)
}

// pending is a new payment, not yet stored.
func (s *Service) pending(scope tenant.Scope, sourceID, customerID string, cents int64, d Direction, desc *string, of *debitOf) Payment {
	now := s.now().UTC()
	p := Payment{
		Scope: scope, ID: ids.New(ids.Payment), SourceID: sourceID, CustomerID: customerID,
		Amount: money.Format(cents), Currency: "USD", Cents: cents, Direction: d, Description: desc,
		Status: Pending, CreatedAt: now, Day: BankingDay(now).Format(time.DateOnly),
	}
	if of != nil {
		p.SubscriptionID, p.DueDate, p.Attempt, p.MandateID = &of.subscriptionID, &of.dueDate, &of.attempt, of.mandateID
		p.RetryOf = of.retryOf
	}
	if scope.Env == tenant.Sandbox {
		at := now.Add(s.cfg.SettleDelay)
		p.SettleAt = &at
	}
	return p
}

// Get returns a payment.
func (s *Service) Get(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	p, err := s.store.Payment(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Payment{}, paymentNotFound()
	}
	return p, err
}

// List returns a page of payments, newest first, of one source when
// sourceID is not "".
func (s *Service) List(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]Payment, bool, error) {
	return s.Search(ctx, scope, Filter{SourceID: sourceID}, p)
}

// Filter narrows a list of payments or subscriptions; an empty field
// matches everything.
type Filter struct {
	SourceID  string
	Status    string    // a payment's Status, or a subscription's
	Direction Direction // payments only
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
	items, err := s.store.ListPayments(ctx, scope, f, p)
	return paging.Result(items, err, p)
}

// SettleDue settles sandbox payments whose delay has passed: processed, or
// failed with the return code of a magic amount. Several processes may run
// it at once; each payment settles once.
func (s *Service) SettleDue(ctx context.Context) (int, error) {
	return s.inBatches(ctx, func(ctx context.Context, tx Store) (int, int, error) {
		due, err := tx.SettlingPayments(ctx, s.now(), batchSize)
		if err != nil {
			return 0, 0, err
		}
		returned := false
		for _, p := range due {
			if returned {
				// An earlier return of this batch may have canceled p
				// (its source blocked or removed): read it again.
				cur, err := tx.Payment(ctx, p.Scope, p.ID)
				if err != nil {
					return 0, 0, err
				}
				if cur.Status != Pending {
					continue
				}
			}
			code := ""
			if p.Scope.Env == tenant.Sandbox {
				// A sandbox payment settles where a production one would
				// leave: its authorization is checked as it would be there.
				if ok, err := s.ReleaseTx(ctx, tx, p); err != nil || !ok {
					if err != nil {
						return 0, 0, err
					}
					continue
				}
				code = SandboxReturnCode(p.Cents)
			}
			if err := s.finish(ctx, tx, p, code); err != nil {
				return 0, 0, err
			}
			returned = returned || code != ""
		}
		return len(due), len(due), nil
	})
}

// batchSize is how many rows one transaction of a background job handles.
const batchSize = 100

// inBatches runs batch, each time in its own transaction, until it handles
// fewer than batchSize rows, and returns the sum of what it counted. A
// failed batch is rolled back and not counted.
func (s *Service) inBatches(ctx context.Context, batch func(ctx context.Context, tx Store) (rows, counted int, err error)) (int, error) {
	total := 0
	for {
		rows, counted := 0, 0
		err := s.store.WithTx(ctx, func(tx Store) (err error) {
			rows, counted, err = batch(ctx, tx)
			return err
		})
		if err != nil {
			return total, err
		}
		total += counted
		if rows < batchSize {
			return total, nil
		}
	}
}

// finish settles p as processed (code "") or failed with an ACH return
// code, and fires payment.success or payment.failed. A returned
// subscription debit also applies the subscription's return rules, and
// any return the return policy on its source (onReturn); a processed one
// tells the source's account (onProcessed).
func (s *Service) finish(ctx context.Context, tx Store, p Payment, code string) error {
	now := s.now().UTC()
	p.SettledAt = &now
	typ := event.PaymentSuccess
	if code == "" {
		p.Status = Processed
	} else {
		reason := achcode.Reason(code)
		p.Status, p.FailureCode, p.FailureReason = Failed, &code, &reason
		typ = event.PaymentFailed
	}
	if err := tx.FinishPayment(ctx, p); err != nil {
		return err
	}
	if err := s.sentInSandbox(ctx, tx, &p, now); err != nil {
		return err
	}
	if err := tx.RecordEvent(ctx, event.New(p.Scope, typ, p, now)); err != nil {
		return err
	}
	if code != "" && p.SubscriptionID != nil {
		if err := s.debitReturned(ctx, tx, p, code); err != nil {
			return err
		}
	}
	if code != "" && p.Direction == Debit {
		if _, err := s.recomputeGuardrail(ctx, tx, p.Scope); err != nil {
			return err
		}
	}
	if code != "" && s.onReturn != nil {
		return s.onReturn(ctx, tx, p.Scope, p.SourceID, code)
	}
	if code == "" && s.onProcessed != nil {
		return s.onProcessed(ctx, tx, p.Scope, p.SourceID)
	}
	return nil
}

// Cancel cancels a pending payment at the merchant's request
// (cancel_reason requested): in sandbox before it settles, in production
// before it is written into an ACH file (the file's assignment locks the
// payment, so the two never both happen). It records payment.canceled.
// Canceling a canceled payment returns it as it is.
func (s *Service) Cancel(ctx context.Context, scope tenant.Scope, id string) (Payment, error) {
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.lockPayment(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		out = p
		switch {
		case p.Status == Voided:
			return nil
		case p.Status != Pending && p.Status != Held:
			return errs.Newf(errs.Conflict, "This payment is %s; only a pending payment can be canceled.", p.Status)
		case scope.Env.Live() && p.SettleAt != nil:
			return errs.New(errs.Conflict, "This payment is already in an ACH file sent to the bank; it can no longer be canceled.")
		}
		out, err = s.void(ctx, tx, p, CancelRequested)
		return err
	})
	return out, err
}

// OriginatedTx records, in the caller's transaction tx, that a payment
// went out in an ACH file, with its dates: unless a return comes first, it
// settles (processed, payment.success) at sent.SettleAt.
func (s *Service) OriginatedTx(ctx context.Context, tx Store, scope tenant.Scope, id string, sent Sent) error {
	return tx.SetPaymentSent(ctx, scope, id, sent)
}

// ReturnTx applies an ACH return in the caller's transaction tx: the
// payment fails with the code and fires payment.failed, even after it was
// processed (returns can come later). A payment already failed or
// canceled is left as it is.
func (s *Service) ReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) error {
	p, err := s.lockPayment(ctx, tx, scope, id)
	if err != nil || p.Status == Failed || p.Status == Voided {
		return err
	}
	return s.finish(ctx, tx, p, code)
}

// SimulateReturn is the sandbox's return: a pending or processed payment
// comes back with code (like "R10") exactly as an ACH return would, and the
// payment is answered as it now is. Any other status is 409 conflict.
func (s *Service) SimulateReturn(ctx context.Context, scope tenant.Scope, id, code string) (Payment, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Payment{}, err
	}
	if !achcode.Valid(code) {
		return Payment{}, errs.Invalid("code", `code must be an ACH return code, "R" and two digits, like "R10"`)
	}
	var out Payment
	err := s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.lockPayment(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		if p.Status != Pending && p.Status != Processed {
			return errs.Newf(errs.Conflict, "This payment is %s; only a pending or processed payment can come back.", p.Status)
		}
		if err := s.finish(ctx, tx, p, code); err != nil {
			return err
		}
		out, err = tx.Payment(ctx, scope, id)
		return err
	})
	return out, err
}

func (s *Service) amount(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount", Message: "amount is required, like \"12.34\""}
	}
	c, ok := money.ParseJSON(raw)
	switch {
	case !ok:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount",
			Message: "amount must be a positive number of dollars with at most two decimals, like 12.34 or \"12.34\""}
	case c <= 0:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount", Message: "amount must be more than 0.00"}
	case c > s.cfg.MaxAmount:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount",
			Message: "amount is above the limit of " + money.Format(s.cfg.MaxAmount) + " per payment"}
	}
	return c, nil
}

func description(d *string) (*string, error) {
	if d == nil {
		return nil, nil
	}
	v := strings.TrimSpace(*d)
	if v == "" {
		return nil, nil
	}
	if len([]rune(v)) > MaxDescription || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, errs.Invalid("description", "description must be at most 100 characters without control characters")
	}
	return &v, nil
}

// lockPayment reads a payment and locks it until the transaction ends;
// payment_not_found when unknown.
func (s *Service) lockPayment(ctx context.Context, tx Store, scope tenant.Scope, id string) (Payment, error) {
	p, err := tx.PaymentForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Payment{}, paymentNotFound()
	}
	return p, err
}

func paymentNotFound() error {
	return &errs.Error{Code: errs.PaymentNotFound, Message: "No payment with this id exists."}
}
