package postgres

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
)

// Requests is the API request log's store on q's executor.
func (q queries) Requests() requestlog.Store { return q }

// copyRequests writes a batch of the request log with COPY, which lib/pq
// runs for a statement that starts with COPY: one statement for the whole
// batch, its rows streamed. No ON CONFLICT: the server makes every request
// id (see package requestlog), so none is written twice.
const copyRequests = `COPY api_requests (merchant_id, environment, id, created_at, method, path, status, latency_us) FROM STDIN`

// InsertRequests writes entries, whose request ids are new, in one COPY
// in a transaction of its own (or q's).
func (q queries) InsertRequests(ctx context.Context, entries []requestlog.Entry) error {
	return q.withTx(ctx, func(tx queries) error {
		stmt, err := tx.tx.tx.PrepareContext(ctx, copyRequests)
		if err != nil {
			return translate(err)
		}
		defer stmt.Close()
		for _, e := range entries {
			if _, err := stmt.ExecContext(ctx, e.Scope.MerchantID, string(e.Scope.Env), e.RequestID, e.At,
				e.Method, e.Path, e.Status, e.Latency.Microseconds()); err != nil {
				return translate(err)
			}
		}
		_, err = stmt.ExecContext(ctx)
		return translate(err)
	})
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
