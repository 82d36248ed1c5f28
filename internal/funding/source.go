// Package funding holds funding sources: validation, creation rules and
// account-number uniqueness, removal, and verification by micro-deposits.
// Account numbers are sealed by a Vault before they reach the store; only
// last_four is kept in clear.
//
// Uniqueness: the account number's fingerprint is the primary key of a
// small registry keyed by (environment, fingerprint), written in the
// transaction that stores the source and deleted when the source is
// removed, so two concurrent creations of one number cannot both commit,
// whichever merchants make them.
//
// Verification has one set of rules and two kinds of proof: two
// micro-deposit amounts over ACH, or a code in the remittance line of one
// $0.01 credit over an instant rail (RTP or FedNow). Both are rows of one
// table with the same states, three attempts, ten-day expiry and events;
// only the sealed proof and the way it arrives differ. Attempts are
// counted under the source's row lock, so parallel guesses never get more
// than three; the API and the hosted page share the counter because both
// call the same verify.
//
// The instant credit leaves outside any transaction or row lock (no
// network call is made while one is held; intent.go). The initiation's
// checks and an intent (message id, sealed code, a lease) commit under the
// source's row lock first; the credit is sent once; its answer (accepted,
// or the account refused with AC03, AC04 or AC06) replaces the intent
// with the verification, or, when the rail gives none, the intent is
// deleted so nothing is stored and a rail outage counts no initiation. An
// intent is an open verification: a second initiation meanwhile is
// verification_pending. A sender that died leaves its intent until the
// lease runs out; it then counts as a credit sent with its rail status
// unknown (the code may be on the statement), resolved by the next
// initiation or verification of the source or by the expiry sweep, and is
// never sent again.
//
// Processor tokens: the single-use ledger keeps an HMAC of each consumed
// token (under the fingerprint key, so a database reader cannot test
// tokens), written in the transaction that stores the source: two
// concurrent submissions of one token cannot both succeed, and a provider
// failure consumes nothing. The customer is checked before the provider is
// called. The bank name comes from the routing directory on every creation
// path, so one account has one name whichever way it was linked.
//
// Ownership: a processor token proves that someone could sign in to the
// account, not that it is the customer's. The processor path asks the
// provider how well the customer's name and email match the account's
// owner and keeps the scores on the source. Under the flag policy the
// answer is information and a provider failure never costs the merchant a
// link; under require_match only a match links, and a refusal writes
// nothing, so the token is still good for the customer it belongs to.
//
// Returns act on the source by one policy table (achcode.SourceAction),
// applied by ApplyReturnTx in the return's transaction whichever way the
// return arrives (the bank's return file, the sandbox's simulations, a
// micro-deposit or a payment): a closed, missing or unusable account is
// removed; a disputed authorization or a frozen account blocks debits and
// revokes the source's mandates (package consequence does that from the
// Outcome ApplyReturnTx reports, since mandates are the payment
// package's). The merchant lifts a block by attesting that the
// customer authorized again, at most once per 365 days, so a customer who
// keeps disputing cannot be debited on attestations alone.
//
// The account check counts what happened to an account (verifications,
// settled payments, returns, rail refusals, corrections), never a mere
// link, which costs nothing and would let any merchant taint an account
// for the others and see who else linked it (check.go): many_customers is
// other merchants' customers who verified the account or paid with it in
// 90 days. The check is kept with the source (checkstore.go), so reading a
// source reads one row and no history. An account's history changes only
// by a new fact, and every fact that can change a source's check, whoever
// records it, marks that source's kept check in the transaction that
// records it; the next read computes it again, relative to its own
// merchant, and keeps it. Time changes an answer too (a return counts for
// 365 days, another merchant's customer's use for 90), so a kept answer
// carries when the first fact it counted leaves its window, and a read
// after that computes it again.
package funding

import (
	"context"
	"encoding/json"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
	"time"
)

// Status of a funding source. The API only ever shows Unverified or Verified;
// PendingVerified is the status carried by verification_pending events.
type Status string

// Statuses.
const (
	Unverified      Status = "Unverified"
	Verified        Status = "Verified"
	PendingVerified Status = "PendingVerified"
)

// Account holder types.
const (
	HolderIndividual = "individual"
	HolderCompany    = "company"
)

// Account types.
const (
	Checking = "checking"
	Savings  = "savings"
)

// Sealed is an encrypted value and the id of the key that sealed it.
type Sealed struct {
	KeyID string
	Data  []byte
}

// Source is a funding source. Its JSON form is the API resource and the data
// of funding-source events; it never holds the account number in clear.
type Source struct {
	Scope       tenant.Scope `json:"-"`
	ID          string       `json:"funding_source_id"`
	CustomerID  string       `json:"user_id"`
	Status      Status       `json:"status"`
	BankName    *string      `json:"bank_name"`
	LastFour    string       `json:"last_four"`
	AccountType string       `json:"account_type"`
	// AccountHolderType is HolderIndividual or HolderCompany: who holds
	// the account, which decides its entries' SEC code and receiver name.
	AccountHolderType string    `json:"account_holder_type"`
	Nickname          *string   `json:"nickname"`
	CreatedAt         time.Time `json:"created_at"` // UTC
	Removed           bool      `json:"removed"`
	// RemovedReason is "return_R03" (etc.) when an ACH return removed
	// the source, null otherwise.
	RemovedReason *string       `json:"removed_reason"`
	Verification  *Verification `json:"verification"`
	// Block is set while a return that disputes the authorization (or
	// says the account is frozen) refuses debits; null otherwise.
	Block *Block `json:"block"`
	// AccountCheck is what the service's history says of the account
	// (check.go): computed from Facts, or the answer kept with the source
	// while it holds (checkstore.go).
	AccountCheck *AccountCheck `json:"account_check"`
	// Ownership is the provider's match of the customer against the
	// account's owner (ownership.go); null but on the processor path.
	Ownership *Ownership `json:"ownership"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`

	RoutingNumber string       `json:"-"`
	Account       Sealed       `json:"-"` // the account number, sealed with the source id as associated data
	Fingerprint   []byte       `json:"-"` // HMAC of the account number
	AccountFP     []byte       `json:"-"` // HMAC of routing and account number; nil on sources older than it
	Facts         AccountFacts `json:"-"` // the account's history as the store read it (Unread: not read)
	Stored        StoredCheck  `json:"-"` // the account check kept with the source (checkstore.go)
	RemovedAt     *time.Time   `json:"-"`
	UnblockedAt   *time.Time   `json:"-"` // the last unblock, UTC
	Attestation   *string      `json:"-"` // the merchant's attestation at that unblock
	// HolderGuessed: AccountHolderType is HolderIndividual because the
	// input named none and the customer was not read (see Creation).
	HolderGuessed bool `json:"-"`
	// IndividualID is the Individual Identification Number of the
	// source's entries (receiver.go); "" on a source not yet stored.
	IndividualID string `json:"-"`
	// ReceiverName is a C04's corrected name, nil when none.
	ReceiverName *string `json:"-"`
	// AddendaRefusedAt is when a C13 stopped the source's addenda, UTC.
	AddendaRefusedAt *time.Time `json:"-"`
	// PendingVerification is the instant credit a service bound to a
	// caller's transaction wrote the intent of and left to send
	// (DeliverVerification) once that transaction committed.
	PendingVerification *PendingVerification `json:"-"`
	// IntentUntil is the lease of the instant credit being sent to the
	// source (intent.go), nil when none is.
	IntentUntil *time.Time `json:"-"`
}

// Verification is the state of a source's latest verification. Its JSON
// form depends on the method (see MarshalJSON).
type Verification struct {
	Method              string    `json:"method"` // micro_deposits or instant
	Status              string    `json:"status"` // pending, succeeded, failed or expired
	InitiatedAt         time.Time `json:"initiated_at"`
	ExpectedArrivalDate string    `json:"expected_arrival_date"` // YYYY-MM-DD; micro-deposits
	ExpiresAt           time.Time `json:"expires_at"`
	AttemptsRemaining   int       `json:"attempts_remaining"`
	// ReturnCode is the ACH return code when a deposit came back (R03…).
	ReturnCode string `json:"return_code,omitempty"`
	// FallbackReason says why an "auto" request got micro-deposits.
	FallbackReason string `json:"fallback_reason,omitempty"`
	// Rail (rtp or fednow), ArrivedAt (nil until the credit arrived) and
	// FailureCode (the rail's rejection reason) belong to instant ones.
	Rail        string     `json:"rail,omitempty"`
	ArrivedAt   *time.Time `json:"arrived_at,omitempty"`
	FailureCode string     `json:"failure_code,omitempty"`
	// Seq numbers the source's verifications, 1 to MaxInitiations.
	Seq int `json:"-"`
}

// MarshalJSON writes the members of the verification's method: an instant
// one has rail, arrived_at and failure_code (null when none), rail_status,
// and no expected_arrival_date.
func (v Verification) MarshalJSON() ([]byte, error) {
	if v.Method != MethodInstant {
		type plain Verification
		return json.Marshal(plain(v))
	}
	var failure *string
	if v.FailureCode != "" {
		failure = &v.FailureCode
	}
	return json.Marshal(struct {
		Method            string     `json:"method"`
		Rail              string     `json:"rail"`
		Status            string     `json:"status"`
		InitiatedAt       time.Time  `json:"initiated_at"`
		ArrivedAt         *time.Time `json:"arrived_at"`
		ExpiresAt         time.Time  `json:"expires_at"`
		AttemptsRemaining int        `json:"attempts_remaining"`
		FailureCode       *string    `json:"failure_code"`
		RailStatus        string     `json:"rail_status"`
	}{v.Method, v.Rail, v.Status, v.InitiatedAt, v.ArrivedAt, v.ExpiresAt, v.AttemptsRemaining, failure, v.RailStatus()})
}

// Rail statuses of an instant verification's credit.
const (
	RailStatusAccepted = "accepted" // the rail accepted the credit (arrived_at)
	RailStatusRejected = "rejected" // the rail refused the account (failure_code)
	// RailStatusUnknown: the rail took the credit but its answer could not
	// be read; the credit may have arrived, and the code still verifies.
	RailStatusUnknown = "unknown"
)

// RailStatus is what the rail answered on an instant verification's
// credit ("" for micro-deposits). It follows from what the answer left: an
// accepted credit has arrived_at, a refused one failure_code, and one
// whose answer could not be read neither.
func (v Verification) RailStatus() string {
	switch {
	case v.Method != MethodInstant:
		return ""
	case v.ArrivedAt != nil:
		return RailStatusAccepted
	case v.FailureCode != "":
		return RailStatusRejected
	}
	return RailStatusUnknown
}

// AccountClaim is the registry entry that makes an account number unique
// within an environment, across merchants and customers.
type AccountClaim struct {
	Env         tenant.Environment
	Fingerprint []byte
	MerchantID  string
	SourceID    string
	CustomerID  string
	CreatedAt   time.Time
}

// Store is the persistence the funding service needs.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	event.Recorder
	audit.Recorder
	sourceVerifier

	CustomerExists(ctx context.Context, scope tenant.Scope, customerID string) (bool, error)
	// CustomerIdentity returns the name and email the ownership check
	// matches; errs.NotFound if the scope has no such customer.
	CustomerIdentity(ctx context.Context, scope tenant.Scope, customerID string) (Identity, error)
	// SetOwnership stores src's Ownership.
	SetOwnership(ctx context.Context, src Source) error
	// CreateSource stores src with its account-number claim and its events,
	// checking that the customer exists (ErrNoCustomer when not, and nothing
	// is written), when src.Facts is Unread, that the account has no
	// history (ErrAccountHistory when it has, and nothing is written), and
	// when src.HolderGuessed, that the guess is the customer's default
	// (ErrHolderGuess when not, and nothing is written). When
	// another source holds the number already, it writes nothing and
	// returns that holder with created = false.
	CreateSource(ctx context.Context, src Source, events []event.Event) (holder AccountClaim, created bool, err error)
	// CreateSourceKeyed is CreateSource as the whole of an idempotent
	// request, with the claim on req's key and resp stored under it, all
	// in one statement (see Service.CreateKeyed). When it answers neither
	// created nor a replay nor an error, it wrote nothing.
	CreateSourceKeyed(ctx context.Context, src Source, events []event.Event, req idempotency.Request, resp idempotency.Response) (created bool, replay *idempotency.Response, err error)
	// Idempotent runs fn at most once for req, in one transaction with
	// the claim on req's key and fn's response stored under it: fn gets
	// the store on that transaction and says whether to keep its response
	// (a response not kept rolls fn's writes back and stores nothing). A
	// live response stored under the key is returned as req.Replay of it
	// and fn does not run; a claim another request holds is
	// request_in_progress. Only the pool's store runs it.
	Idempotent(ctx context.Context, req idempotency.Request, fn func(tx Store) (idempotency.Response, bool)) (*idempotency.Response, error)
	// AccountFacts reads the history of an account fingerprint in env as
	// the check of merchantID's source sourceID counts it: other
	// merchants' customers' uses apart (OtherUses), its own merchant's
	// payments, everyone's links and the source's own verification left
	// out.
	AccountFacts(ctx context.Context, env tenant.Environment, accountFP []byte, merchantID, sourceID string) (AccountFacts, error)
	// RecordAccountFact stores one fact.
	RecordAccountFact(ctx context.Context, f AccountFact) error
	// StoreAccountCheck keeps c on a source until expires (nil: no time
	// changes it), unless the account's history changed since the source
	// was read with check sequence seq; then it writes nothing.
	StoreAccountCheck(ctx context.Context, scope tenant.Scope, id string, c AccountCheck, expires *time.Time, seq int64) error
	// AccountHolder returns the claim on a fingerprint; errs.NotFound if none.
	AccountHolder(ctx context.Context, env tenant.Environment, fingerprint []byte) (AccountClaim, error)
	ReleaseAccount(ctx context.Context, env tenant.Environment, fingerprint []byte, sourceID string) error

	// Source returns a source with its latest verification; errs.NotFound
	// if unknown. SourceForUpdate also locks the source row until the
	// transaction ends.
	Source(ctx context.Context, scope tenant.Scope, id string) (Source, error)
	// SourceAnswer is Source with only what the source's answer shows
	// (its JSON form): no sealed account, fingerprints, check sequence or
	// receiver fields.
	SourceAnswer(ctx context.Context, scope tenant.Scope, id string) (Source, error)
	SourceForUpdate(ctx context.Context, scope tenant.Scope, id string) (Source, error)
	// ListSources returns up to p.Limit+1 sources of a customer, newest first.
	ListSources(ctx context.Context, scope tenant.Scope, customerID string, removed Removed, p paging.Page) ([]Source, error)
	// SearchSources returns up to p.Limit+1 sources matching f, newest
	// first; errs.NotFound when p.StartingAfter is unknown.
	SearchSources(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Listed, error)
	// SourceLabels returns the label of each of the scope's sources among
	// ids (removed ones too); unknown ids are left out.
	SourceLabels(ctx context.Context, scope tenant.Scope, ids []string) ([]Label, error)
	// SetStatus, InsertMicroDeposit and UpdateMicroDeposit record the
	// events given in the same statement as the change.
	SetStatus(ctx context.Context, scope tenant.Scope, id string, status Status, at time.Time, events ...event.Event) error
	// MarkRemoved marks a source removed, with reason (nil when the
	// merchant removed it).
	MarkRemoved(ctx context.Context, scope tenant.Scope, id string, at time.Time, reason *string) error
	// SetBlock stores src's Block, UnblockedAt and Attestation.
	SetBlock(ctx context.Context, src Source) error
	SetNickname(ctx context.Context, scope tenant.Scope, id string, nickname *string) error
	// SetSourceMetadata stores a source's metadata.
	SetSourceMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error
	// SetHolderType stores a source's account holder type, locked by the
	// caller, unless the source has an active mandate: it reports whether
	// it stored it, deciding in the statement that writes.
	SetHolderType(ctx context.Context, scope tenant.Scope, id, holderType string) (bool, error)
	// InsertChange stores a change with the values it replaces; false when
	// the same entry's change is stored already. MoveAccount moves a
	// source's account-number claim to a new fingerprint (account_in_use
	// when another source holds it). CorrectSource stores a source's
	// corrected routing number, bank name, account number and type.
	InsertChange(ctx context.Context, c Change) (bool, error)
	MoveAccount(ctx context.Context, src Source, fingerprint []byte, at time.Time) error
	CorrectSource(ctx context.Context, src Source) error

	// LatestMicroDeposit returns the newest verification of a source;
	// errs.NotFound when none was initiated. LatestMicroDepositForUpdate
	// also locks it until the transaction ends.
	LatestMicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string) (MicroDeposit, error)
	LatestMicroDepositForUpdate(ctx context.Context, scope tenant.Scope, sourceID string) (MicroDeposit, error)
	// MicroDeposit locks one verification by its sequence number.
	MicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string, seq int) (MicroDeposit, error)
	InsertMicroDeposit(ctx context.Context, m MicroDeposit, events ...event.Event) error
	UpdateMicroDeposit(ctx context.Context, m MicroDeposit, events ...event.Event) error
	// ProcessorTokenUsed reports whether a processor token (by fingerprint)
	// was consumed in the environment.
	ProcessorTokenUsed(ctx context.Context, env tenant.Environment, fingerprint []byte) (bool, error)
	// ConsumeProcessorToken records a token as used by a source;
	// errs.Conflict when it was consumed already.
	ConsumeProcessorToken(ctx context.Context, scope tenant.Scope, fingerprint []byte, sourceID string, at time.Time) error

	// ExpiringMicroDeposits locks up to limit pending verifications whose
	// expiry is at or before now, skipping rows other processes hold.
	ExpiringMicroDeposits(ctx context.Context, now time.Time, limit int) ([]MicroDeposit, error)

	// InsertVerificationIntent stores the intent of an instant
	// verification credit (errs.Conflict when the source has one);
	// VerificationIntent locks a source's (errs.NotFound: none);
	// DeleteVerificationIntent removes it by its message id (errs.NotFound:
	// gone); StaleVerificationIntents lists up to limit whose lease ran out
	// by now, unlocked.
	InsertVerificationIntent(ctx context.Context, in VerificationIntent) error
	VerificationIntent(ctx context.Context, scope tenant.Scope, sourceID string) (VerificationIntent, error)
	DeleteVerificationIntent(ctx context.Context, in VerificationIntent) error
	StaleVerificationIntents(ctx context.Context, now time.Time, limit int) ([]VerificationIntent, error)
}

// Banks validates routing numbers and names their banks (routing.Directory).
type Banks interface {
	Check(routingNumber string) (bankName string, err error)
	// SandboxOnly reports whether the routing number is one of the sandbox's
	// test numbers, which production refuses.
	SandboxOnly(routingNumber string) bool
}

// Vault seals account numbers and amounts and fingerprints account numbers
// (vault.Vault).
type Vault interface {
	Seal(plaintext, aad []byte) (keyID string, sealed []byte)
	Open(keyID string, sealed, aad []byte) ([]byte, error)
	SealPadded(plaintext, aad []byte, block int) (keyID string, sealed []byte)
	OpenPadded(keyID string, sealed, aad []byte) ([]byte, error)
	Fingerprint(label, value string) []byte
}

// ProviderAccount is the bank account behind a processor token, as the
// bank-linking provider reports it.
type ProviderAccount struct {
	RoutingNumber string
	AccountNumber string
	Type          string // depository, credit, …
	Subtype       string // checking, savings, credit card, …
	Name          string // the account's name at the bank, used as nickname
}

// Provider reads processor tokens (provider.Client). Its errors are
// invalid_processor_token, processor_not_enabled or provider_unavailable.
type Provider interface {
	Account(ctx context.Context, processorToken string) (ProviderAccount, error)
	// OwnerScores scores a customer's legal name and email against the
	// owner of the token's account.
	OwnerScores(ctx context.Context, processorToken, legalName, email string) (OwnerScores, error)
}

// Service applies the funding-source rules.
type Service struct {
	store    Store
	banks    Banks
	vault    Vault
	provider Provider
	now      func(context.Context) time.Time
	draw     func() int                    // one micro-deposit amount in cents
	reach    Reach                         // nil: no bank is reachable on a rail
	rails    map[tenant.Environment]Rail   // per environment; none: instant unavailable
	arrival  func(time.Time) calendar.Date // micro-deposits' expected arrival (arrival.go); nil: the default
	inTx     bool                          // bound to a caller's transaction (On): sends nothing itself
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store, c.inTx = tx, true
	return &c
}

// NewService returns a Service.
func NewService(store Store, banks Banks, vault Vault, now func() time.Time) *Service {
	return &Service{store: store, banks: banks, vault: vault, now: testclock.Scope(now), draw: randomCents}
}

// WithProvider sets the bank-linking provider of the processor-token path.
func (s *Service) WithProvider(p Provider) *Service {
	s.provider = p
	return s
}

// eventData is a source as event data, with the event's status (which is
// PendingVerified for verification_pending).
func eventData(s Source, status Status) any {
	return struct {
		Source
		Status Status `json:"status"`
	}{s, status}
}

func (s *Service) record(ctx context.Context, tx Store, src Source, typ string, status Status) error {
	return tx.RecordEvent(ctx, s.event(ctx, src, typ, status))
}

// event is an event about src, for a store write that records it.
func (s *Service) event(ctx context.Context, src Source, typ string, status Status) event.Event {
	if src.AccountCheck == nil {
		src = s.checked(ctx, src)
	}
	return event.New(src.Scope, typ, eventData(src, status), s.now(ctx))
}
