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

// Creations of concurrent requests are written together: group commit.
//
// Measured on this service's tables (2 cores, fsync on), a creation's rows
// cost PostgreSQL about 400 µs of CPU when each creation is a statement and
// a commit of its own, and under 100 µs each when eight are written by one
// statement: most of the cost is per statement and per commit (setting up
// the plan of six written tables, the commit, the wake-ups on both sides of
// the round trip), not per row. So a keyed creation that has no
// transaction yet (see Idempotent) does not run its statement itself: it
// joins a queue, and up to creationBatches statements at a time each take
// what is queued (at most creationBatchMax) and write it in one statement,
// createBatch, which is its own transaction.
//
// A lone creation is written at once, in a batch of one: nothing waits for
// company. Each row of a batch is checked on its own, as the one-row
// statement checks it (the claim, the customer, the account number), and a
// row that is refused writes nothing. A refused claim is answered from the
// batch's row (request_in_progress, or the stored response); a request
// refused by a rule runs the one-row statement, which tells which rule and
// answers accordingly (the path it took before batches). So a batch reports
// only each row's claim and whether it was created. A batch that fails as a
// whole (a unique violation from a race
// the checks could not see, a deadlock between two batches over two account
// numbers, a lost connection) writes nothing either, and each of its
// requests runs the one-row statement. A batch never holds two requests
// with the same Idempotency-Key (the second waits for the next batch), so
// a retry racing its first request meets it exactly as before.
const (
	creationBatches  = 4
	creationBatchMax = 32
	// creationBatchTimeout bounds a batch's statement: it runs for many
	// requests, so it does not take any one request's context.
	creationBatchTimeout = 30 * time.Second
)

// newCreations is the queue of db's creations: never two requests with
// the same Idempotency-Key in one batch.
func newCreations(db *DB) *batches[*pendingCreation] {
	return newBatches(creationBatches, creationBatchMax, func(p *pendingCreation) string {
		return p.cl.scope.MerchantID + "\x00" + string(p.cl.scope.Env) + "\x00" + p.cl.key
	}, db.runCreationBatch)
}

// pendingCreation is one request's creation, with the response to store
// under its Idempotency-Key; done receives its row of the batch.
type pendingCreation struct {
	s    funding.Source
	evs  []event.Event
	cl   *claim
	resp idempotency.Response
	done chan batchResult
}

// batchResult is what a batch reports for one creation: ok is false when
// the batch failed as a whole.
type batchResult struct {
	ok  bool
	row batchRow
}

// batchRow is one row of a batch's answer: the claim's outcome (the
// advisory lock, and the row stored under the key, live or expired) and
// whether the source was created.
type batchRow struct {
	claimColumns
	ID       string     `db:"id"`
	StoredAt *time.Time `db:"stored_at"`
	Created  bool       `db:"created"`
	Queued   int        `db:"queued"`
}

// liveClaim is the row's claim as createSource reports it: the stored
// response only when it is live.
func (r batchRow) liveClaim(cl *claim) claimColumns {
	if r.StoredAt == nil || !r.StoredAt.After(cl.since) {
		return claimColumns{Locked: r.Locked}
	}
	return r.claimColumns
}

// createBatched writes p's creation in a batch and returns its row, or
// ok false when the batch failed (then nothing of it was written).
func (db *DB) createBatched(p *pendingCreation) batchResult {
	p.done = make(chan batchResult, 1)
	db.creations.add(p)
	return <-p.done
}

// runCreationBatch writes one batch and answers each of its requests.
func (db *DB) runCreationBatch(batch []*pendingCreation) {
	rows, queued, err := db.createBatch(batch)
	if err == nil {
		db.queued(context.Background(), queued) // committed alone: wakes at once
	}
	for _, p := range batch {
		r, ok := rows[p.s.ID]
		p.done <- batchResult{ok: err == nil && ok, row: r}
	}
}

// createBatchSQL is the batch's statement: createSource's steps for many
// rows, each row checked on its own. Its lookups are correlated subqueries
// on unique keys, so every row reads one index entry whatever the tables'
// statistics. A row goes on when it takes its key's advisory lock, no row
// (live or expired) is stored under its key, and its customer is the
// scope's; then its account number is claimed (ON CONFLICT DO NOTHING:
// taken, also by an earlier row of the batch, leaves the row out), and the
// rows whose claim was inserted get their source, events, deliveries and
// stored response. It returns one row per creation: its claim's outcome,
// whether it was created, and the count of deliveries the batch queued.
const createBatchSQL = `
WITH r AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::bytea[], $15::bytea[],
      $16::timestamptz[], $17::bytea[], $18::int[], $19::bytea[], $20::timestamptz[])
    AS r(merchant_id, environment, lock, key, id, customer_id, status, routing_number, bank_name, last_four,
      account_type, nickname, account_key_id, account_ciphertext, fingerprint, created_at, request_hash,
      response_status, response_body, now)
), claimed AS (
  SELECT r.*, l.locked, p.request_hash AS stored_hash, p.response_status AS stored_status,
    p.response_body AS stored_body, p.created_at AS stored_at
  FROM r CROSS JOIN LATERAL (SELECT pg_try_advisory_xact_lock(r.lock) AS locked) l
  LEFT JOIN LATERAL (SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys p
    WHERE p.merchant_id = r.merchant_id AND p.environment = r.environment AND p.key = r.key) p ON true
), ok AS (
  SELECT c.* FROM claimed c
  WHERE c.locked AND c.stored_at IS NULL
    AND EXISTS (SELECT 1 FROM customers u
      WHERE u.id = c.customer_id AND (u.merchant_id, u.environment) IS NOT DISTINCT FROM (c.merchant_id, c.environment))
), claim AS (
  INSERT INTO account_numbers (environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at)
  SELECT environment, fingerprint, merchant_id, id, customer_id, created_at FROM ok
  ON CONFLICT (environment, fingerprint) DO NOTHING
  RETURNING funding_source_id AS id
), src AS (
  INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, bank_name,
      last_four, account_type, nickname, account_key_id, account_ciphertext, fingerprint, created_at, verified_at)
  SELECT ok.merchant_id, ok.environment, ok.id, ok.customer_id, ok.status, ok.routing_number, ok.bank_name,
      ok.last_four, ok.account_type, ok.nickname, ok.account_key_id, ok.account_ciphertext, ok.fingerprint,
      ok.created_at, CASE WHEN ok.status = 'Verified' THEN ok.created_at END
  FROM ok JOIN claim USING (id)
  RETURNING merchant_id, environment, id
), ev AS (
  INSERT INTO events (merchant_id, environment, id, type, data, created_at)
  SELECT src.merchant_id, src.environment, e.id, e.type, e.data::jsonb, e.created_at
  FROM unnest($21::text[], $22::text[], $23::text[], $24::text[], $25::timestamptz[])
    AS e(source_id, id, type, data, created_at)
  JOIN src ON src.id = e.source_id
), queued AS (
  INSERT INTO webhook_deliveries (id, merchant_id, environment, event_id, next_attempt_at, created_at, updated_at)
  SELECT d.id, src.merchant_id, src.environment, d.event_id, d.at, d.at, d.at
  FROM unnest($26::text[], $21::text[], $22::text[], $25::timestamptz[]) AS d(id, source_id, event_id, at)
  JOIN src ON src.id = d.source_id
  JOIN webhook_endpoints w ON w.merchant_id = src.merchant_id AND w.environment = src.environment
  RETURNING 1
), stored AS (
  INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
  SELECT ok.merchant_id, ok.environment, ok.key, ok.request_hash, ok.response_status, ok.response_body, ok.now
  FROM ok JOIN src USING (id)
)
SELECT c.id, c.locked, c.stored_hash AS request_hash, c.stored_status AS response_status,
  c.stored_body AS response_body, c.stored_at,
  src.id IS NOT NULL AS created, (SELECT count(*) FROM queued) AS queued
FROM claimed c LEFT JOIN src USING (id)`

// createBatch writes batch in one statement (its own transaction) and
// returns its rows by source id and how many deliveries it queued; on an
// error it wrote nothing.
func (db *DB) createBatch(batch []*pendingCreation) (map[string]batchRow, int, error) {
	n := len(batch)
	var (
		merchants, envs, keys, srcIDs, customers, statuses     = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		routing, lastFour, accountTypes, keyIDs, created, nows = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		banks, nicknames                                       = make([]sql.NullString, n), make([]sql.NullString, n)
		locks, statusCodes                                     = make([]int64, n), make([]int64, n)
		ciphertexts, fingerprints, hashes, bodies              = make([][]byte, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
		evSources                                              []string
		evs                                                    eventArrays
	)
	for i, p := range batch {
		s := p.s
		merchants[i], envs[i], keys[i], srcIDs[i], customers[i], statuses[i] =
			s.Scope.MerchantID, string(s.Scope.Env), p.cl.key, s.ID, s.CustomerID, string(s.Status)
		routing[i], lastFour[i], accountTypes[i], keyIDs[i], created[i], nows[i] =
			s.RoutingNumber, s.LastFour, s.AccountType, s.Account.KeyID, s.CreatedAt.Format(time.RFC3339Nano), p.cl.now.Format(time.RFC3339Nano)
		banks[i], nicknames[i] = nullString(s.BankName), nullString(s.Nickname)
		locks[i], statusCodes[i] = p.cl.lockID(), int64(p.resp.Status)
		ciphertexts[i], fingerprints[i], hashes[i], bodies[i] = s.Account.Data, s.Fingerprint, p.cl.hash, p.resp.Body
		for _, e := range p.evs {
			if err := evs.add(e); err != nil {
				return nil, 0, err
			}
			evSources = append(evSources, s.ID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), creationBatchTimeout)
	defer cancel()
	rows, err := db.x.QueryxContext(ctx, createBatchSQL,
		pq.StringArray(merchants), pq.StringArray(envs), pq.Int64Array(locks), pq.StringArray(keys),
		pq.StringArray(srcIDs), pq.StringArray(customers), pq.StringArray(statuses), pq.StringArray(routing),
		pq.Array(banks), pq.StringArray(lastFour), pq.StringArray(accountTypes), pq.Array(nicknames),
		pq.StringArray(keyIDs), pq.ByteaArray(ciphertexts), pq.ByteaArray(fingerprints), pq.StringArray(created),
		pq.ByteaArray(hashes), pq.Int64Array(statusCodes), pq.ByteaArray(bodies), pq.StringArray(nows),
		pq.StringArray(evSources), pq.StringArray(evs.ids), pq.StringArray(evs.types), pq.StringArray(evs.data),
		pq.StringArray(evs.at), pq.StringArray(evs.deliveries))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, queued := make(map[string]batchRow, n), 0
	for rows.Next() {
		var r batchRow
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
