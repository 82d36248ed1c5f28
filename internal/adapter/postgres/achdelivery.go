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
WHERE status IN ('building', 'built', 'failed') AND test_clock_id IS NOT DISTINCT FROM $1::text ORDER BY created_at`

// UndeliveredACHFiles lists the files built or failed, oldest first.
func (q queries) UndeliveredACHFiles(ctx context.Context) ([]ach.File, error) {
	var rows []achFileRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, undeliveredACHFiles, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, achFileRow.domain), nil
}

var claimACHFile = `
UPDATE ach_files SET lease_owner = CASE WHEN test_clock_id IS NULL THEN $2 ELSE '` + clockFileLease + `:' || $2 END,
       lease_until = CASE WHEN test_clock_id IS NULL THEN $4::timestamptz ELSE 'infinity'::timestamptz END
WHERE id = $1 AND status IN ('building', 'built', 'failed') AND test_clock_id IS NOT DISTINCT FROM $5::text
  AND (lease_until IS NULL OR lease_until <= $3 OR (test_clock_id IS NOT NULL AND lease_owner LIKE '` + clockFileLease + `%'))`

// ClaimACHFile takes the delivery lease of a file still to deliver until
// until; false when another process holds an unexpired lease or the file
// was delivered meanwhile.
func (q queries) ClaimACHFile(ctx context.Context, id, owner string, now, until time.Time) (bool, error) {
	res, err := q.ex.ExecContext(ctx, claimACHFile, id, owner, now, until, clockParam(ctx))
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

const achFileBytes = `SELECT COALESCE(bytes_key_id, '') AS bytes_key_id, sealed_bytes FROM ach_files WHERE id = $1`

// ACHFileBytes reads a file's sealed bytes; none when it was never built
// to bytes by this release.
func (q queries) ACHFileBytes(ctx context.Context, id string) (string, []byte, error) {
	var r struct {
		KeyID  string `db:"bytes_key_id"`
		Sealed []byte `db:"sealed_bytes"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, achFileBytes, id); err != nil {
		return "", nil, translate(err)
	}
	return r.KeyID, r.Sealed, nil
}

const keepACHFileBytes = `
UPDATE ach_files SET bytes_key_id = $2, sealed_bytes = $3, redated_at = COALESCE($4, redated_at) WHERE id = $1`

// KeepACHFileBytes stores the sealed bytes a file is delivered as, and
// when its entries were re-dated (nil: not now).
func (q queries) KeepACHFileBytes(ctx context.Context, id, keyID string, sealed []byte, redated *time.Time) error {
	_, err := q.ex.ExecContext(ctx, keepACHFileBytes, id, keyID, sealed, redated)
	return translate(err)
}

const redateACHEntry = `UPDATE ach_entries SET effective_date = $3::date WHERE file_id = $1 AND trace_number = $2`

// RedateACHEntry moves an entry of a file still to deliver to another
// effective date.
func (q queries) RedateACHEntry(ctx context.Context, fileID, trace, effective string) error {
	_, err := q.ex.ExecContext(ctx, redateACHEntry, fileID, trace, effective)
	return translate(err)
}

const markFilePaymentsSent = `
UPDATE payments p SET sent_at = $2
FROM ach_entries e
WHERE e.file_id = $1 AND e.kind = 'payment'
  AND p.merchant_id = e.merchant_id AND p.environment = e.environment AND p.id = e.payment_id AND p.sent_at IS NULL`

// MarkFilePaymentsSent records when the bank's server took the file of a
// file's payments.
func (q queries) MarkFilePaymentsSent(ctx context.Context, fileID string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, markFilePaymentsSent, fileID, at)
	return translate(err)
}

const achFileByName = `SELECT id, serial, name, status, created_at, offset_traces FROM ach_files WHERE name = $1`

// ACHFileByName reads a file record by its name.
func (q queries) ACHFileByName(ctx context.Context, name string) (ach.File, error) {
	var r achFileRow
	if err := sqlx.GetContext(ctx, q.ex, &r, achFileByName, name); err != nil {
		return ach.File{}, translate(err)
	}
	return r.domain(), nil
}

var markACHFileDelivered = `
UPDATE ach_files SET status = 'delivered', transport = $3, delivered_at = $4, written_at = $4, last_error = NULL,
       entry_count = $5, debit_cents = $6, credit_cents = $7, sha256 = $8, lease_owner = NULL, lease_until = NULL
WHERE id = $1 AND lease_owner IN ($2, '` + clockFileLease + `:' || $2) AND status IN ('building', 'built', 'failed')`

// MarkACHFileDelivered records that the transport has the file, under
// the lease owner's claim; false when the lease was lost and another
// process recorded the file meanwhile.
func (q queries) MarkACHFileDelivered(ctx context.Context, id, owner, transport string, at time.Time, t ach.Totals) (bool, error) {
	res, err := q.ex.ExecContext(ctx, markACHFileDelivered, id, owner, transport, at, t.Entries, t.Debit, t.Credit, t.SHA256)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

var markACHFileFailed = `
UPDATE ach_files SET status = 'failed', attempts = attempts + 1, last_error = $3,
       entry_count = $4, debit_cents = $5, credit_cents = $6, sha256 = $7, lease_owner = CASE WHEN test_clock_id IS NULL THEN NULL ELSE '` + clockFileLease + `' END,
       lease_until = CASE WHEN test_clock_id IS NULL THEN NULL ELSE 'infinity'::timestamptz END
WHERE id = $1 AND lease_owner IN ($2, '` + clockFileLease + `:' || $2) AND status IN ('building', 'built', 'failed')`

// MarkACHFileFailed records a failed delivery and gives the lease back.
func (q queries) MarkACHFileFailed(ctx context.Context, id, owner, reason string, t ach.Totals) error {
	_, err := q.ex.ExecContext(ctx, markACHFileFailed, id, owner, reason, t.Entries, t.Debit, t.Credit, t.SHA256)
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
