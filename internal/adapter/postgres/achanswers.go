package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/errs"
)

type answerRow struct {
	ID            string     `db:"id"`
	Kind          string     `db:"kind"`
	Reason        string     `db:"reason"`
	Candidates    int        `db:"candidates"`
	OriginalTrace string     `db:"original_trace"`
	Trace         string     `db:"answer_trace"`
	Code          string     `db:"code"`
	Cents         int64      `db:"amount_cents"`
	AccountLast4  string     `db:"account_last4"`
	CompanyID     string     `db:"company_id"`
	SettlementDay string     `db:"settlement_day"`
	Arrived       string     `db:"arrived_on"`
	FileSHA256    string     `db:"file_sha256"`
	KeyID         string     `db:"key_id"`
	Sealed        []byte     `db:"sealed_records"`
	Status        string     `db:"status"`
	PaymentID     *string    `db:"payment_id"`
	Note          *string    `db:"note"`
	ResolvedBy    *string    `db:"resolved_by"`
	ResolvedAt    *time.Time `db:"resolved_at"`
	CreatedAt     time.Time  `db:"created_at"`
}

func (r answerRow) domain() ach.UnmatchedAnswer {
	return ach.UnmatchedAnswer{ID: r.ID, Kind: r.Kind, Reason: r.Reason, Candidates: r.Candidates, OriginalTrace: r.OriginalTrace,
		Trace: r.Trace, Code: r.Code, Cents: r.Cents, AccountLast4: r.AccountLast4, CompanyID: r.CompanyID,
		SettlementDay: r.SettlementDay, Arrived: r.Arrived, FileSHA256: r.FileSHA256, KeyID: r.KeyID, Sealed: r.Sealed,
		Status: r.Status, PaymentID: deref(r.PaymentID), Note: deref(r.Note), ResolvedBy: deref(r.ResolvedBy), ResolvedAt: utcPtr(r.ResolvedAt), CreatedAt: r.CreatedAt.UTC()}
}

const answerColumns = `id, kind, reason, candidates, original_trace, answer_trace, code, amount_cents, account_last4, company_id,
       settlement_day, to_char(arrived_on, 'YYYY-MM-DD') AS arrived_on, file_sha256, key_id, sealed_records, status,
       payment_id, note, resolved_by, resolved_at, created_at`

const insertUnmatchedAnswer = `
INSERT INTO ach_unmatched_answers (id, kind, reason, candidates, original_trace, answer_trace, code, amount_cents,
       account_last4, company_id, settlement_day, arrived_on, file_sha256, key_id, sealed_records, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::date, $13, $14, $15, $16)
ON CONFLICT (kind, original_trace, answer_trace, code, arrived_on) DO NOTHING`

// InsertUnmatchedAnswer keeps an answer; false when it is kept already.
func (q queries) InsertUnmatchedAnswer(ctx context.Context, a ach.UnmatchedAnswer) (bool, error) {
	res, err := q.ex.ExecContext(ctx, insertUnmatchedAnswer, a.ID, a.Kind, a.Reason, a.Candidates, a.OriginalTrace, a.Trace,
		a.Code, a.Cents, a.AccountLast4, a.CompanyID, a.SettlementDay, a.Arrived, a.FileSHA256, a.KeyID, a.Sealed, a.CreatedAt)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

const unmatchedAnswers = `SELECT ` + answerColumns + ` FROM ach_unmatched_answers
WHERE $1 = '' OR status = $1 ORDER BY created_at, id LIMIT $2`

// UnmatchedAnswers lists answers of a status ("" for all), oldest first.
func (q queries) UnmatchedAnswers(ctx context.Context, status string, limit int) ([]ach.UnmatchedAnswer, error) {
	var rows []answerRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, unmatchedAnswers, status, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, answerRow.domain), nil
}

const lockUnmatchedAnswer = `SELECT ` + answerColumns + ` FROM ach_unmatched_answers WHERE id = $1 FOR UPDATE`

// LockUnmatchedAnswer locks an answer.
func (q queries) LockUnmatchedAnswer(ctx context.Context, id string) (ach.UnmatchedAnswer, error) {
	return getOne[answerRow](ctx, q.ex, lockUnmatchedAnswer, id)
}

const resolveUnmatchedAnswer = `
UPDATE ach_unmatched_answers SET status = $2, payment_id = NULLIF($3, ''), note = $4, resolved_by = $5, resolved_at = $6
WHERE id = $1 AND status = 'open'`

// ResolveUnmatchedAnswer records an operator's decision on an open answer.
func (q queries) ResolveUnmatchedAnswer(ctx context.Context, id, status, paymentID, note, by string, at time.Time) error {
	res, err := q.ex.ExecContext(ctx, resolveUnmatchedAnswer, id, status, paymentID, note, by, at)
	return oneRow(res, err, errs.Conflict)
}

// CountOpenAnswers counts the answers no operator resolved.
func (q queries) CountOpenAnswers(ctx context.Context) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, q.ex, &n, `SELECT count(*) FROM ach_unmatched_answers WHERE status = 'open'`)
	return n, translate(err)
}

const entryOfPayment = `SELECT ` + achEntryColumns + ` FROM ach_entries WHERE payment_id = $1 AND kind = 'payment' FOR UPDATE`

// EntryOfPayment returns any merchant's payment's entry, locked.
func (q queries) EntryOfPayment(ctx context.Context, paymentID string) (ach.Entry, error) {
	return getOne[achEntryRow](ctx, q.ex, entryOfPayment, paymentID)
}

const unmatchedAnswersOfCompany = `SELECT ` + answerColumns + ` FROM ach_unmatched_answers
WHERE status = 'open' AND company_id = $1 ORDER BY created_at, id LIMIT $2`

// UnmatchedAnswersOfCompany lists the open answers whose batch named a
// company identification, oldest first.
func (q queries) UnmatchedAnswersOfCompany(ctx context.Context, companyID string, limit int) ([]ach.UnmatchedAnswer, error) {
	var rows []answerRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, unmatchedAnswersOfCompany, companyID, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, answerRow.domain), nil
}
