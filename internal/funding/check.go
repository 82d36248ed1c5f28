package funding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The account check: what this service's own history says about a bank
// account before a merchant relies on it. Facts are recorded by
// fingerprint (accountFPLabel: an HMAC of routing and account number
// together, so one number at two banks is two accounts) in the
// transaction of what they record, whichever merchant's customer the
// account belonged to. The check reads only which kinds and codes occurred
// and when, never who, for how much or the date itself, so its answer
// tells a merchant about the account and nothing about other merchants.
//
// Only what happened to the account counts, never a mere link: a link
// costs nothing, so counting links would let any merchant taint the
// account for everyone (link it under two customers, delete both) and
// show every merchant whether anyone else linked it lately. So
// many_customers counts the customers of other merchants who verified the
// account or paid with it (a payment into or out of it that settled) in
// the last 90 days: a merchant's own customers never count for its own
// check (it sees them itself), and the source's own customer is the one
// more that makes three. Links are still recorded: they tell the store
// which sources an account's new fact marks (checkstore.go).

// accountFPLabel separates account fingerprints (routing and number) from
// account-number fingerprints (uniqueness) and processor tokens.
const accountFPLabel = "bank_account"

// Kinds of account fact.
const (
	FactLinked    = "linked"    // a customer linked the account (counts for no check)
	FactVerified  = "verified"  // the account was verified (micro-deposits, code, third party, provider)
	FactPaid      = "paid"      // a payment into or out of the account settled (processed)
	FactReturned  = "returned"  // an ACH return, code R02…
	FactRejected  = "rejected"  // an instant rail refused it, code AC03…
	FactCorrected = "corrected" // a notification of change corrected it, code C01…
)

// AccountFact is one thing that happened to a bank account.
type AccountFact struct {
	Env        tenant.Environment
	AccountFP  []byte
	Kind       string
	Code       string // empty for linked, verified and paid
	MerchantID string
	CustomerID string
	SourceID   string
	At         time.Time
}

// AccountFacts is what the store tells about an account's history: only
// kinds, codes and the latest time of each, never whose.
type AccountFacts struct {
	// Unread: the history was not read, and the source's answer is the
	// one for an account with none. The store creates such a source only
	// when the account has no history (else ErrAccountHistory), so the
	// answer holds.
	Unread   bool
	Verified bool
	// Codes holds the latest time each return, rejection or change code
	// was recorded.
	Codes map[string]time.Time
	// OtherUses are, per customer of another merchant who verified the
	// account or paid with it, the latest time of that, newest first.
	OtherUses []time.Time
}

// ErrAccountHistory is the store's answer to a creation whose source was
// answered without its account's history (AccountFacts.Unread) when the
// account has one: nothing is written.
var ErrAccountHistory = errors.New("funding: the account has a history the creation was not answered with")

// Check results.
const (
	CheckPass    = "pass"
	CheckCaution = "caution"
	CheckFail    = "fail"
	CheckUnknown = "unknown"
)

// Account check reason codes, in the order an answer lists them.
const (
	CheckVerifiedBefore = "verified_before"
	CheckNoAccount      = "returned_no_account"
	CheckClosed         = "returned_closed"
	CheckInvalid        = "returned_invalid"
	CheckFrozen         = "returned_frozen"
	CheckUnauthorized   = "returned_unauthorized"
	CheckNonTransaction = "returned_non_transaction"
	CheckCorrectedByNOC = "corrected_by_noc"
	CheckManyCustomers  = "many_customers"
	checkWindow         = 365 * 24 * time.Hour
	manyCustomersWindow = 90 * 24 * time.Hour
	// manyOtherCustomers other merchants' customers, with the source's
	// own, are the "3 or more customers" of many_customers.
	manyOtherCustomers = 2
)

var reasonOrder = []string{CheckNoAccount, CheckClosed, CheckInvalid, CheckFrozen, CheckUnauthorized,
	CheckNonTransaction, CheckCorrectedByNOC, CheckManyCustomers, CheckVerifiedBefore}

// codeReasons maps the ACH return codes and ISO 20022 rejection reasons
// the check counts to its reasons; other codes are not recorded.
var codeReasons = map[string]string{
	"R03": CheckNoAccount, "AC03": CheckNoAccount,
	"R02": CheckClosed, "AC04": CheckClosed,
	"R04": CheckInvalid,
	"R16": CheckFrozen, "AC06": CheckFrozen,
	"R20": CheckNonTransaction,
	"R05": CheckUnauthorized, "R07": CheckUnauthorized, "R10": CheckUnauthorized,
	"R11": CheckUnauthorized, "R29": CheckUnauthorized, "R17": CheckUnauthorized,
}

// failing are the reasons that make the result fail.
var failing = map[string]bool{CheckNoAccount: true, CheckClosed: true, CheckInvalid: true,
	CheckFrozen: true, CheckUnauthorized: true}

// CodeReason is the check reason of a return, rejection or change code,
// "" when the check does not count it.
func CodeReason(code string) string {
	if len(code) == 3 && code[0] == 'C' {
		return CheckCorrectedByNOC
	}
	return codeReasons[code]
}

// AccountCheck is the check's answer on a funding source.
type AccountCheck struct {
	Result    string    `json:"result"`
	Reasons   []string  `json:"reasons"`
	CheckedAt time.Time `json:"checked_at"` // UTC
}

// Evaluate is the check of an account with facts f at now, for a source
// whose own customer linked it: fail for a closed, missing, invalid,
// frozen or unauthorized return in the last 365 days; caution for a
// non-transaction return or a correction in that time, or two or more
// customers of other merchants who verified the account or paid with it
// in the last 90 days (many_customers); pass when it was verified before
// and nothing worse; else unknown.
func Evaluate(f AccountFacts, now time.Time) AccountCheck {
	set := map[string]bool{}
	for code, at := range f.Codes {
		if r := CodeReason(code); r != "" && now.Sub(at) <= checkWindow {
			set[r] = true
		}
	}
	others := 0
	for _, at := range f.OtherUses {
		if now.Sub(at) <= manyCustomersWindow {
			others++
		}
	}
	if others >= manyOtherCustomers {
		set[CheckManyCustomers] = true
	}
	if f.Verified {
		set[CheckVerifiedBefore] = true
	}
	c := AccountCheck{Result: CheckUnknown, Reasons: []string{}, CheckedAt: now.UTC()}
	for _, r := range reasonOrder {
		if set[r] {
			c.Reasons = append(c.Reasons, r)
		}
	}
	switch {
	case slices.ContainsFunc(c.Reasons, func(r string) bool { return failing[r] }):
		c.Result = CheckFail
	case len(c.Reasons) > 0 && c.Reasons[0] != CheckVerifiedBefore:
		c.Result = CheckCaution
	case f.Verified:
		c.Result = CheckPass
	}
	return c
}

// accountFP is the fingerprint of one bank account: routing and number.
func (s *Service) accountFP(routing, number string) []byte {
	return s.vault.Fingerprint(accountFPLabel, routing+":"+number)
}

// sourceFP is src's account fingerprint; a source stored before account
// fingerprints existed has it computed from its sealed number.
func (s *Service) sourceFP(src Source) ([]byte, error) {
	if len(src.AccountFP) > 0 {
		return src.AccountFP, nil
	}
	number, err := s.vault.Open(src.Account.KeyID, src.Account.Data, []byte(src.ID))
	if err != nil {
		return nil, fmt.Errorf("open the account of source %s: %w", src.ID, err)
	}
	return s.accountFP(src.RoutingNumber, string(number)), nil
}

// recordFact records a fact of kind (with code) about src's account in
// tx, the transaction of what it records. A code the check does not count
// is not recorded.
func (s *Service) recordFact(ctx context.Context, tx Store, src Source, kind, code string) error {
	if code != "" && CodeReason(code) == "" {
		return nil
	}
	fp, err := s.sourceFP(src)
	if err != nil {
		return err
	}
	if err := tx.RecordAccountFact(ctx, AccountFact{Env: src.Scope.Env, AccountFP: fp, Kind: kind, Code: code,
		MerchantID: src.Scope.MerchantID, CustomerID: src.CustomerID, SourceID: src.ID, At: s.now(ctx).UTC()}); err != nil {
		return fmt.Errorf("record the %s fact of source %s: %w", kind, src.ID, err)
	}
	return nil
}

// PaidTx records, in the settlement's transaction tx, that a payment into
// or out of the account of source id (of scope, removed or not) settled:
// the account's paid fact, which other merchants' checks count as its
// customer's use (many_customers).
func (s *Service) PaidTx(ctx context.Context, tx Store, scope tenant.Scope, id string) error {
	src, err := tx.Source(ctx, scope, id)
	if err != nil {
		return fmt.Errorf("read source %s: %w", id, err)
	}
	return s.recordFact(ctx, tx, src, FactPaid, "")
}

// withCode returns f with code recorded at at, for an answer given in the
// transaction that recorded it.
func withCode(f AccountFacts, code string, at time.Time) AccountFacts {
	codes := make(map[string]time.Time, len(f.Codes)+1)
	for c, t := range f.Codes {
		codes[c] = t
	}
	codes[code] = at
	f.Codes = codes
	return f
}

// checked returns src with its account check at the service's now: the
// answer kept with the source when the store did not read the history (it
// holds by the database's clock; see checkstore.go), else computed from
// src.Facts, the history as read (and as a write in progress added to it).
func (s *Service) checked(ctx context.Context, src Source) Source {
	now := s.now(ctx)
	var c AccountCheck
	if kept := src.Stored.Check; kept != nil && !src.Stored.FactsRead {
		c = AccountCheck{Result: kept.Result, Reasons: append([]string{}, kept.Reasons...), CheckedAt: now.UTC()}
	} else {
		c = Evaluate(src.Facts, now)
	}
	src.AccountCheck = &c
	return src
}
