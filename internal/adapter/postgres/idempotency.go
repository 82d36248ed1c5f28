package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/idempotency"
)

// Idempotent runs fn at most once for req within idempotency.TTL, in one
// transaction with the claim on req's key and fn's stored response.
//
// It begins the transaction and takes the claim (takeClaim) before fn runs:
// while another request holds the key, it answers request_in_progress; when
// a live response is stored under it, it answers req.Replay of it (the
// stored response, or idempotency_key_reused) and fn does not run. fn runs
// on the transaction, tx (a use case's WithTx on it runs under a
// savepoint), and returns its response and whether to keep it: a
// response that is not kept (a 5xx) rolls fn's writes back and stores
// nothing. Storing the response is the last word: it inserts only where no
// live response is stored, so a request that raced past the claim (the
// first committed between this snapshot and this lock) is rolled back and
// answered from the stored row.
func (db *DB) Idempotent(ctx context.Context, req idempotency.Request, fn func(tx Tx) (idempotency.Response, bool)) (*idempotency.Response, error) {
	tx, err := db.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.tx.tx.Rollback() //nolint:errcheck // no-op after commit
	var c claimColumns
	if err := sqlx.GetContext(ctx, tx.ex, &c, takeClaim, req.Scope.MerchantID, req.Scope.Env, req.LockID(), req.Key, req.Since()); err != nil {
		return nil, translate(err)
	}
	switch {
	case !c.Locked:
		return nil, idempotency.InProgress()
	case c.Status != nil:
		return req.Replay(c.stored())
	}
	resp, keep := fn(Tx{tx})
	if !keep {
		return nil, nil
	}
	var stored bool
	err = sqlx.GetContext(ctx, tx.ex, &stored, storeIdempotency,
		req.Scope.MerchantID, req.Scope.Env, req.Key, req.Hash, resp.Status, resp.Body, req.Now, req.Since())
	if errors.Is(err, sql.ErrNoRows) {
		// A response was stored while this request ran: it is the answer.
		_ = tx.tx.tx.Rollback()
		var s storedResponse
		err := sqlx.GetContext(ctx, db.x, &s, selectIdempotency, req.Scope.MerchantID, req.Scope.Env, req.Key, req.Since())
		if errors.Is(err, sql.ErrNoRows) {
			return nil, idempotency.InProgress() // swept meanwhile: a retry runs afresh
		}
		if err != nil {
			return nil, translate(err)
		}
		return req.Replay(idempotency.Stored{Hash: s.Hash, Response: idempotency.Response{Status: s.Status, Body: s.Body}})
	}
	if err != nil {
		return nil, translate(err)
	}
	return nil, tx.commit()
}

type storedResponse struct {
	Hash   []byte `db:"request_hash"`
	Status int    `db:"response_status"`
	Body   []byte `db:"response_body"`
}

// claimColumns are what a statement that takes a claim reports: whether it
// got the lock and the live stored response, if any (NULLs when none).
type claimColumns struct {
	Locked bool   `db:"locked"`
	Hash   []byte `db:"request_hash"`
	Status *int   `db:"response_status"`
	Body   []byte `db:"response_body"`
}

// stored is the stored response of c, whose Status is set.
func (c claimColumns) stored() idempotency.Stored {
	return idempotency.Stored{Hash: c.Hash, Response: idempotency.Response{Status: *c.Status, Body: c.Body}}
}

// takeClaim takes the claim on a key ($3 its advisory lock, $4 the key,
// $5 the moment before which stored responses have expired): it reports
// whether it got the lock, and the live stored response's columns (NULL
// when none). The lock is the transaction's: it holds until the commit
// that stores the response, and a concurrent request is refused rather
// than made to wait.
const takeClaim = `
SELECT l.locked, p.request_hash, p.response_status, p.response_body
FROM (SELECT pg_try_advisory_xact_lock($3) AS locked) l
LEFT JOIN idempotency_keys p ON p.merchant_id = $1 AND p.environment = $2 AND p.key = $4
  AND p.created_at > $5`

const selectIdempotency = `
SELECT request_hash, response_status, response_body
FROM idempotency_keys
WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND created_at > $4`

// storeIdempotency stores a response unless a live one is stored already
// (then it returns no row); an expired row (still present until the sweep)
// is replaced.
const storeIdempotency = `
INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (merchant_id, environment, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
    response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at
WHERE idempotency_keys.created_at <= $8
RETURNING true`

const deleteExpiredIdempotency = `
DELETE FROM idempotency_keys
WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT 1000)`

// DeleteExpiredIdempotencyKeys removes keys older than idempotency.TTL, in
// batches, and returns how many it removed.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.x.ExecContext(ctx, deleteExpiredIdempotency, now.Add(-idempotency.TTL))
		if err != nil {
			return total, translate(err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}

const replaceIdempotency = `
UPDATE idempotency_keys SET response_status = $5, response_body = $6
WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND request_hash = $4`

const forgetIdempotency = `
DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND request_hash = $4`

// ReplaceIdempotent stores resp as the answer of the request req
// committed already: a request that finished its work after its commit
// (an instant credit sent once its intent was stored) answers a replay as
// it answered itself. A 5xx is not kept: the key is forgotten, so a retry
// runs afresh.
func (db *DB) ReplaceIdempotent(ctx context.Context, req idempotency.Request, resp idempotency.Response) error {
	if resp.Status >= 500 {
		_, err := db.x.ExecContext(ctx, forgetIdempotency, req.Scope.MerchantID, req.Scope.Env, req.Key, req.Hash)
		return translate(err)
	}
	_, err := db.x.ExecContext(ctx, replaceIdempotency, req.Scope.MerchantID, req.Scope.Env, req.Key, req.Hash, resp.Status, resp.Body)
	return translate(err)
}
