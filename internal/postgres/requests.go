package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
)

// Requests is the API request log's store on q's executor.
func (q queries) Requests() requestlog.Store { return q }

// insertRequests writes a batch in one statement: one array per column.
const insertRequests = `
INSERT INTO api_requests (merchant_id, environment, id, created_at, method, path, status, latency_us)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::smallint[], $8::bigint[])
ON CONFLICT DO NOTHING`

// InsertRequests writes entries; a request id already written is skipped.
func (q queries) InsertRequests(ctx context.Context, entries []requestlog.Entry) error {
	n := len(entries)
	merchants, envs, ids, methods, paths := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ats, statuses, latencies := make([]time.Time, n), make([]int64, n), make([]int64, n)
	for i, e := range entries {
		merchants[i], envs[i], ids[i], methods[i], paths[i] = e.Scope.MerchantID, string(e.Scope.Env), e.RequestID, e.Method, e.Path
		ats[i], statuses[i], latencies[i] = e.At, int64(e.Status), e.Latency.Microseconds()
	}
	_, err := q.ex.ExecContext(ctx, insertRequests, pq.StringArray(merchants), pq.StringArray(envs), pq.StringArray(ids),
		pq.Array(ats), pq.StringArray(methods), pq.StringArray(paths), pq.Int64Array(statuses), pq.Int64Array(latencies))
	return translate(err)
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

const listRequests = `SELECT merchant_id, environment, id, created_at, method, path, status, latency_us FROM api_requests
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4) AND created_at >= $6
  AND ($7 = '' OR method = $7) AND ($8 = 0 OR status / 100 = $8) AND ($9 = '' OR id = $9)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListRequests returns up to p.Limit+1 requests since since matching f, newest first.
func (q queries) ListRequests(ctx context.Context, scope tenant.Scope, f requestlog.Filter, since time.Time, p paging.Page) ([]requestlog.Entry, error) {
	var rows []requestRow
	if err := q.list(ctx, &rows, listRequests, "api_requests", scope, p, since, f.Method, f.Class, f.RequestID); err != nil {
		return nil, err
	}
	return mapRows(rows, requestRow.domain), nil
}

const deleteRequestsBefore = `
DELETE FROM api_requests WHERE ctid = ANY (ARRAY(SELECT ctid FROM api_requests WHERE created_at < $1 LIMIT $2))`

// DeleteRequestsBefore deletes up to limit requests older than t.
func (q queries) DeleteRequestsBefore(ctx context.Context, t time.Time, limit int) (int64, error) {
	res, err := q.ex.ExecContext(ctx, deleteRequestsBefore, t, limit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
