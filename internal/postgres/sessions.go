package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/merchant"
)

type sessionRow struct {
	IDHash     []byte    `db:"id_hash"`
	MerchantID string    `db:"merchant_id"`
	CreatedAt  time.Time `db:"created_at"`
	LastSeenAt time.Time `db:"last_seen_at"`
	IP         string    `db:"ip"`
	UserAgent  string    `db:"user_agent"`
}

func (r sessionRow) domain() merchant.Session {
	return merchant.Session{IDHash: r.IDHash, MerchantID: r.MerchantID, CreatedAt: r.CreatedAt.UTC(),
		LastSeenAt: r.LastSeenAt.UTC(), IP: r.IP, UserAgent: r.UserAgent}
}

const sessionColumns = `id_hash, merchant_id, created_at, last_seen_at, ip, user_agent`

const insertSession = `INSERT INTO dashboard_sessions (` + sessionColumns + `) VALUES ($1, $2, $3, $4, $5, $6)`

// InsertSession records a dashboard sign-in.
func (q queries) InsertSession(ctx context.Context, s merchant.Session) error {
	_, err := q.ex.ExecContext(ctx, insertSession, s.IDHash, s.MerchantID, s.CreatedAt, s.LastSeenAt, s.IP, s.UserAgent)
	return translate(err)
}

const selectSession = `SELECT ` + sessionColumns + ` FROM dashboard_sessions WHERE id_hash = $1`

// SessionByHash returns a session by the hash of its id.
func (q queries) SessionByHash(ctx context.Context, idHash []byte) (merchant.Session, error) {
	return getOne[sessionRow](ctx, q.ex, selectSession, idHash)
}

// TouchSession records a session's latest use.
func (q queries) TouchSession(ctx context.Context, idHash []byte, at time.Time) error {
	res, err := q.ex.ExecContext(ctx, `UPDATE dashboard_sessions SET last_seen_at = $2 WHERE id_hash = $1`, idHash, at)
	return oneRow(res, err, errs.NotFound)
}

// DeleteSession ends a session.
func (q queries) DeleteSession(ctx context.Context, idHash []byte) error {
	res, err := q.ex.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE id_hash = $1`, idHash)
	return oneRow(res, err, errs.NotFound)
}

// DeleteSessionsExcept ends every session of a merchant but keep's.
func (q queries) DeleteSessionsExcept(ctx context.Context, merchantID string, keep []byte) (int64, error) {
	res, err := q.ex.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE merchant_id = $1 AND id_hash <> $2`, merchantID, keep)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// DeleteSessionsBefore ends sessions created before created or last seen
// before seen.
func (q queries) DeleteSessionsBefore(ctx context.Context, created, seen time.Time) (int64, error) {
	res, err := q.ex.ExecContext(ctx, `DELETE FROM dashboard_sessions WHERE created_at < $1 OR last_seen_at < $2`, created, seen)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

const merchantSessions = `SELECT ` + sessionColumns + ` FROM dashboard_sessions WHERE merchant_id = $1
ORDER BY created_at DESC LIMIT 100`

// Sessions lists a merchant's sessions, newest first (at most 100).
func (q queries) Sessions(ctx context.Context, merchantID string) ([]merchant.Session, error) {
	var rows []sessionRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, merchantSessions, merchantID); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, sessionRow.domain), nil
}
