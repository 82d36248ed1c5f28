package postgres

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
)

// Requests is the API request log's store on q's executor.
func (q queries) Requests() requestlog.Store { return q }

// maxBatchSpan is the longest time between the first and the last arrival
// in one row of api_request_batches; the table checks it, and
// ListRequests relies on it to know when it has read far enough.
const maxBatchSpan = time.Second

const insertBatch = `
INSERT INTO api_request_batches (merchant_id, environment, first_at, last_at, entries, body)
VALUES ($1, $2, $3, $4, $5, $6)`

// InsertRequests writes entries as rows of api_request_batches, a row per
// scope and second of arrivals (batchesOf), in one transaction when there
// is more than one row.
func (q queries) InsertRequests(ctx context.Context, entries []requestlog.Entry) error {
	batches := batchesOf(entries)
	write := func(q queries) error {
		for _, b := range batches {
			if _, err := q.ex.ExecContext(ctx, insertBatch, b.scope.MerchantID, string(b.scope.Env),
				time.UnixMicro(b.firstUS), time.UnixMicro(b.lastUS), len(b.entries), b.body()); err != nil {
				return translate(err)
			}
		}
		return nil
	}
	if len(batches) == 1 {
		return write(q)
	}
	return q.withTx(ctx, write)
}

type requestRow struct {
	MerchantID string    `db:"merchant_id"`
	Env        string    `db:"environment"`
	ID         string    `db:"id"`
	CreatedAt  time.Time `db:"created_at"`
	Method     string    `db:"method"`
	Path       string    `db:"path"`
	Status     int       `db:"status"`
	LatencyUS  int64     `db:"latency_us"`
}

func (r requestRow) domain() requestlog.Entry {
	return requestlog.Entry{Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Env)}, RequestID: r.ID,
		At: r.CreatedAt.UTC(), Method: r.Method, Path: r.Path, Status: r.Status, Latency: time.Duration(r.LatencyUS) * time.Microsecond}
}

// listRequests is a page of the rows of api_requests, where servers that
// write no api_request_batches keep their entries (older servers, which
// run beside this one during an upgrade): parameters as for list, then
// since, method, class, request id.
const listRequests = `SELECT merchant_id, environment, id, created_at, method, path, status, latency_us FROM api_requests
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4) AND created_at >= $6
  AND ($7 = '' OR method = $7) AND ($8 = 0 OR status / 100 = $8) AND ($9 = '' OR id = $9)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// pageBatches reads the scope's rows of api_request_batches that can hold
// an entry between the page's bounds in time, newest first by first
// arrival, after the last row read (its first arrival and id), at most
// the chunk's number of rows.
const pageBatches = `
SELECT id, first_at, body
FROM api_request_batches
WHERE merchant_id = $1 AND environment = $2 AND first_at <= $3 AND last_at >= $4 AND (first_at, id) < ($5, $6)
ORDER BY first_at DESC, id DESC
LIMIT $7`

type batchRow struct {
	ID      int64     `db:"id"`
	FirstAt time.Time `db:"first_at"`
	Body    []byte    `db:"body"`
}

// newestFirst orders entries by arrival, then request id, both descending.
func newestFirst(a, b requestlog.Entry) int {
	if c := b.At.Compare(a.At); c != 0 {
		return c
	}
	return strings.Compare(b.RequestID, a.RequestID)
}

// ListRequests returns up to limit requests since since after the cursor
// matching f, newest first. It reads rows of api_request_batches newest
// first by first arrival, in growing chunks, and stops once the limit-th
// entry it has arrived later than any unread row can reach: an unread row
// starts no later than the last row read, and spans at most maxBatchSpan.
// Then it merges the page of api_requests.
func (q queries) ListRequests(ctx context.Context, scope tenant.Scope, f requestlog.Filter, since time.Time, after requestlog.Cursor, limit int) ([]requestlog.Entry, error) {
	before := endOfTime
	if !after.At.IsZero() {
		before = after.At
	}
	var page []requestlog.Entry
	keep := func(e requestlog.Entry) {
		if !e.At.Before(since) && after.Before(e.At, e.RequestID) && f.Matches(e) {
			page = append(page, e)
		}
	}
	keyAt, keyID, chunk := endOfTime, int64(math.MaxInt64), 8
	for {
		var rows []batchRow
		if err := sqlx.SelectContext(ctx, q.ex, &rows, pageBatches, scope.MerchantID, scope.Env, before, since,
			keyAt, keyID, chunk); err != nil {
			return nil, translate(err)
		}
		for _, r := range rows {
			entries, err := decodeBatch(scope, r.FirstAt.UTC(), r.Body)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				keep(e)
			}
		}
		slices.SortFunc(page, newestFirst)
		page = page[:min(len(page), limit)]
		if len(rows) < chunk {
			break
		}
		last := rows[len(rows)-1]
		if len(page) == limit && page[limit-1].At.After(last.FirstAt.Add(maxBatchSpan)) {
			break
		}
		keyAt, keyID, chunk = last.FirstAt, last.ID, min(2*chunk, 256)
	}
	var legacy []requestRow
	if err := sqlx.SelectContext(ctx, q.ex, &legacy, listRequests, scope.MerchantID, scope.Env, before, after.RequestID, limit,
		since, f.Method, f.Class, f.RequestID); err != nil {
		return nil, translate(err)
	}
	for _, r := range legacy {
		page = append(page, r.domain())
	}
	slices.SortFunc(page, newestFirst)
	return page[:min(len(page), limit)], nil
}

const deleteRequestsBefore = `
DELETE FROM api_requests WHERE ctid = ANY (ARRAY(SELECT ctid FROM api_requests WHERE created_at < $1 LIMIT $2))`

const deleteBatchesBefore = `
WITH gone AS (
    DELETE FROM api_request_batches
    WHERE ctid = ANY (ARRAY(SELECT ctid FROM api_request_batches WHERE last_at < $1 LIMIT $2))
    RETURNING entries AS n)
SELECT count(*) AS batches, coalesce(sum(n), 0) AS requests FROM gone`

// DeleteRequestsBefore deletes up to limit rows of each table whose
// requests all arrived before t, and returns how many requests went and
// whether no such row is left.
func (q queries) DeleteRequestsBefore(ctx context.Context, t time.Time, limit int) (int64, bool, error) {
	res, err := q.ex.ExecContext(ctx, deleteRequestsBefore, t, limit)
	if err != nil {
		return 0, false, translate(err)
	}
	legacy, err := res.RowsAffected()
	if err != nil {
		return 0, false, translate(err)
	}
	var gone struct {
		Batches  int64 `db:"batches"`
		Requests int64 `db:"requests"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &gone, deleteBatchesBefore, t, limit); err != nil {
		return legacy, false, translate(err)
	}
	return legacy + gone.Requests, legacy < int64(limit) && gone.Batches < int64(limit), nil
}
