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

const setSessionReveal = `UPDATE dashboard_sessions SET reveal_pad = $2 WHERE id_hash = $1`

// SetSessionReveal keeps a one-time pad with the session.
func (q queries) SetSessionReveal(ctx context.Context, idHash, pad []byte) error {
	res, err := q.ex.ExecContext(ctx, setSessionReveal, idHash, pad)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errs.New(errs.NotFound, "session not found")
	}
	return nil
}

// takeSessionReveal clears the pad and returns what it was: the row lock
// of the UPDATE makes two readers of one cookie get it at most once.
const takeSessionReveal = `
UPDATE dashboard_sessions s SET reveal_pad = NULL
FROM (SELECT id_hash, reveal_pad FROM dashboard_sessions WHERE id_hash = $1 FOR UPDATE) old
WHERE s.id_hash = old.id_hash AND old.reveal_pad IS NOT NULL
RETURNING old.reveal_pad`

// TakeSessionReveal returns the session's pad once.
func (q queries) TakeSessionReveal(ctx context.Context, idHash []byte) ([]byte, error) {
	var pad []byte
	err := sqlx.GetContext(ctx, q.ex, &pad, takeSessionReveal, idHash)
	if err != nil {
		if err = translate(err); errs.Is(err, errs.NotFound) {
			return nil, nil
		}
		return nil, err
	}
	return pad, nil
}
