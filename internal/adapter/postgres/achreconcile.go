package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// claimStatement records a statement read, unless it was: by its own row
// (a concurrent claim of the same id waits on the key, then does
// nothing) or, for statements read before the table, by its lines.
const claimStatement = `
INSERT INTO ach_statements (statement_id, statement_sha256, read_at)
SELECT $1, $2, $3
WHERE NOT EXISTS (SELECT 1 FROM ach_statement_lines WHERE statement_id = $1)
ON CONFLICT (statement_id) DO NOTHING`

// ClaimStatement records that a statement was read; false when it was
// before.
func (q queries) ClaimStatement(ctx context.Context, id, digest string, at time.Time) (bool, error) {
	res, err := q.ex.ExecContext(ctx, claimStatement, id, digest, at)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

const insertStatementLine = `
INSERT INTO ach_statement_lines (statement_sha256, statement_id, entry_ref, booking_date, direction, amount_cents, info)
VALUES ($1, $2, $3, $4::date, $5, $6, $7) RETURNING id`

// InsertStatementLine stores one booked statement entry, unmatched.
func (q queries) InsertStatementLine(ctx context.Context, l ach.StatementLine) (int64, error) {
	var id int64
	err := sqlx.GetContext(ctx, q.ex, &id, insertStatementLine, l.StatementSHA, l.StatementID, l.Ref, l.Date, l.Direction, l.Cents, l.Info)
	return id, translate(err)
}

type statementLineRow struct {
	ID           int64  `db:"id"`
	StatementSHA string `db:"statement_sha256"`
	StatementID  string `db:"statement_id"`
	Ref          string `db:"entry_ref"`
	Date         string `db:"booking_date"`
	Direction    string `db:"direction"`
	Cents        int64  `db:"amount_cents"`
	Info         string `db:"info"`
	SettlementID *int64 `db:"settlement_id"`
}

func (r statementLineRow) domain() ach.StatementLine {
	l := ach.StatementLine{ID: r.ID, StatementSHA: r.StatementSHA, StatementID: r.StatementID, Ref: r.Ref, Date: r.Date,
		Direction: r.Direction, Cents: r.Cents, Info: r.Info}
	if r.SettlementID != nil {
		l.SettlementID = *r.SettlementID
	}
	return l
}

const statementLineColumns = `id, statement_sha256, statement_id, entry_ref, to_char(booking_date, 'YYYY-MM-DD') AS booking_date,
       direction, amount_cents, info, settlement_id`

const unmatchedLines = `SELECT ` + statementLineColumns + ` FROM ach_statement_lines
WHERE settlement_id IS NULL AND booking_date >= $1::date ORDER BY booking_date, id`

// UnmatchedLines lists unmatched statement lines booked on or after since.
func (q queries) UnmatchedLines(ctx context.Context, since string) ([]ach.StatementLine, error) {
	var rows []statementLineRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, unmatchedLines, since); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, statementLineRow.domain), nil
}

// matchSettlement takes the closest unmatched settlement of the line's
// direction and amount dated at most the given number of days before its booking date
// (outbound files before return files at the same date), and pairs them.
const matchSettlement = `
WITH candidate AS (
    SELECT s.id FROM ach_settlements s
    WHERE s.direction = $2 AND s.amount_cents = $3
      AND s.settle_date <= $4::date AND s.settle_date >= $4::date - $5::integer
      AND NOT EXISTS (SELECT 1 FROM ach_statement_lines l WHERE l.settlement_id = s.id)
    ORDER BY s.settle_date DESC, (s.file_id IS NULL), s.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE ach_statement_lines SET settlement_id = (SELECT id FROM candidate), matched_at = $6
WHERE id = $1 AND settlement_id IS NULL AND EXISTS (SELECT 1 FROM candidate)
RETURNING settlement_id`

// MatchSettlement pairs a line with an expected settlement; false when
// none fits.
func (q queries) MatchSettlement(ctx context.Context, l ach.StatementLine, at time.Time) (bool, error) {
	var id int64
	err := sqlx.GetContext(ctx, q.ex, &id, matchSettlement, l.ID, l.Direction, l.Cents, l.Date, ach.MatchDays, at)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, translate(err)
}

const settleMatchedFiles = `
UPDATE ach_files f SET status = 'settled', settled_at = $1
WHERE f.status = 'delivered'
  AND EXISTS (SELECT 1 FROM ach_settlements s WHERE s.file_id = f.id)
  AND NOT EXISTS (SELECT 1 FROM ach_settlements s WHERE s.file_id = f.id
                  AND NOT EXISTS (SELECT 1 FROM ach_statement_lines l WHERE l.settlement_id = s.id))
RETURNING f.id, f.serial, f.name, f.status, f.created_at, f.offset_traces`

// SettleMatchedFiles marks settled the delivered files whose settlements
// are all matched.
func (q queries) SettleMatchedFiles(ctx context.Context, at time.Time) ([]ach.File, error) {
	var rows []achFileRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, settleMatchedFiles, at); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, achFileRow.domain), nil
}

// settledFilePayments: a file's payment entries, each with the booking
// date of the line matched to the settlement of its effective date and
// direction on the account (a debit entry is money in); an entry without
// an effective date (built before they were stored) takes the file's
// latest booking date.
const settledFilePayments = `
SELECT e.merchant_id, e.environment, e.payment_id,
       to_char(COALESCE(
           (SELECT l.booking_date FROM ach_settlements s JOIN ach_statement_lines l ON l.settlement_id = s.id
            WHERE s.file_id = e.file_id AND s.settle_date = e.effective_date
              AND s.direction = CASE WHEN e.debit THEN 'credit' ELSE 'debit' END),
           (SELECT max(l.booking_date) FROM ach_settlements s JOIN ach_statement_lines l ON l.settlement_id = s.id
            WHERE s.file_id = e.file_id)), 'YYYY-MM-DD') AS booking_date
FROM ach_entries e
WHERE e.file_id = $1 AND e.kind = 'payment'
ORDER BY e.trace_number`

// SettledFilePayments lists a settled file's payments with the booking
// dates that settled them.
func (q queries) SettledFilePayments(ctx context.Context, fileID string) ([]ach.SettledPayment, error) {
	var rows []struct {
		MerchantID string  `db:"merchant_id"`
		Env        string  `db:"environment"`
		PaymentID  string  `db:"payment_id"`
		Date       *string `db:"booking_date"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, settledFilePayments, fileID); err != nil {
		return nil, translate(err)
	}
	out := make([]ach.SettledPayment, 0, len(rows))
	for _, r := range rows {
		if r.Date == nil {
			return nil, fmt.Errorf("payment %s of settled file %s: no statement line settled it", r.PaymentID, fileID)
		}
		d, err := time.Parse(time.DateOnly, *r.Date)
		if err != nil {
			return nil, fmt.Errorf("payment %s of settled file %s: booking date %q: %w", r.PaymentID, fileID, *r.Date, err)
		}
		out = append(out, ach.SettledPayment{Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Env)},
			PaymentID: r.PaymentID, Date: d})
	}
	return out, nil
}

const reconciliationLines = `SELECT ` + statementLineColumns + ` FROM ach_statement_lines
WHERE booking_date = $1::date ORDER BY id`

// reconciliationSettlements: the date's settlements and the ones the
// date's lines matched, with the name of their file.
const reconciliationSettlements = `
SELECT s.id, COALESCE(s.file_id, '') AS file_id, COALESCE(s.inbound_sha256, '') AS inbound_sha256,
       COALESCE(f.name, i.name) AS name, to_char(s.settle_date, 'YYYY-MM-DD') AS settle_date, s.direction,
       s.amount_cents, s.entries,
       EXISTS (SELECT 1 FROM ach_statement_lines l WHERE l.settlement_id = s.id) AS matched
FROM ach_settlements s
LEFT JOIN ach_files f ON f.id = s.file_id
LEFT JOIN ach_inbound_files i ON i.sha256 = s.inbound_sha256
WHERE s.settle_date = $1::date
   OR s.id IN (SELECT settlement_id FROM ach_statement_lines WHERE booking_date = $1::date AND settlement_id IS NOT NULL)
ORDER BY s.settle_date, s.id`

// Reconciliation lists a date's statement lines and settlements.
func (q queries) Reconciliation(ctx context.Context, date string) ([]ach.StatementLine, []ach.Settlement, error) {
	var lines []statementLineRow
	if err := sqlx.SelectContext(ctx, q.ex, &lines, reconciliationLines, date); err != nil {
		return nil, nil, translate(err)
	}
	var rows []struct {
		ID        int64  `db:"id"`
		FileID    string `db:"file_id"`
		Inbound   string `db:"inbound_sha256"`
		Name      string `db:"name"`
		Date      string `db:"settle_date"`
		Direction string `db:"direction"`
		Cents     int64  `db:"amount_cents"`
		Entries   int    `db:"entries"`
		Matched   bool   `db:"matched"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, reconciliationSettlements, date); err != nil {
		return nil, nil, translate(err)
	}
	out := make([]ach.Settlement, len(rows))
	for i, r := range rows {
		out[i] = ach.Settlement{ID: r.ID, FileID: r.FileID, InboundSHA256: r.Inbound, Name: r.Name, Date: r.Date,
			Direction: r.Direction, Cents: r.Cents, Entries: r.Entries, Matched: r.Matched}
	}
	return mapRows(lines, statementLineRow.domain), out, nil
}

// unmatchedCounts: lines without a settlement, and settlements no line
// matched dated on or before the newest statement's booking date (later
// ones are merely not stated yet).
const unmatchedCounts = `
SELECT (SELECT count(*) FROM ach_statement_lines WHERE settlement_id IS NULL) AS statement,
       (SELECT count(*) FROM ach_settlements s
        WHERE s.settle_date <= (SELECT max(booking_date) FROM ach_statement_lines)
          AND NOT EXISTS (SELECT 1 FROM ach_statement_lines l WHERE l.settlement_id = s.id)) AS service`

// UnmatchedCounts counts what reconciliation left open on each side.
func (q queries) UnmatchedCounts(ctx context.Context) (int64, int64, error) {
	var r struct {
		Statement int64 `db:"statement"`
		Service   int64 `db:"service"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, unmatchedCounts); err != nil {
		return 0, 0, translate(err)
	}
	return r.Statement, r.Service, nil
}
