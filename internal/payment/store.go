package payment

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// SourceInfo is what payments need to know about a funding source.
type SourceInfo struct {
	CustomerID string
	Verified   bool
	Removed    bool
	Business   bool // its account_holder_type is company
	Blocked    bool // a return blocked its debits
	// DebitRefusal and CreditRefusal are the source's refusals of a new
	// debit and a new credit (RefusedRemoved, RefusedUnverified,
	// RefusedBlocked; "" when it takes one), as the statement that read
	// it decided them: the source's rule has its one home there, beside
	// the share lock, and SourceInfo.allows only explains the answer.
	DebitRefusal  string
	CreditRefusal string
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
	// Reinitiation bounds the rule the statement decides: a debit that
	// would present a returned one again is not stored (retry.go).
	Reinitiation Reinitiation
}

// DebitOutcome is what CreateDebit or CreatePayment found: the source,
// the originator's terms as its creation read them under lock, and
// whether the payment was stored.
type DebitOutcome struct {
	Source     SourceInfo
	Originator Terms
	Created    bool
	// Reinitiation is the returned debit CreateDebit found the new one
	// would present again (Reinitiation's rule), which kept it from being
	// stored; nil when none.
	Reinitiation *Returned
	// Refusal is the condition that kept the payment from being stored,
	// as the creating statement decided it (Refused*, RefusedMandate*, or
	// a limit's name: LimitPerEntryDebit…); "" when it was stored. SEC is
	// the SEC code the statement judged the entry description by.
	Refusal string
	SEC     string
}

// Store is the persistence of payments and subscriptions.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	event.Recorder
	audit.Recorder

	// PaymentSource reads a funding source and holds a share lock on it
	// until the transaction ends, with the source rule's answer for a new
	// debit and a new credit (SourceInfo); errs.NotFound when unknown.
	PaymentSource(ctx context.Context, scope tenant.Scope, id string) (SourceInfo, error)
	// InsertPayment stores p and counts it into its originator's usage
	// of p.Day, whatever the limits (limits.go).
	InsertPayment(ctx context.Context, p Payment) error
	// CreatePayment stores p when its source exists and takes it (the
	// source's rule, as PaymentSource reports it), its entry description
	// fits (p.DescriptionFits) and its originator takes it (the limits'
	// rule, decided under the originator's row lock; p is counted into
	// its usage of p.Day), holding the source's share lock until the transaction ends
	// (p's customer is the source's); it returns the source as found
	// (errs.NotFound when unknown), the originator's terms and whether p
	// was stored.
	CreatePayment(ctx context.Context, p Payment) (DebitOutcome, error)
	// CreateDebit is CreatePayment for a debit with its mandate: d's new
	// mandate with its event, or the mandate p names, which it locks and,
	// when single, marks used. The debit is stored only when the source
	// takes it (live, Verified, not blocked), the originator takes it and
	// the mandate rule takes the named mandate as it stands once
	// concurrent uses or revocations have committed (as MandateForUse
	// decides it); otherwise the outcome's Refusal names why.
	CreateDebit(ctx context.Context, d NewDebit) (DebitOutcome, error)
	// SetPaymentLedger stores a new payment's metadata and refund link.
	SetPaymentLedger(ctx context.Context, scope tenant.Scope, id string, l Ledger) error
	// RefundsLeft counts a debit's refunds that left (production: in an
	// ACH file; sandbox: processed) and did not fail.
	RefundsLeft(ctx context.Context, scope tenant.Scope, debitID string) (int, error)
	// SetSubscriptionMetadata stores a subscription's metadata.
	SetSubscriptionMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error
	// SetPaymentMetadata stores a payment's metadata.
	SetPaymentMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error
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
	// SetPaymentSettlement stores the settlement date the bank's
	// statement shows and the last day of the unauthorized-return window
	// that follows (nil: none).
	SetPaymentSettlement(ctx context.Context, scope tenant.Scope, id string, settlement calendar.Date, unauthorizedUntil *calendar.Date) error
	// Balances sums a scope's money in flight and at risk on day today
	// (US Eastern).
	Balances(ctx context.Context, scope tenant.Scope, today calendar.Date) (BalanceCents, error)
	// SettledPayments returns up to limit of scope's payments settled
	// (processed or failed) with settlement date day, oldest first, with
	// their reconciled statement lines (report.go).
	SettledPayments(ctx context.Context, scope tenant.Scope, day calendar.Date, limit int) ([]SettledPayment, error)
	// BalanceLines returns up to p.Limit+1 lines of scope's ledger,
	// newest first (balance.go); errs.NotFound for an unknown cursor.
	BalanceLines(ctx context.Context, scope tenant.Scope, p paging.Page) ([]LineRow, error)

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
	// MandateForUse locks mandate id until the transaction ends and
	// reports the mandate rule's refusal of it authorizing a debit
	// (Single) or subscription (Recurring) of sourceID, as it stands once
	// concurrent uses or revocations have committed: a RefusedMandate*
	// name, "" when it authorizes it; errs.NotFound when unknown.
	MandateForUse(ctx context.Context, scope tenant.Scope, id, sourceID string, typ MandateType) (string, error)
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

	// InstantTerms reads scope's originator's instant switch and limits
	// with its instant credits of the banking day day; lock also locks
	// the originator's row until the transaction ends (the sum is read
	// after the lock). Found is false when it has none.
	InstantTerms(ctx context.Context, scope tenant.Scope, day string, lock bool) (InstantTerms, error)
	// InsertInstantCredit stores an instant credit's intent and marks its
	// payment with its method, rail and rail status.
	InsertInstantCredit(ctx context.Context, ic InstantCredit) error
	// SetPaymentRoute stores a just-created payment's method, rail and
	// fallback reason.
	SetPaymentRoute(ctx context.Context, p Payment) error
	// ClaimInstantCredits leases up to limit due instant credits of
	// pending payments (queued, or unanswered with an expired lease) to
	// token until until, counting an attempt; the payments' rows are
	// locked while it runs, so a cancel or removal either sees the claim
	// or goes first. A queued credit stays queued until it leaves.
	ClaimInstantCredits(ctx context.Context, now time.Time, token string, until time.Time, limit int) ([]InstantCredit, error)
	// PaymentToLeave locks a payment until the transaction ends and
	// reads it with its Standing, as the statements that claim payments
	// for departure do.
	PaymentToLeave(ctx context.Context, scope tenant.Scope, id string) (Payment, error)
	// InstantLeaving marks ic, queued under its lease, sending when
	// leaves, and otherwise gives its lease up (it stays queued, due
	// from now on); false when ic is no longer queued under that lease.
	InstantLeaving(ctx context.Context, ic InstantCredit, leaves bool, now time.Time) (bool, error)
	// InstantAnswered settles ic (state accepted or rejected, with
	// reason) under its lease; false when it is no longer ic's sender's
	// or already settled. It also stores the payment's rail status and
	// sent_at.
	InstantAnswered(ctx context.Context, ic InstantCredit, state, reason string, at time.Time) (bool, error)
	// InstantUnanswered marks ic sent at sent (unless it was before)
	// without an answer (unknown), its lease given up, to be asked again
	// at next; when not taken (the rail took nothing of a credit that had
	// never left) it stays queued and unsent instead. False as
	// InstantAnswered.
	InstantUnanswered(ctx context.Context, ic InstantCredit, sent, next time.Time, taken bool) (bool, error)
	// DropInstantCredit deletes ic, still sending under its lease, and its
	// pending payment, giving its amount back to the day's credit usage.
	DropInstantCredit(ctx context.Context, ic InstantCredit) error
	// InstantToACH makes ic's payment an ACH credit with fallback reason
	// fallback, still under ic's lease, and deletes ic.
	InstantToACH(ctx context.Context, ic InstantCredit, fallback string, sameDay bool, settleAt *time.Time) error

	// OriginatorTerms reads a scope's originator with its usage of the
	// banking day day (YYYY-MM-DD) and, in Terms.Refusal, its refusal of
	// a debit of cents by the limits' rule the creating statements decide
	// by; errs.NotFound when it has none.
	OriginatorTerms(ctx context.Context, scope tenant.Scope, day string, cents int64) (Terms, error)

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
	// HeldOfCustomer locks a customer's payments held for reason, or
	// every customer's of scope when customerID is "".
	HeldOfCustomer(ctx context.Context, scope tenant.Scope, customerID, reason string) ([]Payment, error)
	// AlertCounts counts scope's alerts since since, by rule id.
	AlertCounts(ctx context.Context, scope tenant.Scope, since time.Time) (map[string]int, error)
	// CountAlerts counts every scope's alerts of rule id since since.
	CountAlerts(ctx context.Context, id string, since time.Time) (int64, error)
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
	CustomerScreening(ctx context.Context, scope tenant.Scope, customerID string) ([]sanctions.Name, sanctions.Screening, error)
	CustomerScreeningForUpdate(ctx context.Context, customerID string) (tenant.Scope, sanctions.Screening, error)
	SetCustomerScreening(ctx context.Context, scope tenant.Scope, customerID string, sc sanctions.Screening) error
}
