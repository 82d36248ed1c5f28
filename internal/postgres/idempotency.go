package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/idempotency"
	"github.com/fundsource/fundsource/internal/tenant"
)

// errDiscard rolls back a request whose response is not kept (a 5xx).
var errDiscard = errors.New("discard idempotent response")

// Idempotent runs fn at most once per (scope, key) within idempotency.TTL.
//
// fn runs inside a transaction carried by its ctx, and its response is stored
// in that same transaction, so a request's changes and its stored response
// commit together or not at all: a crash mid-request leaves nothing, and a
// retry with the same key runs afresh. fn returns the response and whether
// to keep it; a response that is not kept (a 5xx) rolls fn's writes back.
//
// When the key was used before with the same requestHash, Idempotent returns
// the stored response without calling fn. A different requestHash gives
// idempotency_key_reused; a first request still running, request_in_progress.
func (db *DB) Idempotent(ctx context.Context, scope tenant.Scope, key string, requestHash []byte, now time.Time,
	fn func(ctx context.Context) (idempotency.Response, bool)) (replay *idempotency.Response, err error) {
	err = db.WithTx(ctx, func(ctx context.Context) error {
		q := db.q(ctx)
		var locked bool
		if err := sqlx.GetContext(ctx, q, &locked, `SELECT pg_try_advisory_xact_lock($1)`, lockID(scope, key)); err != nil {
			return translate(err)
		}
		if !locked {
			return errs.New(errs.RequestInProgress, "A request with this Idempotency-Key is still being processed; retry shortly.")
		}
		var saved struct {
			Hash   []byte `db:"request_hash"`
			Status int    `db:"response_status"`
			Body   []byte `db:"response_body"`
		}
		err := sqlx.GetContext(ctx, q, &saved, selectIdempotency, scope.MerchantID, scope.Env, key, now.Add(-idempotency.TTL))
		switch {
		case err == nil:
			if !bytes.Equal(saved.Hash, requestHash) {
				return errs.New(errs.IdempotencyKeyReused,
					"This Idempotency-Key was already used with a different request; use a new key for a new request.")
			}
			replay = &idempotency.Response{Status: saved.Status, Body: saved.Body}
			return nil
		case !errs.Is(translate(err), errs.NotFound):
			return translate(err)
		}
		resp, keep := fn(ctx)
		if !keep {
			return errDiscard
		}
		_, err = q.ExecContext(ctx, upsertIdempotency, scope.MerchantID, scope.Env, key, requestHash, resp.Status, resp.Body, now)
		return translate(err)
	})
	if errors.Is(err, errDiscard) {
		return nil, nil
	}
	return replay, err
}

const selectIdempotency = `
SELECT request_hash, response_status, response_body
FROM idempotency_keys
WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND created_at > $4`

// An expired row (still present until the sweep) is replaced.
const upsertIdempotency = `
INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (merchant_id, environment, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
    response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at`

// lockID is the advisory lock of one (scope, key): 64 bits of its SHA-256.
func lockID(scope tenant.Scope, key string) int64 {
	h := sha256.Sum256([]byte("idem\x00" + scope.MerchantID + "\x00" + string(scope.Env) + "\x00" + key))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

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
