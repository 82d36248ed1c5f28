package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
)

const customerExists = `
SELECT EXISTS (SELECT 1 FROM customers WHERE ` + byID + `)`

// CustomerExists reports whether the scope has the customer.
func (db *DB) CustomerExists(ctx context.Context, scope tenant.Scope, customerID string) (bool, error) {
	var ok bool
	err := sqlx.GetContext(ctx, db.q(ctx), &ok, customerExists, scope.MerchantID, scope.Env, customerID)
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

// createSource is a creation in one statement. In order: it takes the
// request's Idempotency-Key claim when there is one ("claimed", see
// claimSQL); then it checks the customer, claims the account number, and
// inserts the source, its events and their webhook deliveries, each step
// only when the one before succeeded. It reports which rule refused, if
// one did: the claim (locked, a stored response), the customer, or the
// account number, whose holder it reads when that holder committed before
// the statement began (else the caller reads it after); and how many
// deliveries it queued, so that the dispatchers are woken after the commit.
//
// Each step reads the one before in its FROM rather than testing it with
// EXISTS, which gives the plan fewer nodes to set up on every call (29,
// from 40).
//
// A concurrent claim of the same number waits for the other transaction:
// if that one commits, ON CONFLICT DO NOTHING applies.
//
// createAnswered also stores the request's response, for a request that has
// no transaction yet: then the statement is the whole request. A response
// stored under the key meanwhile (or an expired one still present) makes
// it fail with a unique violation, and write nothing.
var createSource, createAnswered = createSQL(""), createSQL(`, stored AS (
  INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
  SELECT $1, $2, $4, $23, $24, $25, $26 FROM src
)`)

func createSQL(store string) string {
	return `
WITH ` + claimSQL("$3", "$4", "$5") + `, customer AS (
  SELECT 1 FROM claimed, customers c
  WHERE claimed.go AND c.id = $7 AND (c.merchant_id, c.environment) IS NOT DISTINCT FROM ($1::text, $2::text)
), claim AS (
  INSERT INTO account_numbers (environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at)
  SELECT $2, $16, $1, $6, $7, $17 FROM customer
  ON CONFLICT (environment, fingerprint) DO NOTHING
  RETURNING 1
), src AS (
  INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, bank_name,
      last_four, account_type, nickname, account_key_id, account_ciphertext, fingerprint, created_at, verified_at)
  SELECT $1, $2, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
      CASE WHEN $8 = 'Verified' THEN $17::timestamptz END
  FROM claim
  RETURNING 1
), ` + eventsSQL("EXISTS (SELECT 1 FROM src)", 18) + `, holder AS (
  SELECT merchant_id, customer_id, funding_source_id, created_at FROM account_numbers
  WHERE environment = $2 AND fingerprint = $16
    AND EXISTS (SELECT 1 FROM customer) AND NOT EXISTS (SELECT 1 FROM claim)
)` + store + `
SELECT c.locked, c.request_hash, c.response_status, c.response_body,
  EXISTS (SELECT 1 FROM customer) AS customer, EXISTS (SELECT 1 FROM src) AS created,
  h.merchant_id AS holder_merchant_id, h.customer_id AS holder_customer_id,
  h.funding_source_id AS holder_source_id, h.created_at AS holder_created_at,
  (SELECT count(*) FROM queued) AS queued
FROM claimed c LEFT JOIN holder h ON true`
}

type createdRow struct {
	claimColumns
	Customer bool       `db:"customer"`
	Created  bool       `db:"created"`
	Merchant *string    `db:"holder_merchant_id"`
	Holder   *string    `db:"holder_customer_id"`
	SourceID *string    `db:"holder_source_id"`
	HeldAt   *time.Time `db:"holder_created_at"`
	Queued   int        `db:"queued"`
}

// CreateSource stores a new source with its account-number claim and its
// events in one statement, which also takes the transaction's pending
// Idempotency-Key claim (see Idempotent); a refused claim writes nothing
// and returns request_in_progress.
func (db *DB) CreateSource(ctx context.Context, s funding.Source, evs []event.Event) (funding.AccountClaim, bool, error) {
	evArgs, err := eventArgs(evs)
	if err != nil {
		return funding.AccountClaim{}, false, err
	}
	cl, lock, key, since := claimArgs(ctx)
	args := append([]any{s.Scope.MerchantID, s.Scope.Env, lock, key, since,
		s.ID, s.CustomerID, s.Status, s.RoutingNumber, s.BankName, s.LastFour, s.AccountType, s.Nickname,
		s.Account.KeyID, s.Account.Data, s.Fingerprint, s.CreatedAt}, evArgs...)
	var r createdRow
	if st := txOf(ctx); cl != nil && cl.answer != nil && st.tx == nil {
		// The request has no transaction yet: when the source is created,
		// this one statement is the whole request, its response included.
		resp := cl.answer(s)
		b := db.createBatched(&pendingCreation{s: s, evs: evs, cl: cl, resp: resp})
		switch c := b.row.liveClaim(cl); {
		case b.ok && b.row.Created:
			cl.state = claimAnswered
			return createdClaim(s), true, nil
		case b.ok && (!c.Locked || c.Status != nil):
			return funding.AccountClaim{}, false, cl.settle(c)
		}
		// A rule refused it, or its batch failed: the one-row statement
		// below tells which rule, or creates it when the batch failed.
		err := sqlx.GetContext(ctx, db.x, &r, createAnswered, append(args, cl.hash, resp.Status, resp.Body, cl.now)...)
		switch {
		case err == nil && r.Created:
			cl.state = claimAnswered
			db.queued(ctx, r.Queued) // committed alone: wakes at once
			return createdClaim(s), true, nil
		case err == nil && (!r.Locked || r.Status != nil):
			return funding.AccountClaim{}, false, cl.settle(r.claimColumns)
		case err != nil && !errs.Is(translate(err), errs.Conflict):
			return funding.AccountClaim{}, false, translate(err)
		}
		// A rule refused, or a response is stored under the key: take the
		// transaction path, which tells which and answers accordingly.
		if err := db.begin(ctx, st); err != nil {
			return funding.AccountClaim{}, false, err
		}
		r = createdRow{}
	}
	if err := sqlx.GetContext(ctx, db.q(ctx), &r, createSource, args...); err != nil {
		return funding.AccountClaim{}, false, translate(err)
	}
	if err := cl.settle(r.claimColumns); err != nil {
		return funding.AccountClaim{}, false, err
	}
	switch {
	case !r.Customer:
		return funding.AccountClaim{}, false, funding.ErrNoCustomer
	case r.Created:
		db.queued(ctx, r.Queued)
		return createdClaim(s), true, nil
	case r.SourceID == nil:
		// The holder committed while this statement waited for it.
		holder, err := db.AccountHolder(ctx, s.Scope.Env, s.Fingerprint)
		return holder, false, err
	}
	return funding.AccountClaim{Env: s.Scope.Env, Fingerprint: s.Fingerprint, MerchantID: *r.Merchant,
		SourceID: *r.SourceID, CustomerID: *r.Holder, CreatedAt: r.HeldAt.UTC()}, false, nil
}

// createdClaim is the account-number claim of a source just stored.
func createdClaim(s funding.Source) funding.AccountClaim {
	return funding.AccountClaim{Env: s.Scope.Env, Fingerprint: s.Fingerprint, MerchantID: s.Scope.MerchantID,
		SourceID: s.ID, CustomerID: s.CustomerID, CreatedAt: s.CreatedAt}
}

const selectAccountHolder = `
SELECT environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at
FROM account_numbers WHERE environment = $1 AND fingerprint = $2`

// AccountHolder returns the registry entry of a fingerprint.
func (db *DB) AccountHolder(ctx context.Context, env tenant.Environment, fp []byte) (funding.AccountClaim, error) {
	var r claimRow
	if err := sqlx.GetContext(ctx, db.q(ctx), &r, selectAccountHolder, env, fp); err != nil {
		return funding.AccountClaim{}, translate(err)
	}
	return r.domain(), nil
}

const releaseAccount = `
DELETE FROM account_numbers WHERE environment = $1 AND fingerprint = $2 AND funding_source_id = $3`

// ReleaseAccount frees an account number held by sourceID.
func (db *DB) ReleaseAccount(ctx context.Context, env tenant.Environment, fp []byte, sourceID string) error {
	res, err := db.q(ctx).ExecContext(ctx, releaseAccount, env, fp, sourceID)
	return oneRow(res, err, errs.NotFound)
}

type sourceRow struct {
	MerchantID    string     `db:"merchant_id"`
	Environment   string     `db:"environment"`
	ID            string     `db:"id"`
	CustomerID    string     `db:"customer_id"`
	Status        string     `db:"status"`
	RoutingNumber string     `db:"routing_number"`
	BankName      *string    `db:"bank_name"`
	LastFour      string     `db:"last_four"`
	AccountType   string     `db:"account_type"`
	Nickname      *string    `db:"nickname"`
	KeyID         string     `db:"account_key_id"`
	Ciphertext    []byte     `db:"account_ciphertext"`
	Fingerprint   []byte     `db:"fingerprint"`
	CreatedAt     time.Time  `db:"created_at"`
	RemovedAt     *time.Time `db:"removed_at"`
	depositCols
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
}

func (r sourceRow) domain() funding.Source {
	s := funding.Source{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, CustomerID: r.CustomerID, Status: funding.Status(r.Status), BankName: r.BankName,
		LastFour: r.LastFour, AccountType: r.AccountType, Nickname: r.Nickname, CreatedAt: r.CreatedAt.UTC(),
		Removed: r.RemovedAt != nil, RoutingNumber: r.RoutingNumber,
		Account: funding.Sealed{KeyID: r.KeyID, Data: r.Ciphertext}, Fingerprint: r.Fingerprint,
		RemovedAt: utcPtr(r.RemovedAt),
	}
	if r.Seq != nil {
		s.Verification = funding.MicroDeposit{
			Seq: *r.Seq, Status: *r.depositCols.Status, InitiatedAt: r.InitiatedAt.UTC(), ExpectedArrival: *r.ExpectedArrival,
			ExpiresAt: r.ExpiresAt.UTC(), AttemptsRemaining: *r.AttemptsRemaining, ReturnCode: deref(r.depositCols.ReturnCode),
		}.Verification()
	}
	return s
}

// sourceSelect reads sources with their current verification, which a
// trigger on micro_deposits keeps on the source's row (migration 00016).
const sourceSelect = `
SELECT f.merchant_id, f.environment, f.id, f.customer_id, f.status, f.routing_number, f.bank_name, f.last_four,
       f.account_type, f.nickname, f.account_key_id, f.account_ciphertext, f.fingerprint, f.created_at, f.removed_at,
       f.md_seq, f.md_status, f.md_initiated_at, f.md_expected_arrival_date, f.md_expires_at,
       f.md_attempts_remaining, f.md_return_code
FROM funding_sources f`

const selectSource = sourceSelect + `
WHERE f.` + byID

// SourceQuery is Source's statement (parameters: the scope's merchant and
// environment, then the id), for the bench's floor of a GET.
const SourceQuery = selectSource

// Source returns one source with its latest verification.
func (db *DB) Source(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	return getOne[sourceRow](ctx, db.q(ctx), selectSource, scope.MerchantID, scope.Env, id)
}

// SourceForUpdate is Source with the source's row locked until the
// transaction ends.
func (db *DB) SourceForUpdate(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	return getOne[sourceRow](ctx, db.q(ctx), selectSource+` FOR UPDATE OF f`, scope.MerchantID, scope.Env, id)
}

const listSources = sourceSelect + `
WHERE f.merchant_id = $1 AND f.environment = $2 AND (f.created_at, f.id) < ($3, $4)
  AND f.customer_id = $6 AND ($7 OR f.removed_at IS NULL)
ORDER BY f.created_at DESC, f.id DESC
LIMIT $5`

// ListSources returns up to p.Limit+1 sources of a customer, newest first.
func (db *DB) ListSources(ctx context.Context, scope tenant.Scope, customerID string, removed funding.Removed, p paging.Page) ([]funding.Source, error) {
	var rows []sourceRow
	if err := db.list(ctx, &rows, listSources, "funding_sources", scope, p, customerID, bool(removed)); err != nil {
		return nil, err
	}
	return mapRows(rows, sourceRow.domain), nil
}

type listedRow struct {
	sourceRow
	FirstName string `db:"first_name"`
	LastName  string `db:"last_name"`
	Email     string `db:"email"`
}

func (r listedRow) domain() funding.Listed {
	return funding.Listed{Source: r.sourceRow.domain(), CustomerName: r.FirstName + " " + r.LastName, CustomerEmail: r.Email}
}

// searchSources: $6 the search text, $7 its ILIKE pattern, $8 the status filter.
const searchSources = `
SELECT s.*, c.first_name, c.last_name, c.email
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
func (db *DB) SearchSources(ctx context.Context, scope tenant.Scope, f funding.Filter, p paging.Page) ([]funding.Listed, error) {
	var rows []listedRow
	if err := db.list(ctx, &rows, searchSources, "funding_sources", scope, p, f.Search, contains(f.Search), f.Status); err != nil {
		return nil, err
	}
	return mapRows(rows, listedRow.domain), nil
}

const setSourceStatus = `
UPDATE funding_sources SET status = $4, verified_at = CASE WHEN $4 = 'Verified' THEN $5::timestamptz END
WHERE ` + byID

// SetStatus changes a source's status.
func (db *DB) SetStatus(ctx context.Context, scope tenant.Scope, id string, status funding.Status, at time.Time, evs ...event.Event) error {
	n, err := db.writeRecording(ctx, setSourceStatus, setSourceStatusRecording, []any{scope.MerchantID, scope.Env, id, status, at}, evs)
	return changed(n, err)
}

var setSourceStatusRecording = recording(setSourceStatus, 5)

const markSourceRemoved = `
UPDATE funding_sources SET removed_at = $4
WHERE ` + byID + ` AND removed_at IS NULL`

// MarkRemoved marks a source removed.
func (db *DB) MarkRemoved(ctx context.Context, scope tenant.Scope, id string, at time.Time) error {
	res, err := db.q(ctx).ExecContext(ctx, markSourceRemoved, scope.MerchantID, scope.Env, id, at)
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
}

func (r depositRow) domain() funding.MicroDeposit {
	m := funding.MicroDeposit{
		Scope:    tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		SourceID: r.SourceID, Seq: r.Seq, Amounts: funding.Sealed{KeyID: r.KeyID, Data: r.Ciphertext},
		Status: r.Status, InitiatedAt: r.InitiatedAt.UTC(), ExpectedArrival: r.ExpectedArrival,
		ExpiresAt: r.ExpiresAt.UTC(), AttemptsRemaining: r.AttemptsRemaining, FinishedAt: utcPtr(r.FinishedAt),
	}
	if r.ReturnCode != nil {
		m.ReturnCode = *r.ReturnCode
	}
	return m
}

const depositColumns = `merchant_id, environment, funding_source_id, seq, amounts_key_id, amounts_ciphertext, status,
    initiated_at, expected_arrival_date, expires_at, attempts_remaining, finished_at, return_code`

const selectLatestDeposit = `
SELECT ` + depositColumns + `
FROM micro_deposits
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3
ORDER BY seq DESC LIMIT 1`

// LatestMicroDeposit returns a source's newest verification.
func (db *DB) LatestMicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string) (funding.MicroDeposit, error) {
	return getOne[depositRow](ctx, db.q(ctx), selectLatestDeposit, scope.MerchantID, scope.Env, sourceID)
}

// LatestMicroDepositForUpdate is LatestMicroDeposit with the row locked
// until the transaction ends.
func (db *DB) LatestMicroDepositForUpdate(ctx context.Context, scope tenant.Scope, sourceID string) (funding.MicroDeposit, error) {
	return getOne[depositRow](ctx, db.q(ctx), selectLatestDeposit+` FOR UPDATE`, scope.MerchantID, scope.Env, sourceID)
}

const selectDepositBySeq = `
SELECT ` + depositColumns + `
FROM micro_deposits
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND seq = $4
FOR UPDATE`

// MicroDeposit locks one verification of a source by its sequence number.
func (db *DB) MicroDeposit(ctx context.Context, scope tenant.Scope, sourceID string, seq int) (funding.MicroDeposit, error) {
	var r depositRow
	if err := sqlx.GetContext(ctx, db.q(ctx), &r, selectDepositBySeq, scope.MerchantID, scope.Env, sourceID, seq); err != nil {
		return funding.MicroDeposit{}, translate(err)
	}
	return r.domain(), nil
}

const insertDeposit = `
INSERT INTO micro_deposits (` + depositColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULLIF($13, ''))`

var insertDepositRecording = recording(insertDeposit, 13)

// InsertMicroDeposit stores a new verification, with evs in the same
// statement.
func (db *DB) InsertMicroDeposit(ctx context.Context, m funding.MicroDeposit, evs ...event.Event) error {
	_, err := db.writeRecording(ctx, insertDeposit, insertDepositRecording, []any{m.Scope.MerchantID, m.Scope.Env, m.SourceID, m.Seq,
		m.Amounts.KeyID, m.Amounts.Data, m.Status, m.InitiatedAt, m.ExpectedArrival.Format(time.DateOnly), m.ExpiresAt,
		m.AttemptsRemaining, m.FinishedAt, m.ReturnCode}, evs)
	return err
}

const updateDeposit = `
UPDATE micro_deposits SET status = $5, attempts_remaining = $6, finished_at = $7, return_code = NULLIF($8, '')
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND seq = $4`

var updateDepositRecording = recording(updateDeposit, 8)

// UpdateMicroDeposit saves a verification's state, with evs in the same
// statement.
func (db *DB) UpdateMicroDeposit(ctx context.Context, m funding.MicroDeposit, evs ...event.Event) error {
	n, err := db.writeRecording(ctx, updateDeposit, updateDepositRecording, []any{m.Scope.MerchantID, m.Scope.Env, m.SourceID, m.Seq,
		m.Status, m.AttemptsRemaining, m.FinishedAt, m.ReturnCode}, evs)
	return changed(n, err)
}

const selectExpiringDeposits = `
SELECT ` + depositColumns + `
FROM micro_deposits
WHERE status = 'pending' AND expires_at <= $1
ORDER BY expires_at
LIMIT $2
FOR UPDATE SKIP LOCKED`

// ExpiringMicroDeposits locks pending verifications due to expire.
func (db *DB) ExpiringMicroDeposits(ctx context.Context, now time.Time, limit int) ([]funding.MicroDeposit, error) {
	var rows []depositRow
	if err := sqlx.SelectContext(ctx, db.q(ctx), &rows, selectExpiringDeposits, now, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, depositRow.domain), nil
}

// SetNickname stores a source's nickname (nil for none).
func (db *DB) SetNickname(ctx context.Context, scope tenant.Scope, id string, nickname *string) error {
	res, err := db.q(ctx).ExecContext(ctx, `UPDATE funding_sources SET nickname = $4 WHERE `+byID,
		scope.MerchantID, scope.Env, id, nickname)
	return oneRow(res, err, errs.NotFound)
}
