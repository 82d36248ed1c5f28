package postgres

import (
	"cmp"
	"context"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
)

const customerExists = `
SELECT EXISTS (SELECT 1 FROM customers WHERE ` + byID + `)`

const customerIdentity = `
SELECT first_name, last_name, email, business_name FROM customers WHERE ` + byID

// CustomerIdentity returns the name and email the ownership check
// matches; errs.NotFound if the scope has no such customer.
func (q queries) CustomerIdentity(ctx context.Context, scope tenant.Scope, customerID string) (funding.Identity, error) {
	var r struct {
		First    string  `db:"first_name"`
		Last     string  `db:"last_name"`
		Email    string  `db:"email"`
		Business *string `db:"business_name"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, customerIdentity, scope.MerchantID, scope.Env, customerID); err != nil {
		return funding.Identity{}, translate(err)
	}
	return funding.IdentityOf(r.First, r.Last, r.Email, r.Business), nil
}

const setOwnership = `
UPDATE funding_sources SET ownership_result = $4, ownership_name_score = $5, ownership_email_score = $6,
    ownership_checked_at = $7
WHERE ` + byID

// SetOwnership stores src's ownership check.
func (q queries) SetOwnership(ctx context.Context, src funding.Source) error {
	o := src.Ownership
	if o == nil {
		return nil
	}
	res, err := q.ex.ExecContext(ctx, setOwnership, src.Scope.MerchantID, src.Scope.Env, src.ID,
		o.Result, o.NameScore, o.EmailScore, o.CheckedAt)
	return oneRow(res, err, errs.NotFound)
}

// CustomerExists reports whether the scope has the customer.
func (q queries) CustomerExists(ctx context.Context, scope tenant.Scope, customerID string) (bool, error) {
	var ok bool
	err := sqlx.GetContext(ctx, q.ex, &ok, customerExists, scope.MerchantID, scope.Env, customerID)
	return ok, translate(err)
}

type claimRow struct {
	Environment string    `db:"environment"`
	Fingerprint []byte    `db:"fingerprint"`
	MerchantID  string    `db:"merchant_id"`
	SourceID    string    `db:"funding_source_id"`
	CustomerID  string    `db:"customer_id"`
	CreatedAt   time.Time `db:"created_at"`
}

func (r claimRow) domain() funding.AccountClaim {
	return funding.AccountClaim{Env: tenant.Environment(r.Environment), Fingerprint: r.Fingerprint,
		MerchantID: r.MerchantID, SourceID: r.SourceID, CustomerID: r.CustomerID, CreatedAt: r.CreatedAt.UTC()}
}

const selectAccountHolder = `
SELECT environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at
FROM account_numbers WHERE environment = $1 AND fingerprint = $2`

// AccountHolder returns the registry entry of a fingerprint.
func (q queries) AccountHolder(ctx context.Context, env tenant.Environment, fp []byte) (funding.AccountClaim, error) {
	var r claimRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectAccountHolder, env, fp); err != nil {
		return funding.AccountClaim{}, translate(err)
	}
	return r.domain(), nil
}

const releaseAccount = `
DELETE FROM account_numbers WHERE environment = $1 AND fingerprint = $2 AND funding_source_id = $3`

// ReleaseAccount frees an account number held by sourceID.
func (q queries) ReleaseAccount(ctx context.Context, env tenant.Environment, fp []byte, sourceID string) error {
	res, err := q.ex.ExecContext(ctx, releaseAccount, env, fp, sourceID)
	return oneRow(res, err, errs.NotFound)
}

type sourceRow struct {
	MerchantID    string            `db:"merchant_id"`
	Environment   string            `db:"environment"`
	ID            string            `db:"id"`
	CustomerID    string            `db:"customer_id"`
	Status        string            `db:"status"`
	RoutingNumber string            `db:"routing_number"`
	BankName      *string           `db:"bank_name"`
	LastFour      string            `db:"last_four"`
	AccountType   string            `db:"account_type"`
	Nickname      *string           `db:"nickname"`
	KeyID         string            `db:"account_key_id"`
	Ciphertext    []byte            `db:"account_ciphertext"`
	Fingerprint   []byte            `db:"fingerprint"`
	CreatedAt     time.Time         `db:"created_at"`
	RemovedAt     *time.Time        `db:"removed_at"`
	RemovedReason *string           `db:"removed_reason"`
	BlockCode     *string           `db:"block_code"`
	BlockReason   *string           `db:"block_reason"`
	BlockedAt     *time.Time        `db:"blocked_at"`
	UnblockedAt   *time.Time        `db:"unblocked_at"`
	Attestation   *string           `db:"unblock_attestation"`
	AccountFP     []byte            `db:"account_fp"`
	OwnResult     *string           `db:"ownership_result"`
	OwnName       *int              `db:"ownership_name_score"`
	OwnEmail      *int              `db:"ownership_email_score"`
	OwnCheckedAt  *time.Time        `db:"ownership_checked_at"`
	CheckResult   *string           `db:"check_result"`
	CheckReasons  pq.StringArray    `db:"check_reasons"`
	CheckExpires  *time.Time        `db:"check_expires_at"`
	CheckSeq      int64             `db:"check_seq"`
	HolderType    string            `db:"account_holder_type"`
	IndividualID  string            `db:"individual_id"`
	ReceiverName  *string           `db:"receiver_name"`
	AddendaRefAt  *time.Time        `db:"addenda_refused_at"`
	Metadata      metadata.Metadata `db:"metadata"`
	IntentUntil   *time.Time        `db:"intent_lease_until"`
	depositCols
	factCols
}

// depositCols are the latest verification's columns, NULL when none.
type depositCols struct {
	Seq               *int       `db:"md_seq"`
	Status            *string    `db:"md_status"`
	InitiatedAt       *time.Time `db:"md_initiated_at"`
	ExpectedArrival   *time.Time `db:"md_expected_arrival_date"`
	ExpiresAt         *time.Time `db:"md_expires_at"`
	AttemptsRemaining *int       `db:"md_attempts_remaining"`
	ReturnCode        *string    `db:"md_return_code"`
	Method            *string    `db:"md_method"`
	Rail              *string    `db:"md_rail"`
	ArrivedAt         *time.Time `db:"md_arrived_at"`
	FailureCode       *string    `db:"md_failure_code"`
	FallbackReason    *string    `db:"md_fallback_reason"`
}

func (r sourceRow) domain() funding.Source {
	s := funding.Source{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, CustomerID: r.CustomerID, Status: funding.Status(r.Status), BankName: r.BankName,
		LastFour: r.LastFour, AccountType: r.AccountType, Nickname: r.Nickname, CreatedAt: r.CreatedAt.UTC(),
		Removed: r.RemovedAt != nil, RoutingNumber: r.RoutingNumber,
		Account: funding.Sealed{KeyID: r.KeyID, Data: r.Ciphertext}, Fingerprint: r.Fingerprint,
		RemovedAt: utcPtr(r.RemovedAt), RemovedReason: r.RemovedReason, UnblockedAt: utcPtr(r.UnblockedAt), Metadata: r.Metadata,
		Attestation: r.Attestation, AccountFP: r.AccountFP, Facts: r.factCols.domain(),
		AccountHolderType: r.HolderType, IndividualID: r.IndividualID, ReceiverName: r.ReceiverName,
		AddendaRefusedAt: utcPtr(r.AddendaRefAt), IntentUntil: utcPtr(r.IntentUntil),
	}
	s.Stored = funding.StoredCheck{Seq: r.CheckSeq, Expires: utcPtr(r.CheckExpires), FactsRead: r.factCols.Read != nil && *r.factCols.Read}
	if r.CheckResult != nil {
		s.Stored.Check = &funding.AccountCheck{Result: *r.CheckResult, Reasons: append([]string{}, r.CheckReasons...)}
	}
	if r.BlockCode != nil && r.BlockedAt != nil {
		s.Block = &funding.Block{Code: *r.BlockCode, Reason: deref(r.BlockReason), BlockedAt: r.BlockedAt.UTC()}
	}
	if r.OwnResult != nil && r.OwnCheckedAt != nil {
		s.Ownership = &funding.Ownership{Result: *r.OwnResult, NameScore: r.OwnName, EmailScore: r.OwnEmail,
			CheckedAt: r.OwnCheckedAt.UTC()}
	}
	if r.Seq != nil {
		s.Verification = funding.MicroDeposit{
			Seq: *r.Seq, Status: *r.depositCols.Status, InitiatedAt: r.InitiatedAt.UTC(), ExpectedArrival: *r.ExpectedArrival,
			ExpiresAt: r.ExpiresAt.UTC(), AttemptsRemaining: *r.AttemptsRemaining, ReturnCode: deref(r.depositCols.ReturnCode),
			Method: deref(r.Method), Rail: deref(r.Rail), ArrivedAt: utcPtr(r.ArrivedAt), FailureCode: deref(r.FailureCode),
			FallbackReason: deref(r.FallbackReason),
		}.Verification()
	}
	return s
}

// sourceFields are a source row's own columns: with its current
// verification (which a trigger on micro_deposits keeps on the source's
// row, migration 00016) and its kept account check.
const sourceFields = `
SELECT f.merchant_id, f.environment, f.id, f.customer_id, f.status, f.routing_number, f.bank_name, f.last_four,
       f.account_type, f.nickname, f.account_key_id, f.account_ciphertext, f.fingerprint, f.created_at, f.removed_at,
       f.md_seq, f.md_status, f.md_initiated_at, f.md_expected_arrival_date, f.md_expires_at,
       f.md_attempts_remaining, f.md_return_code, f.md_method, f.md_rail, f.md_arrived_at, f.md_failure_code,
       f.md_fallback_reason,
       f.removed_reason, f.block_code, f.block_reason, f.blocked_at, f.unblocked_at, f.unblock_attestation,
       f.account_fp, f.ownership_result, f.ownership_name_score, f.ownership_email_score, f.ownership_checked_at,
       f.check_result, f.check_reasons, f.check_expires_at, f.check_seq,
       f.account_holder_type, f.individual_id, f.receiver_name, f.addenda_refused_at, f.metadata,
       f.intent_lease_until`

// sourceColumns are sourceFields with, from the lateral ck that the
// statement adds, the account's history when read.
const sourceColumns = sourceFields + `,
       ck.ck_read, ck.ck_kinds, ck.ck_codes, ck.ck_at, ck.ck_verified
FROM funding_sources f`

// sourceSelect reads sources for a list's answer: the history only for a
// source whose kept check does not hold, in the same statement, so a page
// costs one round trip whatever its sources' checks.
const sourceSelect = sourceColumns + `
LEFT JOIN LATERAL (` + storedFactsOfF + `) ck ON true`

// selectSource reads one source for an answer: its row alone. A join
// with the history, even one that never opens account_facts, starts and
// runs its grouping and sorting nodes on every read; the service reads
// the history itself, one round trip more, in the rare case that the kept
// check does not hold (funding.Service.current).
const selectSource = sourceFields + `
FROM funding_sources f
WHERE f.` + byID

// selectSourceForUpdate reads the source's history whatever its kept
// check: the write may record a fact and answer with it.
const selectSourceForUpdate = sourceColumns + `
LEFT JOIN LATERAL (` + allFactsOfF + `) ck ON true
WHERE f.` + byID + `
FOR UPDATE OF f`

// Source returns one source with its latest verification. It is the
// API's GET, so it scans into fieldsOfSource's fixed pointers: no mapping
// of columns to fields by name and reflection on every read.
func (q queries) Source(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	var r sourceRow
	if err := q.ex.QueryRowxContext(ctx, selectSource, scope.MerchantID, scope.Env, id).Scan(r.fieldsOfSource()...); err != nil {
		return funding.Source{}, translate(err)
	}
	return r.domain(), nil
}

// fieldsOfSource are r's fields in the order of sourceFields' columns
// (TestTheSourceScanMatchesItsColumns holds the two together).
func (r *sourceRow) fieldsOfSource() []any {
	d := &r.depositCols
	return []any{&r.MerchantID, &r.Environment, &r.ID, &r.CustomerID, &r.Status, &r.RoutingNumber, &r.BankName, &r.LastFour,
		&r.AccountType, &r.Nickname, &r.KeyID, &r.Ciphertext, &r.Fingerprint, &r.CreatedAt, &r.RemovedAt,
		&d.Seq, &d.Status, &d.InitiatedAt, &d.ExpectedArrival, &d.ExpiresAt,
		&d.AttemptsRemaining, &d.ReturnCode, &d.Method, &d.Rail, &d.ArrivedAt, &d.FailureCode,
		&d.FallbackReason,
		&r.RemovedReason, &r.BlockCode, &r.BlockReason, &r.BlockedAt, &r.UnblockedAt, &r.Attestation,
		&r.AccountFP, &r.OwnResult, &r.OwnName, &r.OwnEmail, &r.OwnCheckedAt,
		&r.CheckResult, &r.CheckReasons, &r.CheckExpires, &r.CheckSeq,
		&r.HolderType, &r.IndividualID, &r.ReceiverName, &r.AddendaRefAt, &r.Metadata,
		&r.IntentUntil}
}

// selectSourceAnswer reads what a source's answer shows and no more: the
// sealed account, its fingerprints, the check's sequence and the entries'
// receiver fields stay on disk. The GET is the hottest read, and
// PostgreSQL starts and prints every column of a statement on every
// execution, whether it holds a value or NULL.
const selectSourceAnswer = `
SELECT f.customer_id, f.status, f.bank_name, f.last_four, f.account_type, f.account_holder_type, f.nickname,
       f.created_at, f.removed_at, f.removed_reason,
       f.md_seq, f.md_status, f.md_initiated_at, f.md_expected_arrival_date, f.md_expires_at,
       f.md_attempts_remaining, f.md_return_code, f.md_method, f.md_rail, f.md_arrived_at, f.md_failure_code,
       f.md_fallback_reason,
       f.block_code, f.block_reason, f.blocked_at,
       f.ownership_result, f.ownership_name_score, f.ownership_email_score, f.ownership_checked_at,
       f.check_result, f.check_reasons, f.check_expires_at, f.metadata
FROM funding_sources f
WHERE f.` + byID

// SourceAnswer returns what one source's answer shows (funding.Store).
func (q queries) SourceAnswer(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	r := sourceRow{MerchantID: scope.MerchantID, Environment: string(scope.Env), ID: id}
	if err := q.ex.QueryRowxContext(ctx, selectSourceAnswer, scope.MerchantID, scope.Env, id).Scan(r.fieldsOfAnswer()...); err != nil {
		return funding.Source{}, translate(err)
	}
	return r.domain(), nil
}

// fieldsOfAnswer are r's fields in the order of selectSourceAnswer's
// columns (TestTheSourceScanMatchesItsColumns holds the two together).
func (r *sourceRow) fieldsOfAnswer() []any {
	d := &r.depositCols
	return []any{&r.CustomerID, &r.Status, &r.BankName, &r.LastFour, &r.AccountType, &r.HolderType, &r.Nickname,
		&r.CreatedAt, &r.RemovedAt, &r.RemovedReason,
		&d.Seq, &d.Status, &d.InitiatedAt, &d.ExpectedArrival, &d.ExpiresAt,
		&d.AttemptsRemaining, &d.ReturnCode, &d.Method, &d.Rail, &d.ArrivedAt, &d.FailureCode,
		&d.FallbackReason,
		&r.BlockCode, &r.BlockReason, &r.BlockedAt,
		&r.OwnResult, &r.OwnName, &r.OwnEmail, &r.OwnCheckedAt,
		&r.CheckResult, &r.CheckReasons, &r.CheckExpires, &r.Metadata}
}

// SourceForUpdate is Source with the source's row locked until the
// transaction ends.
func (q queries) SourceForUpdate(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	return getOne[sourceRow](ctx, q.ex, selectSourceForUpdate, scope.MerchantID, scope.Env, id)
}

const listSources = sourceSelect + `
WHERE f.merchant_id = $1 AND f.environment = $2 AND (f.created_at, f.id) < ($3, $4)
  AND f.customer_id = $6 AND ($7 OR f.removed_at IS NULL)
ORDER BY f.created_at DESC, f.id DESC
LIMIT $5`

// ListSources returns up to p.Limit+1 sources of a customer, newest first.
func (q queries) ListSources(ctx context.Context, scope tenant.Scope, customerID string, removed funding.Removed, p paging.Page) ([]funding.Source, error) {
	var rows []sourceRow
	if err := q.list(ctx, &rows, listSources, "funding_sources", scope, p, customerID, bool(removed)); err != nil {
		return nil, err
	}
	return mapRows(rows, sourceRow.domain), nil
}

type listedRow struct {
	sourceRow
	FirstName string  `db:"first_name"`
	LastName  string  `db:"last_name"`
	Email     string  `db:"email"`
	TestClock *string `db:"customer_test_clock"`
}

func (r listedRow) domain() funding.Listed {
	return funding.Listed{Source: r.sourceRow.domain(), CustomerName: r.FirstName + " " + r.LastName, CustomerEmail: r.Email,
		CustomerTestClock: deref(r.TestClock)}
}

// searchSources: $6 the search text, $7 its ILIKE pattern, $8 the status filter.
const searchSources = `
SELECT s.*, c.first_name, c.last_name, c.email, c.test_clock_id AS customer_test_clock
FROM (` + sourceSelect + `) s
JOIN customers c ON c.merchant_id = s.merchant_id AND c.environment = s.environment AND c.id = s.customer_id
WHERE s.merchant_id = $1 AND s.environment = $2 AND (s.created_at, s.id) < ($3, $4)
  AND ($6 = '' OR s.id = $6 OR s.customer_id = $6 OR s.last_four = $6
       OR c.email ILIKE $7 OR (c.first_name || ' ' || c.last_name) ILIKE $7 OR s.nickname ILIKE $7)
  AND CASE $8
        WHEN 'removed' THEN s.removed_at IS NOT NULL
        WHEN 'verified' THEN s.removed_at IS NULL AND s.status = 'Verified'
        WHEN 'unverified' THEN s.removed_at IS NULL AND s.status = 'Unverified'
        WHEN 'pending' THEN s.removed_at IS NULL AND s.status = 'Unverified' AND s.md_status = 'pending'
        ELSE s.removed_at IS NULL
      END
ORDER BY s.created_at DESC, s.id DESC
LIMIT $5`

// SearchSources returns up to p.Limit+1 sources of the scope matching f,
// newest first, with their customers' names and emails.
func (q queries) SearchSources(ctx context.Context, scope tenant.Scope, f funding.Filter, p paging.Page) ([]funding.Listed, error) {
	var rows []listedRow
	if err := q.list(ctx, &rows, searchSources, "funding_sources", scope, p, f.Search, contains(f.Search), f.Status); err != nil {
		return nil, err
	}
	return mapRows(rows, listedRow.domain), nil
}

// sourceLabels: $3 the source ids; by primary key, one page of a list.
const sourceLabels = `
SELECT f.id, f.customer_id, c.first_name, c.last_name, coalesce(f.bank_name, '') AS bank_name, f.account_type, f.last_four,
       coalesce(c.screening->>'status', '') AS screening_status, coalesce(c.test_clock_id, '') AS test_clock_id
FROM funding_sources f
JOIN customers c ON c.merchant_id = f.merchant_id AND c.environment = f.environment AND c.id = f.customer_id
WHERE f.merchant_id = $1 AND f.environment = $2 AND f.id = ANY ($3::text[])`

// SourceLabels returns the labels of the scope's sources among ids.
func (q queries) SourceLabels(ctx context.Context, scope tenant.Scope, ids []string) ([]funding.Label, error) {
	var rows []struct {
		ID          string `db:"id"`
		CustomerID  string `db:"customer_id"`
		FirstName   string `db:"first_name"`
		LastName    string `db:"last_name"`
		BankName    string `db:"bank_name"`
		AccountType string `db:"account_type"`
		LastFour    string `db:"last_four"`
		Screening   string `db:"screening_status"`
		TestClock   string `db:"test_clock_id"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, sourceLabels, scope.MerchantID, scope.Env, pq.StringArray(ids)); err != nil {
		return nil, translate(err)
	}
	out := make([]funding.Label, len(rows))
	for i, r := range rows {
		out[i] = funding.Label{SourceID: r.ID, CustomerID: r.CustomerID, CustomerName: r.FirstName + " " + r.LastName,
			BankName: r.BankName, AccountType: r.AccountType, LastFour: r.LastFour, Screening: r.Screening, TestClock: r.TestClock}
	}
	return out, nil
}

const setSourceStatus = `
UPDATE funding_sources SET status = $4, verified_at = CASE WHEN $4 = 'Verified' THEN $5::timestamptz END
WHERE ` + byID

// SetStatus changes a source's status.
func (q queries) SetStatus(ctx context.Context, scope tenant.Scope, id string, status funding.Status, at time.Time, evs ...event.Event) error {
	n, err := q.writeRecording(ctx, setSourceStatus, setSourceStatusRecording, []any{scope.MerchantID, scope.Env, id, status, at}, evs)
	return changed(n, err)
}

var setSourceStatusRecording = recording(setSourceStatus, 5)

const markSourceRemoved = `
UPDATE funding_sources SET removed_at = $4, removed_reason = $5
WHERE ` + byID + ` AND removed_at IS NULL`

// MarkRemoved marks a source removed, with why when a return removed it.
func (q queries) MarkRemoved(ctx context.Context, scope tenant.Scope, id string, at time.Time, reason *string) error {
	res, err := q.ex.ExecContext(ctx, markSourceRemoved, scope.MerchantID, scope.Env, id, at, reason)
	return oneRow(res, err, errs.NotFound)
}

const setSourceBlock = `
UPDATE funding_sources SET block_code = $4, block_reason = $5, blocked_at = $6, unblocked_at = $7, unblock_attestation = $8
WHERE ` + byID

// SetBlock stores a source's block and its last unblock.
func (q queries) SetBlock(ctx context.Context, src funding.Source) error {
	var code, reason *string
	var at *time.Time
	if b := src.Block; b != nil {
		code, reason, at = &b.Code, &b.Reason, &b.BlockedAt
	}
	res, err := q.ex.ExecContext(ctx, setSourceBlock, src.Scope.MerchantID, src.Scope.Env, src.ID, code, reason, at,
		src.UnblockedAt, src.Attestation)
	return oneRow(res, err, errs.NotFound)
}

type depositRow struct {
	MerchantID        string     `db:"merchant_id"`
	Environment       string     `db:"environment"`
	SourceID          string     `db:"funding_source_id"`
	Seq               int        `db:"seq"`
	KeyID             string     `db:"amounts_key_id"`
	Ciphertext        []byte     `db:"amounts_ciphertext"`
	Status            string     `db:"status"`
	InitiatedAt       time.Time  `db:"initiated_at"`
	ExpectedArrival   time.Time  `db:"expected_arrival_date"`
	ExpiresAt         time.Time  `db:"expires_at"`
	AttemptsRemaining int        `db:"attempts_remaining"`
	FinishedAt        *time.Time `db:"finished_at"`
	ReturnCode        *string    `db:"return_code"`
	Method            string     `db:"method"`
	Rail              *string    `db:"rail"`
	RailMessageID     *string    `db:"rail_message_id"`
	ArrivedAt         *time.Time `db:"arrived_at"`
	FailureCode       *string    `db:"failure_code"`
	FallbackReason    *string    `db:"fallback_reason"`
}

func (r depositRow) domain() funding.MicroDeposit {
	m := funding.MicroDeposit{
		Scope:    tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		SourceID: r.SourceID, Seq: r.Seq, Amounts: funding.Sealed{KeyID: r.KeyID, Data: r.Ciphertext},
		Status: r.Status, InitiatedAt: r.InitiatedAt.UTC(), ExpectedArrival: r.ExpectedArrival,
		ExpiresAt: r.ExpiresAt.UTC(), AttemptsRemaining: r.AttemptsRemaining, FinishedAt: utcPtr(r.FinishedAt),
		Method: r.Method, Rail: deref(r.Rail), RailMessageID: deref(r.RailMessageID), ArrivedAt: utcPtr(r.ArrivedAt),
		FailureCode: deref(r.FailureCode), FallbackReason: deref(r.FallbackReason),
	}
	if r.ReturnCode != nil {
		m.ReturnCode = *r.ReturnCode
	}
	return m
}

const depositColumns = `merchant_id, environment, funding_source_id, seq, amounts_key_id, amounts_ciphertext, status,
    initiated_at, expected_arrival_date, expires_at, attempts_remaining, finished_at, return_code,
    method, rail, rail_message_id, arrived_at, failure_code, fallback_reason`

const selectLatestDeposit = `
SELECT ` + depositColumns + `
FROM micro_deposits
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3
ORDER BY seq DESC LIMIT 1`

// LatestMicroDeposit returns a source's newest verification.
func (q queries) LatestMicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string) (funding.MicroDeposit, error) {
	return getOne[depositRow](ctx, q.ex, selectLatestDeposit, scope.MerchantID, scope.Env, sourceID)
}

// LatestMicroDepositForUpdate is LatestMicroDeposit with the row locked
// until the transaction ends.
func (q queries) LatestMicroDepositForUpdate(ctx context.Context, scope tenant.Scope, sourceID string) (funding.MicroDeposit, error) {
	return getOne[depositRow](ctx, q.ex, selectLatestDeposit+` FOR UPDATE`, scope.MerchantID, scope.Env, sourceID)
}

const selectDepositBySeq = `
SELECT ` + depositColumns + `
FROM micro_deposits
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND seq = $4
FOR UPDATE`

// MicroDeposit locks one verification of a source by its sequence number.
func (q queries) MicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string, seq int) (funding.MicroDeposit, error) {
	var r depositRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectDepositBySeq, scope.MerchantID, scope.Env, sourceID, seq); err != nil {
		return funding.MicroDeposit{}, translate(err)
	}
	return r.domain(), nil
}

const insertDeposit = `
INSERT INTO micro_deposits (` + depositColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULLIF($13, ''),
        $14, NULLIF($15, ''), NULLIF($16, ''), $17, NULLIF($18, ''), NULLIF($19, ''))`

var insertDepositRecording = recording(insertDeposit, 19)

// InsertMicroDeposit stores a new verification, with evs in the same
// statement.
func (q queries) InsertMicroDeposit(ctx context.Context, m funding.MicroDeposit, evs ...event.Event) error {
	_, err := q.writeRecording(ctx, insertDeposit, insertDepositRecording, []any{m.Scope.MerchantID, m.Scope.Env, m.SourceID, m.Seq,
		m.Amounts.KeyID, m.Amounts.Data, m.Status, m.InitiatedAt, m.ExpectedArrival.Format(time.DateOnly), m.ExpiresAt,
		m.AttemptsRemaining, m.FinishedAt, m.ReturnCode, cmp.Or(m.Method, funding.MethodMicroDeposits), m.Rail, m.RailMessageID,
		m.ArrivedAt, m.FailureCode, m.FallbackReason}, evs)
	return err
}

const updateDeposit = `
UPDATE micro_deposits SET status = $5, attempts_remaining = $6, finished_at = $7, return_code = NULLIF($8, ''), expires_at = $9
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND seq = $4`

var updateDepositRecording = recording(updateDeposit, 9)

// UpdateMicroDeposit saves a verification's state, with evs in the same
// statement.
func (q queries) UpdateMicroDeposit(ctx context.Context, m funding.MicroDeposit, evs ...event.Event) error {
	n, err := q.writeRecording(ctx, updateDeposit, updateDepositRecording, []any{m.Scope.MerchantID, m.Scope.Env, m.SourceID, m.Seq,
		m.Status, m.AttemptsRemaining, m.FinishedAt, m.ReturnCode, m.ExpiresAt}, evs)
	return changed(n, err)
}

var selectExpiringDeposits = `
SELECT ` + depositColumns + `
FROM micro_deposits m
WHERE status = 'pending' AND expires_at <= $1
  AND ` + sourceClockRows("m", 3) + `
ORDER BY expires_at
LIMIT $2
FOR UPDATE SKIP LOCKED`

// ExpiringMicroDeposits locks pending verifications due to expire.
func (q queries) ExpiringMicroDeposits(ctx context.Context, now time.Time, limit int) ([]funding.MicroDeposit, error) {
	var rows []depositRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, selectExpiringDeposits, now, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, depositRow.domain), nil
}

// SetNickname stores a source's nickname (nil for none).
func (q queries) SetNickname(ctx context.Context, scope tenant.Scope, id string, nickname *string) error {
	res, err := q.ex.ExecContext(ctx, `UPDATE funding_sources SET nickname = $4 WHERE `+byID,
		scope.MerchantID, scope.Env, id, nickname)
	return oneRow(res, err, errs.NotFound)
}

// setHolderType changes a source's account holder type when no mandate
// of the source is active, and reports whether it did. The caller holds
// the source's row lock, which a mandate's creation share-locks: this
// statement's snapshot, taken after the lock, sees every mandate.
const setHolderType = `
WITH m AS (
  SELECT EXISTS (SELECT 1 FROM mandates m
                 WHERE m.merchant_id = $1 AND m.environment = $2 AND m.funding_source_id = $3
                   AND m.status = 'active') AS active
), upd AS (
  UPDATE funding_sources SET account_holder_type = $4
  WHERE ` + byID + ` AND NOT (SELECT active FROM m)
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM upd)`

// SetHolderType stores a source's account holder type unless the source
// has an active mandate; false when it has.
func (q queries) SetHolderType(ctx context.Context, scope tenant.Scope, id, holderType string) (bool, error) {
	var changed bool
	err := sqlx.GetContext(ctx, q.ex, &changed, setHolderType, scope.MerchantID, scope.Env, id, holderType)
	return changed, translate(err)
}

type intentRow struct {
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	SourceID    string    `db:"funding_source_id"`
	Seq         int       `db:"seq"`
	Method      string    `db:"method"`
	Rail        string    `db:"rail"`
	MessageID   string    `db:"rail_message_id"`
	KeyID       string    `db:"code_key_id"`
	Ciphertext  []byte    `db:"code_ciphertext"`
	InitiatedAt time.Time `db:"initiated_at"`
	LeaseUntil  time.Time `db:"lease_until"`
}

func (r intentRow) domain() funding.VerificationIntent {
	return funding.VerificationIntent{
		Scope:    tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		SourceID: r.SourceID, Seq: r.Seq, Method: r.Method, Rail: r.Rail, MessageID: r.MessageID,
		Code: funding.Sealed{KeyID: r.KeyID, Data: r.Ciphertext}, InitiatedAt: r.InitiatedAt.UTC(), LeaseUntil: r.LeaseUntil.UTC(),
	}
}

const intentColumns = `merchant_id, environment, funding_source_id, seq, method, rail, rail_message_id,
    code_key_id, code_ciphertext, initiated_at, lease_until`

// InsertVerificationIntent stores the intent of an instant verification
// credit, and its lease on the source's row; errs.Conflict when the
// source has one already.
func (q queries) InsertVerificationIntent(ctx context.Context, in funding.VerificationIntent) error {
	res, err := q.ex.ExecContext(ctx, `WITH i AS (
  INSERT INTO verification_intents (`+intentColumns+`)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  ON CONFLICT (merchant_id, environment, funding_source_id) DO NOTHING
  RETURNING 1
)
UPDATE funding_sources SET intent_lease_until = $11
WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND EXISTS (SELECT 1 FROM i)`,
		in.Scope.MerchantID, in.Scope.Env, in.SourceID, in.Seq, in.Method, in.Rail, in.MessageID,
		in.Code.KeyID, in.Code.Data, in.InitiatedAt, in.LeaseUntil)
	return oneRow(res, err, errs.Conflict)
}

// VerificationIntent locks the intent of a source's instant verification
// credit; errs.NotFound when it has none.
func (q queries) VerificationIntent(ctx context.Context, scope tenant.Scope, sourceID string) (funding.VerificationIntent, error) {
	return getOne[intentRow](ctx, q.ex, `SELECT `+intentColumns+` FROM verification_intents
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 FOR UPDATE`, scope.MerchantID, scope.Env, sourceID)
}

// DeleteVerificationIntent removes the intent with a message id, and its
// lease from the source's row; errs.NotFound when it is gone (another
// process resolved it).
func (q queries) DeleteVerificationIntent(ctx context.Context, in funding.VerificationIntent) error {
	res, err := q.ex.ExecContext(ctx, `WITH d AS (
  DELETE FROM verification_intents
  WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND rail_message_id = $4
  RETURNING 1
)
UPDATE funding_sources SET intent_lease_until = NULL
WHERE merchant_id = $1 AND environment = $2 AND id = $3 AND EXISTS (SELECT 1 FROM d)`,
		in.Scope.MerchantID, in.Scope.Env, in.SourceID, in.MessageID)
	return oneRow(res, err, errs.NotFound)
}

// StaleVerificationIntents lists up to limit intents whose lease ran out
// by now, without locking them (the caller locks the source first).
func (q queries) StaleVerificationIntents(ctx context.Context, now time.Time, limit int) ([]funding.VerificationIntent, error) {
	var rows []intentRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, `SELECT `+intentColumns+` FROM verification_intents
WHERE lease_until <= $1 ORDER BY lease_until LIMIT $2`, now, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, intentRow.domain), nil
}
