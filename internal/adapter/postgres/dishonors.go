package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/ach"
)

type dishonorRow struct {
	ID               string     `db:"id"`
	Code             string     `db:"code"`
	OriginalTrace    string     `db:"original_trace"`
	OriginalFileID   string     `db:"original_file_id"`
	ReturnTrace      string     `db:"return_trace"`
	ReturnCode       string     `db:"return_code"`
	ReturnSettlement string     `db:"return_settlement"`
	RDFI             string     `db:"rdfi"`
	CreatedAt        time.Time  `db:"created_at"`
	FileID           *string    `db:"file_id"`
	Trace            *string    `db:"trace_number"`
	ContestedCode    *string    `db:"contested_code"`
	ReturnSettledOn  *time.Time `db:"return_settled_on"`
	LateAt           *time.Time `db:"late_for_dishonor_at"`
}

func (r dishonorRow) domain() ach.Dishonor {
	d := ach.Dishonor{ID: r.ID, Code: r.Code, Entry: ach.Entry{Trace: r.OriginalTrace, FileID: r.OriginalFileID},
		ReturnTrace: r.ReturnTrace, ReturnCode: r.ReturnCode, ReturnSettlement: r.ReturnSettlement, RDFI: r.RDFI,
		CreatedAt: r.CreatedAt.UTC(), FileID: deref(r.FileID), Trace: deref(r.Trace), ContestedCode: deref(r.ContestedCode),
		LateForDishonorAt: utcPtr(r.LateAt)}
	if t := r.ReturnSettledOn; t != nil {
		d.ReturnSettledOn = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return d
}

const dishonorColumns = `id, code, original_trace, original_file_id, return_trace, return_code, return_settlement, rdfi,
       created_at, file_id, trace_number, contested_code, return_settled_on,
       NULLIF(late_for_dishonor_at, '` + clockDishonorHold + `') AS late_for_dishonor_at`

// clockDishonorHold is the late_for_dishonor_at a test clock's dishonor
// is stored with until it is sent: a release that does not know clocks
// reads it as kept back and never puts it into a file for the bank;
// dishonorsToSend on the clock takes it.
const clockDishonorHold = "infinity"

var insertDishonor = `
INSERT INTO ach_dishonors (id, code, original_trace, original_file_id, return_trace, return_code, return_settlement, rdfi, created_at,
                           return_settled_on, late_for_dishonor_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
        CASE WHEN $11::timestamptz IS NULL AND (SELECT f.test_clock_id FROM ach_files f WHERE f.id = $4) IS NOT NULL
             THEN '` + clockDishonorHold + `'::timestamptz ELSE $11::timestamptz END)
ON CONFLICT (original_file_id, original_trace, return_trace) DO NOTHING`

// InsertDishonor stores a dishonor; false when the same return of the
// same entry has one already.
func (q queries) InsertDishonor(ctx context.Context, d ach.Dishonor) (bool, error) {
	r, err := q.ex.ExecContext(ctx, insertDishonor, d.ID, d.Code, d.Entry.Trace, d.Entry.FileID, d.ReturnTrace, d.ReturnCode,
		d.ReturnSettlement, d.RDFI, d.CreatedAt, dishonorDate(d.ReturnSettledOn), d.LateForDishonorAt)
	if err != nil {
		return false, translate(err)
	}
	n, err := r.RowsAffected()
	return n == 1, translate(err)
}

const entryDishonored = `
SELECT EXISTS (SELECT 1 FROM ach_dishonors WHERE original_file_id = $1 AND original_trace = $2)`

// EntryDishonored reports whether a return of an entry was dishonored.
func (q queries) EntryDishonored(ctx context.Context, fileID, trace string) (bool, error) {
	var ok bool
	err := sqlx.GetContext(ctx, q.ex, &ok, entryDishonored, fileID, trace)
	return ok, translate(err)
}

var dishonorsToSend = `SELECT ` + dishonorColumns + ` FROM ach_dishonors
WHERE file_id IS NULL AND ` + fileClockRows("original_file_id", 2) + `
  AND (late_for_dishonor_at IS NULL OR (late_for_dishonor_at = '` + clockDishonorHold + `' AND $2::text IS NOT NULL))
ORDER BY created_at, id
LIMIT $1
FOR UPDATE SKIP LOCKED`

// DishonorsToSend locks dishonors not yet in a file.
func (q queries) DishonorsToSend(ctx context.Context, limit int) ([]ach.Dishonor, error) {
	var rows []dishonorRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, dishonorsToSend, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, dishonorRow.domain), nil
}

const assignDishonor = `
UPDATE ach_dishonors SET file_id = $2, trace_number = $3 WHERE id = $1 AND file_id IS NULL`

// AssignDishonor puts a dishonor into a file under its trace number.
func (q queries) AssignDishonor(ctx context.Context, id, fileID, trace string) error {
	_, err := q.ex.ExecContext(ctx, assignDishonor, id, fileID, trace)
	return translate(err)
}

const dishonorsOfFile = `SELECT ` + dishonorColumns + ` FROM ach_dishonors WHERE file_id = $1 ORDER BY trace_number`

const dishonoredEntry = `SELECT ` + achEntryColumns + ` FROM ach_entries WHERE file_id = $1 AND trace_number = $2`

// ACHDishonors returns a file's dishonors with their original entries.
func (q queries) ACHDishonors(ctx context.Context, fileID string) ([]ach.Dishonor, error) {
	var rows []dishonorRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, dishonorsOfFile, fileID); err != nil {
		return nil, translate(err)
	}
	out := mapRows(rows, dishonorRow.domain)
	// Dishonors are rare: one read per original entry.
	for i, d := range out {
		var e achEntryRow
		if err := sqlx.GetContext(ctx, q.ex, &e, dishonoredEntry, d.Entry.FileID, d.Entry.Trace); err != nil {
			return nil, translate(err)
		}
		out[i].Entry = e.domain()
	}
	return out, nil
}

const sentDishonor = `SELECT ` + dishonorColumns + ` FROM ach_dishonors
WHERE original_trace = $1 AND trace_number = $2
ORDER BY created_at DESC
LIMIT 1
FOR UPDATE`

// SentDishonor locks the newest dishonor of an original trace number sent
// under trace.
func (q queries) SentDishonor(ctx context.Context, originalTrace, trace string) (ach.Dishonor, error) {
	var r dishonorRow
	if err := sqlx.GetContext(ctx, q.ex, &r, sentDishonor, originalTrace, trace); err != nil {
		return ach.Dishonor{}, translate(err)
	}
	return r.domain(), nil
}

const markDishonorContested = `
UPDATE ach_dishonors SET contested_code = $2, contested_at = $3 WHERE id = $1`

// MarkDishonorContested records the receiving bank's contest of a dishonor.
func (q queries) MarkDishonorContested(ctx context.Context, id, code string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, markDishonorContested, id, code, at)
	return translate(err)
}

const markDishonorLate = `
UPDATE ach_dishonors SET late_for_dishonor_at = $2 WHERE id = $1 AND file_id IS NULL`

// MarkDishonorLate keeps an unsent dishonor from ever being sent.
func (q queries) MarkDishonorLate(ctx context.Context, id string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, markDishonorLate, id, at)
	return translate(err)
}

// dishonorDate is a date column's value: NULL for the zero date.
func dishonorDate(d time.Time) *string {
	if d.IsZero() {
		return nil
	}
	s := d.Format(time.DateOnly)
	return &s
}
