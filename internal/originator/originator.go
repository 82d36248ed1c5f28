// Package originator keeps each merchant environment's originator: the
// company its ACH entries go out under (company name and company id, so
// the receiving customer's statement names the merchant they authorized
// and the bank can attribute returns, exposure and complaints to it),
// whether it may send entries, its limits and its Same Day ACH switch,
// the default purpose of its payments, and the thresholds of its
// fraud-monitoring rules.
//
// The database creates an environment's originator with the
// environment's row, so every binary (one that predates originators
// included) creates it with the same defaults: a sandbox originator is
// active, a production one starts pending_review and an operator
// activates it after reviewing the merchant. Its company name defaults to
// the merchant's name folded to NACHA's alphabet (the database spells the
// Latin-1 letters; the merchant service stores, in the same insert, the
// name NameAfter folds as ACH entries fold names) and its
// company id to a placeholder ("1" and 9 digits of a sequence) that the
// operator replaces with the one the bank knows.
//
// The placeholder has the form of a real id (1 and an EIN), so whether the
// id is the bank's is a mark of its own, company_id_assigned, set when an
// operator sets the id. A production originator is not activated without
// it: entries under an id the bank does not know are rejected or, worse,
// attributed to another company. An originator that is active without one
// (a database from before the mark) has its production payments held,
// hold_reason originator_company_id, until the operator sets it; setting it
// releases them in the same transaction (payment.Service's
// ReleaseCompanyIDHoldsTx, on the store's Payments).
//
// The limits are enforced by the statements that create payments (see
// the payment package's limits.go), since only a check under the
// originator's row lock is race-free; this package reads and changes
// them. Every change is an operator's and is audited in its transaction.
//
// An originator that is not active takes no new payment or subscription
// (originator_not_active), and its pending payments are canceled as they
// are about to leave (originator_suspended): this package is the payment
// service's payment.Originators.
package originator

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

// Statuses: only an active originator sends entries.
const (
	PendingReview = payment.OriginatorPendingReview
	Active        = payment.OriginatorActive
	Suspended     = payment.OriginatorSuspended
)

// Limits are an originator's limits in dollars, like other amounts.
type Limits struct {
	PerEntryDebit string `json:"per_entry_debit"` // the largest single debit
	DailyDebit    string `json:"daily_debit"`     // the debits of one banking day
	DailyCredit   string `json:"daily_credit"`    // the credits of one banking day
	// The instant credits' own limits: the largest single one, and those
	// of one banking day (they count toward DailyCredit too).
	PerEntryInstantCredit string `json:"per_entry_instant_credit"`
	DailyInstantCredit    string `json:"daily_instant_credit"`
}

// Originator is one merchant environment as an ACH originator.
type Originator struct {
	Scope       tenant.Scope `json:"-"`
	Environment string       `json:"environment"`
	CompanyName string       `json:"company_name"` // ≤ 16 characters of NACHA's alphabet
	CompanyID   string       `json:"company_id"`   // 10 characters
	// CompanyIDAssigned: an operator set CompanyID (Change.CompanyID);
	// until then it is the database's placeholder.
	CompanyIDAssigned bool   `json:"company_id_assigned"`
	Status            string `json:"status"` // PendingReview, Active or Suspended
	Limits            Limits `json:"limits"`
	SameDay           bool   `json:"same_day"`
	// Instant: its credits may go over an instant rail (method instant
	// or auto); on in sandbox and off in production until an operator
	// turns it on.
	Instant bool `json:"instant"`
	// DefaultPurpose is the purpose of its payments and subscriptions
	// that name none (payment.Purpose): goods for the originators that
	// existed before purposes, other for later ones.
	DefaultPurpose payment.Purpose `json:"default_purpose"`
	// Rules are the fraud-monitoring thresholds the operator set for this
	// originator, by rule id (RuleIDs): a dollar amount, or for
	// daily_velocity "N/D.DD"; a rule without one uses its default.
	Rules     map[string]string `json:"-"`
	UpdatedAt time.Time         `json:"updated_at"` // UTC

	// The limits in cents, and the usage of UsageDay (YYYY-MM-DD; "" when
	// nothing was counted yet), as stored.
	PerEntryDebitCents         int64  `json:"-"`
	DailyDebitCents            int64  `json:"-"`
	DailyCreditCents           int64  `json:"-"`
	PerEntryInstantCreditCents int64  `json:"-"`
	DailyInstantCreditCents    int64  `json:"-"`
	UsageDay                   string `json:"-"`
	UsedDebitCents             int64  `json:"-"`
	UsedCreditCents            int64  `json:"-"`
}

// withDollars fills o's Limits from its cents.
func (o Originator) withDollars() Originator {
	o.Environment = string(o.Scope.Env)
	o.Limits = Limits{PerEntryDebit: money.Format(o.PerEntryDebitCents), DailyDebit: money.Format(o.DailyDebitCents),
		DailyCredit: money.Format(o.DailyCreditCents), PerEntryInstantCredit: money.Format(o.PerEntryInstantCreditCents),
		DailyInstantCredit: money.Format(o.DailyInstantCreditCents)}
	if o.Rules == nil {
		o.Rules = map[string]string{}
	}
	return o
}

// Usage is what an originator's payments created on one banking day add
// up to, in dollars.
type Usage struct {
	BankingDay string `json:"banking_day"` // YYYY-MM-DD, US Eastern
	Debits     string `json:"debits"`
	Credits    string `json:"credits"`
}

// View is an originator as GET /v2/originator shows it to its merchant:
// with today's usage and its return rates.
type View struct {
	Originator
	Usage       Usage               `json:"usage"`
	ReturnRates payment.ReturnRates `json:"return_rates"`
}

// Store is the persistence of originators.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	audit.Recorder
	// Originator returns a scope's originator; errs.NotFound when none.
	// OriginatorForUpdate also locks it until the transaction ends.
	Originator(ctx context.Context, scope tenant.Scope) (Originator, error)
	OriginatorForUpdate(ctx context.Context, scope tenant.Scope) (Originator, error)
	// UpdateOriginator stores o's company (with CompanyIDAssigned),
	// status, limits, same_day and rules.
	UpdateOriginator(ctx context.Context, o Originator) error
	// Payments is the payment store on the same transaction: setting the
	// company id releases the payments held for want of it there.
	Payments() payment.Store
}

// Payments is what originators need of the payment service: an
// environment's return rates, and the release of the payments held until
// its company id was set.
type Payments interface {
	ReturnRates(ctx context.Context, scope tenant.Scope) (payment.ReturnRates, error)
	ReleaseCompanyIDHoldsTx(ctx context.Context, tx payment.Store, scope tenant.Scope) error
}
