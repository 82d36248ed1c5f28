package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/ach"
)

const undeliveredACHFiles = `
SELECT id, serial, name, status, created_at, offset_traces FROM ach_files
WHERE status IN ('building', 'built', 'failed') ORDER BY created_at`

// UndeliveredACHFiles lists the files built or failed, oldest first.
func (q queries) UndeliveredACHFiles(ctx context.Context) ([]ach.File, error) {
	var rows []achFileRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, undeliveredACHFiles); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, achFileRow.domain), nil
}

const lockUndeliveredACHFile = `
SELECT id FROM ach_files WHERE id = $1 AND status IN ('building', 'built', 'failed') FOR UPDATE SKIP LOCKED`

// LockUndeliveredACHFile locks a file still to deliver; false when
// another process holds it or it was delivered meanwhile.
func (q queries) LockUndeliveredACHFile(ctx context.Context, id string) (bool, error) {
	var got string
	err := sqlx.GetContext(ctx, q.ex, &got, lockUndeliveredACHFile, id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, translate(err)
}

const markACHFileDelivered = `
UPDATE ach_files SET status = 'delivered', transport = $2, delivered_at = $3, written_at = $3, last_error = NULL,
       entry_count = $4, debit_cents = $5, credit_cents = $6, sha256 = $7
WHERE id = $1`

// MarkACHFileDelivered records that the transport has the file.
func (q queries) MarkACHFileDelivered(ctx context.Context, id, transport string, at time.Time, t ach.Totals) error {
	_, err := q.ex.ExecContext(ctx, markACHFileDelivered, id, transport, at, t.Entries, t.Debit, t.Credit, t.SHA256)
	return translate(err)
}

const markACHFileFailed = `
UPDATE ach_files SET status = 'failed', attempts = attempts + 1, last_error = $2,
       entry_count = $3, debit_cents = $4, credit_cents = $5, sha256 = $6
WHERE id = $1`

// MarkACHFileFailed records a failed delivery.
func (q queries) MarkACHFileFailed(ctx context.Context, id, reason string, t ach.Totals) error {
	_, err := q.ex.ExecContext(ctx, markACHFileFailed, id, reason, t.Entries, t.Debit, t.Credit, t.SHA256)
	return translate(err)
}

const insertSettlement = `
INSERT INTO ach_settlements (file_id, inbound_sha256, settle_date, direction, amount_cents, entries)
VALUES (NULLIF($1, ''), NULLIF($2, ''), $3::date, $4, $5, $6)
ON CONFLICT DO NOTHING`

// InsertSettlement stores an expected statement line; once per file,
// date and direction.
func (q queries) InsertSettlement(ctx context.Context, s ach.Settlement) error {
	_, err := q.ex.ExecContext(ctx, insertSettlement, s.FileID, s.InboundSHA256, s.Date, s.Direction, s.Cents, s.Entries)
	return translate(err)
}

type inboundRow struct {
	SHA256     string    `db:"sha256"`
	Name       string    `db:"name"`
	Kind       string    `db:"kind"`
	Status     string    `db:"status"`
	Error      *string   `db:"error"`
	Result     *string   `db:"result"`
	ReceivedAt time.Time `db:"received_at"`
}

func (r inboundRow) domain() ach.Inbound {
	in := ach.Inbound{SHA256: r.SHA256, Name: r.Name, Kind: r.Kind, Status: r.Status, Error: deref(r.Error), ReceivedAt: r.ReceivedAt.UTC()}
	if r.Result != nil {
		in.Result = json.RawMessage(*r.Result)
	}
	return in
}

const claimInbound = `
INSERT INTO ach_inbound_files (sha256, name, kind, status, received_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (sha256) DO NOTHING RETURNING sha256`

const inboundBySHA = `
SELECT sha256, name, kind, status, error, result::text AS result, received_at FROM ach_inbound_files WHERE sha256 = $1`

// ClaimInbound records a file by its SHA-256, or returns the record
// already there (false). The insert waits for a concurrent claim of the
// same file to end, and then finds its row.
func (q queries) ClaimInbound(ctx context.Context, in ach.Inbound) (ach.Inbound, bool, error) {
	var got string
	err := sqlx.GetContext(ctx, q.ex, &got, claimInbound, in.SHA256, in.Name, in.Kind, in.Status, in.ReceivedAt)
	if err == nil {
		return in, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return in, false, translate(err)
	}
	var r inboundRow
	if err := sqlx.GetContext(ctx, q.ex, &r, inboundBySHA, in.SHA256); err != nil {
		return in, false, translate(err)
	}
	return r.domain(), false, nil
}

const finishInbound = `
UPDATE ach_inbound_files SET kind = $2, status = $3, error = NULLIF($4, ''), result = $5::jsonb WHERE sha256 = $1`

// FinishInbound stores a claimed file's outcome.
func (q queries) FinishInbound(ctx context.Context, in ach.Inbound) error {
	var result *string
	if len(in.Result) > 0 {
		s := string(in.Result)
		result = &s
	}
	_, err := q.ex.ExecContext(ctx, finishInbound, in.SHA256, in.Kind, in.Status, in.Error, result)
	return translate(err)
}

const inboundFiles = `
SELECT sha256, name, kind, status, error, result::text AS result, received_at FROM ach_inbound_files
ORDER BY received_at DESC, sha256 LIMIT $1`

// InboundFiles lists the newest inbound files first.
func (q queries) InboundFiles(ctx context.Context, limit int) ([]ach.Inbound, error) {
	var rows []inboundRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, inboundFiles, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, inboundRow.domain), nil
}

type fileSummaryRow struct {
	ID          string     `db:"id"`
	Name        string     `db:"name"`
	Status      string     `db:"status"`
	Transport   *string    `db:"transport"`
	Entries     int        `db:"entry_count"`
	Debit       *int64     `db:"debit_cents"`
	Credit      *int64     `db:"credit_cents"`
	Attempts    int        `db:"attempts"`
	LastError   *string    `db:"last_error"`
	CreatedAt   time.Time  `db:"created_at"`
	DeliveredAt *time.Time `db:"delivered_at"`
	SettledAt   *time.Time `db:"settled_at"`
	Window      *string    `db:"window_time"` // nil for a file an operator forced
}

func (r fileSummaryRow) domain() ach.FileSummary {
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	return ach.FileSummary{ID: r.ID, Name: r.Name, Status: r.Status, Transport: r.Transport, Entries: r.Entries,
		DebitCents: r.Debit, CreditCents: r.Credit, Attempts: r.Attempts, LastError: r.LastError,
		CreatedAt: r.CreatedAt.UTC(), DeliveredAt: utc(r.DeliveredAt), SettledAt: utc(r.SettledAt), Window: r.Window}
}

// achFiles counts a file's entries when it was never built for delivery
// (entry_count is set then), its dishonors included.
const achFiles = `
SELECT f.id, f.name, f.status, f.transport,
       COALESCE(f.entry_count, (SELECT count(*) FROM ach_entries e WHERE e.file_id = f.id)
                             + (SELECT count(*) FROM ach_dishonors d WHERE d.file_id = f.id)) AS entry_count,
       f.debit_cents, f.credit_cents, f.attempts, f.last_error, f.created_at,
       COALESCE(f.delivered_at, f.written_at) AS delivered_at, f.settled_at,
       (SELECT w.window_time FROM ach_windows w WHERE w.file_id = f.id LIMIT 1) AS window_time
FROM ach_files f ORDER BY f.created_at DESC, f.serial DESC LIMIT $1`

// ACHFiles lists the newest files first.
func (q queries) ACHFiles(ctx context.Context, limit int) ([]ach.FileSummary, error) {
	var rows []fileSummaryRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, achFiles, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, fileSummaryRow.domain), nil
}
