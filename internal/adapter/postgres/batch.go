package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/funding"
)

// A funding source's creation is one statement, createSources, for one
// row or many: it is the only place the creation rule is written in SQL.
// CreateSource runs it for one row inside the caller's transaction;
// CreateSourceKeyed runs it as the whole of an idempotent request, the
// claim on the key and the stored response included. Outside a
// transaction, both write concurrent requests' creations together: group
// commit.
//
// Most of a creation's cost to PostgreSQL is per statement and per commit
// (the writes to six tables, the commit's flush, the wake-ups on both
// sides of the round trip), not per row. So a creation on the pool joins a
// queue, and up to creationBatches goroutines at a time each take what is
// queued (at most creationBatchMax) and write it in one statement, which
// is its own transaction, on connections of their own (batchX, which plan
// the statement once: see batchSession). A lone creation is written at
// once, in a batch of one: nothing waits for company, and under load the
// batches grow by themselves. Two batches run at once: one statement
// executes while the other waits for its commit's flush. More split the
// same creations into smaller statements, each paying the fixed cost
// again (starting the executor for its plan, compiling the checks of the
// tables it writes, the commit); one leaves the database idle during
// each flush.
//
// Each row of a batch is checked on its own, and a row that is refused
// writes nothing; the statement reports each row's refusal. A refused
// claim is answered from the row (request_in_progress, or the stored
// response's replay). A row refused by a rule (customer, account number),
// one whose account holder type was guessed wrong (the customer has a
// business name: see funding.Creation), one whose account has a history
// its answer was not made with (see
// accountHistoryOfF), one whose key holds an expired response still present, and every row of
// a batch that failed as a whole (a deadlock between two batches over two
// account numbers, a lost connection) is handed back to the caller
// (funding.Service.CreateKeyed), which runs the request on the general
// path, as any other idempotent request (the funding store's Idempotent,
// on DB.Idempotent): the rule's error, or the answer made with what the
// statement found, is then stored under the key like any answer. A batch
// never holds two requests with the same Idempotency-Key (the second waits
// for the next batch), so a retry racing its first request meets it as it
// would without batches.
const (
	creationBatches  = 2
	creationBatchMax = 32
	// creationBatchTimeout bounds a batch's statement: it runs for many
	// requests, so it does not take any one request's context.
	creationBatchTimeout = 30 * time.Second
)

// createSources creates the sources of its rows, each checked on its own.
// In order, per row: it takes the row's Idempotency-Key claim when the row
// has a key (the advisory lock, and no row, live or expired, stored under
// the key); checks that the customer is the scope's; for a row answered
// as for an account with no history (no_history), checks that the account
// has none; for a row whose account holder type was guessed
// (holder_guessed), checks the guess against the customer's business name
// on the row the customer check reads (a row without one gets the
// customer's default from the table's insert trigger); claims the account number (ON CONFLICT DO NOTHING: a number
// taken, also by an earlier row of the same statement, leaves the row
// out); and inserts the source (with its default Individual
// Identification Number, funding_source_individual_id, so the table's
// defaults trigger does not run), the account's facts (linked, and verified
// for a Verified source), its events, their webhook deliveries and, for a
// keyed row, the stored response. A row answered as for an account with
// no history stores that answer with the source (the account check's
// "unknown" without reasons, which no time changes); any other row stores
// none, so its first read computes it (see facts.go). Its lookups are correlated subqueries on
// unique keys, and the history's an index probe by account, so every row
// reads one index entry of each whatever the tables' statistics.
//
// It answers one row per creation: the claim's outcome (the stored
// response's columns, NULL when none), the refusal (NULL when created:
// in_progress, stored, customer, history, holder, account_number), the account number's
// holder when it committed before the statement began (else the caller
// reads it after), and the count of deliveries queued.
//
// A concurrent claim of the same number waits for the other transaction:
// if that one commits, ON CONFLICT DO NOTHING applies.
var createSources = `
WITH r AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::bytea[], $15::bytea[],
      $16::timestamptz[], $17::bytea[], $18::int[], $19::bytea[], $20::timestamptz[], $27::bytea[], $28::bool[],
      $29::text[], $30::bool[], $31::text[])
    AS r(merchant_id, environment, lock, key, id, customer_id, status, routing_number, bank_name, last_four,
      account_type, nickname, account_key_id, account_ciphertext, fingerprint, created_at, request_hash,
      response_status, response_body, now, account_fp, no_history, account_holder_type, holder_guessed, metadata)
), claimed AS (
  SELECT r.*, l.locked, p.request_hash AS stored_hash, p.response_status AS stored_status,
    p.response_body AS stored_body, p.created_at AS stored_at,
    (SELECT CASE WHEN u.business_name <> '' THEN 'company' ELSE 'individual' END FROM customers u
      WHERE u.id = r.customer_id AND (u.merchant_id, u.environment) IS NOT DISTINCT FROM (r.merchant_id, r.environment)
    ) AS customer_holder,
    r.no_history IS TRUE AND ` + accountHistoryOfF + ` AS history
  FROM r CROSS JOIN LATERAL (SELECT r.lock IS NULL OR pg_try_advisory_xact_lock(r.lock) AS locked) l
  CROSS JOIN LATERAL (SELECT r.environment, r.account_fp, r.merchant_id, r.id) f
  LEFT JOIN LATERAL (SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys p
    WHERE p.merchant_id = r.merchant_id AND p.environment = r.environment AND p.key = r.key) p ON true
), ok AS (
  SELECT c.* FROM claimed c WHERE c.locked AND c.stored_at IS NULL AND c.customer_holder IS NOT NULL AND NOT c.history
    AND NOT ` + holderGuessedWrong + `
), claim AS (
  INSERT INTO account_numbers (environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at)
  SELECT environment, fingerprint, merchant_id, id, customer_id, created_at FROM ok
  ON CONFLICT (environment, fingerprint) DO NOTHING
  RETURNING funding_source_id AS id
), src AS (
  INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, bank_name,
      last_four, account_type, nickname, account_key_id, account_ciphertext, fingerprint, created_at, verified_at,
      account_fp, check_result, check_reasons, account_holder_type, individual_id, metadata)
  SELECT ok.merchant_id, ok.environment, ok.id, ok.customer_id, ok.status, ok.routing_number, ok.bank_name,
      ok.last_four, ok.account_type, ok.nickname, ok.account_key_id, ok.account_ciphertext, ok.fingerprint,
      ok.created_at, CASE WHEN ok.status = 'Verified' THEN ok.created_at END, ok.account_fp,
      CASE WHEN ok.no_history THEN '` + funding.CheckUnknown + `' END, CASE WHEN ok.no_history THEN '{}'::text[] END,
      NULLIF(ok.account_holder_type, ''), funding_source_individual_id(ok.id), ok.metadata::jsonb
  FROM ok JOIN claim USING (id)
  RETURNING merchant_id, environment, id
), facts AS (
  INSERT INTO account_facts (environment, account_fp, kind, merchant_id, customer_id, funding_source_id, at)
  SELECT ok.environment, ok.account_fp, k.kind, ok.merchant_id, ok.customer_id, ok.id, ok.created_at
  FROM ok JOIN src USING (id) CROSS JOIN (VALUES ('linked'), ('verified')) k(kind)
  WHERE ok.account_fp IS NOT NULL AND (k.kind = 'linked' OR ok.status = 'Verified')
), ` + rowEventsSQL("src", 21, 32) + `, stored AS (
  INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
  SELECT ok.merchant_id, ok.environment, ok.key, ok.request_hash, ok.response_status, ok.response_body, ok.now
  FROM ok JOIN src USING (id)
  WHERE ok.key IS NOT NULL
)
SELECT c.id, c.locked, c.stored_hash AS request_hash, c.stored_status AS response_status,
  c.stored_body AS response_body, c.stored_at,
  CASE WHEN src.id IS NOT NULL THEN NULL
    WHEN NOT c.locked THEN 'in_progress'
    WHEN c.stored_at IS NOT NULL THEN 'stored'
    WHEN c.customer_holder IS NULL THEN 'customer'
    WHEN c.history THEN 'history'
    WHEN ` + holderGuessedWrong + ` THEN 'holder'
    ELSE 'account_number' END AS refusal,
  h.merchant_id AS holder_merchant_id, h.customer_id AS holder_customer_id,
  h.funding_source_id AS holder_source_id, h.created_at AS holder_created_at,
  (SELECT count(*) FROM queued) AS queued
FROM claimed c LEFT JOIN src USING (id)
LEFT JOIN account_numbers h ON src.id IS NULL AND c.locked AND c.stored_at IS NULL AND c.customer_holder IS NOT NULL
  AND NOT c.history AND NOT ` + holderGuessedWrong + `
  AND h.environment = c.environment AND h.fingerprint = c.fingerprint`

// holderGuessedWrong is true for a row of createSources' claimed whose
// guessed account holder type is not its customer's default
// (customer_holder: NULL when the scope has no such customer).
const holderGuessedWrong = `(c.holder_guessed IS TRUE AND c.account_holder_type IS DISTINCT FROM c.customer_holder)`

// Refusals createSources reports.
const (
	refusedInProgress = "in_progress"
	refusedStored     = "stored"
	refusedCustomer   = "customer"
	refusedHistory    = "history"
	refusedHolder     = "holder"
	refusedAccount    = "account_number"
)

// creation is one row of createSources: a source with its events and,
// for a keyed creation, its request and the response to store.
type creation struct {
	src  funding.Source
	evs  []event.Event
	req  *idempotency.Request // nil: no key
	resp idempotency.Response
	done chan batchResult // the batch's answer
}

// creationRow is createSources' answer for one creation.
type creationRow struct {
	claimColumns
	ID       string     `db:"id"`
	StoredAt *time.Time `db:"stored_at"`
	Refusal  *string    `db:"refusal"`
	Merchant *string    `db:"holder_merchant_id"`
	Holder   *string    `db:"holder_customer_id"`
	SourceID *string    `db:"holder_source_id"`
	HeldAt   *time.Time `db:"holder_created_at"`
	Queued   int        `db:"queued"`
}

// batchResult is a batch's answer to one creation: ok is false when the
// batch failed as a whole.
type batchResult struct {
	ok  bool
	row creationRow
}

// CreateSource stores src with its account-number claim and its events in
// one statement: on the pool, in a batch with concurrent creations (a
// batch that fails as a whole is retried alone); in a transaction, on it.
// It returns funding.ErrNoCustomer when the customer is not the scope's,
// funding.ErrAccountHistory when src.Facts is Unread and the account has a
// history, and the number's holder with created false when another source
// holds the number.
func (q queries) CreateSource(ctx context.Context, s funding.Source, evs []event.Event) (funding.AccountClaim, bool, error) {
	c := &creation{src: s, evs: onClock(ctx, evs)}
	b, err := q.batched(ctx, c)
	if err != nil {
		return funding.AccountClaim{}, false, err
	}
	if !b.ok {
		rows, queued, err := q.createSources(ctx, []*creation{c})
		if err != nil {
			return funding.AccountClaim{}, false, translate(err)
		}
		if b.row, b.ok = rows[s.ID]; !b.ok {
			return funding.AccountClaim{}, false, translate(sql.ErrNoRows)
		}
		if b.row.Refusal == nil {
			q.queued(queued)
		}
	}
	switch r := b.row; {
	case r.Refusal == nil:
		return funding.AccountClaim{Env: s.Scope.Env, Fingerprint: s.Fingerprint, MerchantID: s.Scope.MerchantID,
			SourceID: s.ID, CustomerID: s.CustomerID, CreatedAt: s.CreatedAt}, true, nil
	case *r.Refusal == refusedCustomer:
		return funding.AccountClaim{}, false, funding.ErrNoCustomer
	case *r.Refusal == refusedHistory:
		return funding.AccountClaim{}, false, funding.ErrAccountHistory
	case *r.Refusal == refusedHolder:
		return funding.AccountClaim{}, false, funding.ErrHolderGuess
	case r.SourceID == nil:
		// The holder committed while the statement waited for it.
		holder, err := q.AccountHolder(ctx, s.Scope.Env, s.Fingerprint)
		return holder, false, err
	default:
		return funding.AccountClaim{Env: s.Scope.Env, Fingerprint: s.Fingerprint, MerchantID: *r.Merchant,
			SourceID: *r.SourceID, CustomerID: *r.Holder, CreatedAt: r.HeldAt.UTC()}, false, nil
	}
}

// batched writes c in the next batch when q is the pool's, and waits for
// its answer; in a transaction it answers ok false at once (c runs on the
// transaction).
func (q queries) batched(ctx context.Context, c *creation) (batchResult, error) {
	if q.tx != nil {
		return batchResult{}, nil
	}
	c.done = make(chan batchResult, 1)
	q.db.creations.add(c)
	select {
	case b := <-c.done:
		return b, nil
	case <-ctx.Done():
		return batchResult{}, ctx.Err()
	}
}

// CreateSourceKeyed is the whole of an idempotent creation request in one
// statement, written in a batch with concurrent ones: the claim on req's
// key, the source with its account-number claim and events (as
// CreateSource), and resp stored under the key. It answers created when
// all of it committed; the stored response's replay (or
// idempotency_key_reused) when one is stored under the key;
// request_in_progress when another request holds the key. When it answers
// none of these (a rule refused the source, the account has a history
// src's answer was not made with, an expired response is still
// stored under the key, or the batch failed), it wrote nothing, and the
// caller (funding.Service.CreateKeyed) runs the request on the general
// path (store.Idempotent).
func (q queries) CreateSourceKeyed(ctx context.Context, s funding.Source, evs []event.Event, req idempotency.Request, resp idempotency.Response) (bool, *idempotency.Response, error) {
	// A whole request commits on its own, never inside another
	// transaction: there, batched answers ok false.
	b, err := q.batched(ctx, &creation{src: s, evs: onClock(ctx, evs), req: &req, resp: resp})
	if err != nil {
		return false, nil, err
	}
	switch r := b.row; {
	case !b.ok:
		return false, nil, nil
	case r.Refusal == nil:
		return true, nil, nil
	case *r.Refusal == refusedInProgress:
		return false, nil, idempotency.InProgress()
	case *r.Refusal == refusedStored && r.StoredAt.After(req.Since()):
		replay, err := req.Replay(r.stored())
		return false, replay, err
	}
	return false, nil, nil
}

// batchSession is the session settings of the batch writers' connections
// (batchX).
//
// Generic plans: PostgreSQL plans a prepared statement afresh on each
// call while its plan for the call's values looks cheaper than the one
// plan for any values; for createSources, whose unnest row counts are
// unknown to a generic plan, that is every call, and planning its writes
// to six tables costs more than running them. So the batch writers plan it
// once per connection.
//
// No sequential scans: that one plan is made on the tables as they are
// when the connection first runs the statement, which for a new
// deployment's first connections is empty, where scanning a table looks
// cheaper than probing its index; the plan then serves the connection
// while the tables grow, until an analyze replaces it, and scans every
// stored response and account number in every batch. Every read of the
// statement (and of the triggers its writes fire) has an index that
// serves it, so the writers' planner is told not to scan whole tables
// (TestTheCreationBatchReadsByIndexFromAnEmptyStart,
// TestOneRowReadsUseTheIDIndexWithoutStatistics).
var batchSession = []string{"SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off"}

// newCreations is the queue of db's creations: never two requests with
// the same Idempotency-Key in one batch.
func newCreations(db *DB) *batches[*creation] {
	return newBatches(creationBatches, creationBatchMax, func(c *creation) string {
		if c.req == nil {
			return c.src.ID
		}
		return c.req.Scope.MerchantID + "\x00" + string(c.req.Scope.Env) + "\x00" + c.req.Key
	}, db.runCreationBatch)
}

// runCreationBatch writes one batch and answers each of its requests.
func (db *DB) runCreationBatch(batch []*creation) {
	ctx, cancel := context.WithTimeout(context.Background(), creationBatchTimeout)
	defer cancel()
	rows, queued, err := queries{ex: db.batchX, db: db}.createSources(ctx, batch)
	if err == nil {
		db.queued(queued) // committed on its own: wakes at once
	}
	for _, c := range batch {
		r, ok := rows[c.src.ID]
		c.done <- batchResult{ok: err == nil && ok, row: r}
	}
}

// createSources runs the statement for cs and returns its rows by
// source id and how many deliveries it queued; on an error it wrote
// nothing.
func (q queries) createSources(ctx context.Context, cs []*creation) (map[string]creationRow, int, error) {
	n := len(cs)
	var (
		merchants, envs, srcIDs, customers, statuses, routing = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		lastFour, accountTypes, keyIDs, created               = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		keys, banks, nicknames, nows                          = make([]sql.NullString, n), make([]sql.NullString, n), make([]sql.NullString, n), make([]sql.NullString, n)
		locks, statusCodes                                    = make([]sql.NullInt64, n), make([]sql.NullInt64, n)
		ciphertexts, fingerprints, hashes, bodies             = make([][]byte, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
		accountFPs                                            = make([][]byte, n)
		noHistory, guessed                                    = make([]bool, n), make([]bool, n)
		holders, metas                                        = make([]string, n), make([]string, n)
		evSources                                             []string
		evs                                                   eventArrays
	)
	for i, c := range cs {
		s := c.src
		merchants[i], envs[i], srcIDs[i], customers[i], statuses[i], routing[i] =
			s.Scope.MerchantID, string(s.Scope.Env), s.ID, s.CustomerID, string(s.Status), s.RoutingNumber
		lastFour[i], accountTypes[i], keyIDs[i], created[i] = s.LastFour, s.AccountType, s.Account.KeyID, s.CreatedAt.Format(time.RFC3339Nano)
		banks[i], nicknames[i] = nullString(s.BankName), nullString(s.Nickname)
		ciphertexts[i], fingerprints[i], accountFPs[i], noHistory[i] = s.Account.Data, s.Fingerprint, s.AccountFP, s.Facts.Unread
		holders[i], guessed[i] = s.AccountHolderType, s.HolderGuessed
		meta, err := s.Metadata.MarshalJSON()
		if err != nil {
			return nil, 0, err
		}
		metas[i] = string(meta)
		if r := c.req; r != nil {
			keys[i], nows[i] = sql.NullString{String: r.Key, Valid: true}, sql.NullString{String: r.Now.Format(time.RFC3339Nano), Valid: true}
			locks[i], statusCodes[i] = sql.NullInt64{Int64: r.LockID(), Valid: true}, sql.NullInt64{Int64: int64(c.resp.Status), Valid: true}
			hashes[i], bodies[i] = r.Hash, c.resp.Body
		}
		for _, e := range c.evs {
			if err := evs.add(e, q.wall()); err != nil {
				return nil, 0, err
			}
			evSources = append(evSources, s.ID)
		}
	}
	rows, err := q.ex.QueryxContext(ctx, createSources,
		pq.StringArray(merchants), pq.StringArray(envs), pq.Array(locks), pq.Array(keys),
		pq.StringArray(srcIDs), pq.StringArray(customers), pq.StringArray(statuses), pq.StringArray(routing),
		pq.Array(banks), pq.StringArray(lastFour), pq.StringArray(accountTypes), pq.Array(nicknames),
		pq.StringArray(keyIDs), pq.ByteaArray(ciphertexts), pq.ByteaArray(fingerprints), pq.StringArray(created),
		pq.ByteaArray(hashes), pq.Array(statusCodes), pq.ByteaArray(bodies), pq.Array(nows),
		pq.StringArray(evs.ids), pq.StringArray(evs.types), pq.StringArray(evs.data), pq.StringArray(evs.at),
		pq.StringArray(evs.deliveries), pq.StringArray(evSources), pq.ByteaArray(accountFPs), pq.BoolArray(noHistory),
		pq.StringArray(holders), pq.BoolArray(guessed), pq.StringArray(metas), pq.StringArray(evs.clocks), pq.StringArray(evs.clockAt), pq.StringArray(evs.due))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, queued := make(map[string]creationRow, n), 0
	for rows.Next() {
		var r creationRow
		if err := rows.StructScan(&r); err != nil {
			return nil, 0, err
		}
		out[r.ID], queued = r, r.Queued
	}
	return out, queued, rows.Err()
}

func nullString(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}
