package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

type achFileRow struct {
	ID        string         `db:"id"`
	Serial    int64          `db:"serial"`
	Name      string         `db:"name"`
	Status    string         `db:"status"`
	CreatedAt time.Time      `db:"created_at"`
	Offsets   pq.StringArray `db:"offset_traces"`
}

func (r achFileRow) domain() ach.File {
	return ach.File{ID: r.ID, Serial: r.Serial, Name: r.Name, Status: r.Status, CreatedAt: r.CreatedAt.UTC(),
		OffsetTraces: []string(r.Offsets)}
}

var insertACHFile = `
INSERT INTO ach_files (id, name, status, created_at, offset_traces, test_clock_id, lease_owner, lease_until)
VALUES ($1, $2, $3, $4, $5, $6::text, CASE WHEN $6::text IS NOT NULL THEN '` + clockFileLease + `' END,
        CASE WHEN $6::text IS NOT NULL THEN 'infinity'::timestamptz END) RETURNING serial`

// InsertACHFile stores a new file record and returns its serial.
func (q queries) InsertACHFile(ctx context.Context, f ach.File) (int64, error) {
	var serial int64
	err := sqlx.GetContext(ctx, q.ex, &serial, insertACHFile, f.ID, f.Name, f.Status, f.CreatedAt, pq.StringArray(append([]string{}, f.OffsetTraces...)), clockParam(ctx))
	return serial, translate(err)
}

// clockDeposits keeps depositsToOriginate to the clock of $2 (f is the
// deposit's source).
var clockDeposits = clockRows("f", "f.customer_id", 2)

var depositsToOriginate = `
SELECT m.merchant_id, m.environment, m.funding_source_id, f.customer_id, m.seq,
       (f.removed_at IS NOT NULL OR f.blocked_at IS NOT NULL) AS source_gone
FROM micro_deposits m
JOIN funding_sources f ON f.merchant_id = m.merchant_id AND f.environment = m.environment AND f.id = m.funding_source_id
WHERE (m.environment = 'production' OR $2::text IS NOT NULL) AND m.status = 'pending' AND m.method = 'micro_deposits'
  AND ` + clockDeposits + `
  AND NOT EXISTS (SELECT 1 FROM ach_entries e
                  WHERE e.merchant_id = m.merchant_id AND e.environment = m.environment
                    AND e.funding_source_id = m.funding_source_id AND e.deposit_seq = m.seq)
ORDER BY m.initiated_at
LIMIT $1
FOR UPDATE OF m SKIP LOCKED`

// DepositsToOriginate locks open production verifications not yet in a
// file.
func (q queries) DepositsToOriginate(ctx context.Context, limit int) ([]ach.Deposit, error) {
	var rows []struct {
		MerchantID  string `db:"merchant_id"`
		Environment string `db:"environment"`
		SourceID    string `db:"funding_source_id"`
		CustomerID  string `db:"customer_id"`
		Seq         int    `db:"seq"`
		SourceGone  bool   `db:"source_gone"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, depositsToOriginate, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	out := make([]ach.Deposit, len(rows))
	for i, r := range rows {
		out[i] = ach.Deposit{Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
			SourceID: r.SourceID, CustomerID: r.CustomerID, Seq: r.Seq, SourceGone: r.SourceGone}
	}
	return out, nil
}

var paymentsToOriginate = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + `,` + paymentStanding + ` FROM payments p
WHERE (environment = 'production' OR $2::text IS NOT NULL) AND status = 'pending' AND settle_at IS NULL AND ` + achRail + `
  AND ` + clockRows("p", "p.customer_id", 2) + `
  AND NOT EXISTS (SELECT 1 FROM ach_entries e
                  WHERE e.merchant_id = p.merchant_id AND e.environment = p.environment AND e.payment_id = p.id)
ORDER BY created_at
LIMIT $1
FOR UPDATE OF p SKIP LOCKED`

// PaymentsToOriginate locks pending production payments not yet in a
// file, with their standing. settle_at IS NULL (set at assignment) is what
// keeps a payment another run assigned while this statement waited for
// its lock out: the lock re-checks the payment's own row, not the NOT
// EXISTS on ach_entries, which keeps the statement's older snapshot.
func (q queries) PaymentsToOriginate(ctx context.Context, limit int) ([]payment.Payment, error) {
	var rows []standingRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, paymentsToOriginate, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, standingRow.domain), nil
}

// nextTraceSequence takes the next number of an ODFI's sequence, which
// continues across file dates and wraps after 9,999,999 to 1, creating it
// at 1, under the sequence row's lock until the transaction ends.
const nextTraceSequence = `
INSERT INTO ach_trace_sequences AS s (odfi, last_seq) VALUES ($1, 1)
ON CONFLICT (odfi) DO UPDATE SET last_seq = CASE WHEN s.last_seq >= 9999999 THEN 1 ELSE s.last_seq + 1 END
RETURNING last_seq`

// NextTraceSequence is the next 7-digit trace sequence number of odfi
// (8 digits).
func (q queries) NextTraceSequence(ctx context.Context, odfi string) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, q.ex, &n, nextTraceSequence, odfi)
	return n, translate(err)
}

type achEntryRow struct {
	Trace        string  `db:"trace_number"`
	FileID       string  `db:"file_id"`
	MerchantID   string  `db:"merchant_id"`
	Environment  string  `db:"environment"`
	Kind         string  `db:"kind"`
	SourceID     string  `db:"funding_source_id"`
	CustomerID   string  `db:"customer_id"`
	DepositSeq   *int    `db:"deposit_seq"`
	DepositIndex *int    `db:"deposit_index"`
	PaymentID    *string `db:"payment_id"`
	Debit        bool    `db:"debit"`
	Cents        *int64  `db:"amount_cents"` // NULL for micro-deposits (kept sealed)
	ReturnCode   *string `db:"return_code"`
	ReturnTrace  *string `db:"return_trace"`
	SEC          *string `db:"sec_code"`
	Description  *string `db:"entry_description"`
	PaymentType  *string `db:"payment_type"`
	FileDate     *string `db:"file_date"`
	Recurs       bool    `db:"recurs"` // achEntryByTrace only
	ReceiverName *string `db:"receiver_name"`
	IndividualID *string `db:"individual_id"`
	Addenda      *string `db:"addenda"`
	Effective    *string `db:"effective_date"`
	CompanyName  *string `db:"company_name"`
	CompanyID    *string `db:"company_id"`
	AccountFP    []byte  `db:"account_fp"`
}

func (r achEntryRow) domain() ach.Entry {
	e := ach.Entry{Trace: r.Trace, FileID: r.FileID, Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		Kind: r.Kind, SourceID: r.SourceID, CustomerID: r.CustomerID, PaymentID: deref(r.PaymentID), Debit: r.Debit,
		ReturnCode: deref(r.ReturnCode), ReturnTrace: deref(r.ReturnTrace), Class: ach.Class{SEC: deref(r.SEC), Description: deref(r.Description), PaymentType: deref(r.PaymentType)},
		FileDate: deref(r.FileDate), Recurs: r.Recurs,
		ReceiverName: deref(r.ReceiverName), IndividualID: deref(r.IndividualID), Addenda: deref(r.Addenda),
		EffectiveDate: deref(r.Effective), CompanyName: deref(r.CompanyName), CompanyID: deref(r.CompanyID), AccountFP: r.AccountFP}
	if r.DepositSeq != nil {
		e.DepositSeq, e.DepositIndex = *r.DepositSeq, *r.DepositIndex
	}
	if r.Cents != nil {
		e.Cents = *r.Cents
	}
	return e
}

const achEntryColumns = `trace_number, file_id, merchant_id, environment, kind, funding_source_id, customer_id,
       deposit_seq, deposit_index, payment_id, debit, amount_cents, return_code, sec_code, entry_description, payment_type, return_trace,
       to_char(file_date, 'YYYY-MM-DD') AS file_date, receiver_name, individual_id, addenda,
       to_char(effective_date, 'YYYY-MM-DD') AS effective_date, company_name, company_id, account_fp`

const insertACHEntry = `
INSERT INTO ach_entries (trace_number, file_id, merchant_id, environment, kind, funding_source_id, customer_id,
       deposit_seq, deposit_index, payment_id, debit, amount_cents, return_code, sec_code, entry_description, payment_type,
       file_date, receiver_name, individual_id, addenda, effective_date, company_name, company_id, account_fp)
VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, 0), NULLIF($9, 0), NULLIF($10, ''), $11, NULLIF($12, 0), NULL,
        NULLIF($13, ''), NULLIF($14, ''), NULLIF($15, ''), NULLIF($16, '')::date, NULLIF($17, ''), NULLIF($18, ''),
        NULLIF($19, ''), NULLIF($20, '')::date, NULLIF($21, ''), NULLIF($22, ''), $23)`

// InsertACHEntry assigns an entry to a file; errs.Conflict when the
// payment or deposit is in a file already. A micro-deposit's amount is not
// stored: it stays sealed with its verification.
func (q queries) InsertACHEntry(ctx context.Context, e ach.Entry) error {
	_, err := q.ex.ExecContext(ctx, insertACHEntry, e.Trace, e.FileID, e.Scope.MerchantID, e.Scope.Env, e.Kind,
		e.SourceID, e.CustomerID, e.DepositSeq, e.DepositIndex, e.PaymentID, e.Debit, e.Cents,
		e.Class.SEC, e.Class.Description, e.Class.PaymentType, e.FileDate, e.ReceiverName, e.IndividualID, e.Addenda, e.EffectiveDate,
		e.CompanyName, e.CompanyID, nullBytes(e.AccountFP))
	return translate(err)
}

const achEntriesOfFile = `SELECT ` + achEntryColumns + ` FROM ach_entries WHERE file_id = $1 ORDER BY trace_number`

// ACHEntries returns a file's entries by trace number.
func (q queries) ACHEntries(ctx context.Context, fileID string) ([]ach.Entry, error) {
	var rows []achEntryRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, achEntriesOfFile, fileID); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, achEntryRow.domain), nil
}

// achEntriesByTrace locks every entry with trace number $1, newest file
// first; recurs says an older entry carries the number too.
const achEntriesByTrace = `SELECT ` + achEntryColumns + `,
       EXISTS (SELECT 1 FROM ach_entries o JOIN ach_files of ON of.id = o.file_id, ach_files mine
               WHERE mine.id = ach_entries.file_id AND o.trace_number = ach_entries.trace_number
                 AND (of.created_at, of.serial) < (mine.created_at, mine.serial)) AS recurs
FROM ach_entries
WHERE trace_number = $1
ORDER BY (SELECT f.created_at FROM ach_files f WHERE f.id = ach_entries.file_id) DESC,
         (SELECT f.serial FROM ach_files f WHERE f.id = ach_entries.file_id) DESC
FOR UPDATE`

// ACHEntriesByTrace locks every entry with a trace number, newest first.
func (q queries) ACHEntriesByTrace(ctx context.Context, trace string) ([]ach.Entry, error) {
	var rows []achEntryRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, achEntriesByTrace, trace); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, achEntryRow.domain), nil
}

const achEntryIn = `SELECT ` + achEntryColumns + ` FROM ach_entries WHERE file_id = $1 AND trace_number = $2 FOR UPDATE`

// ACHEntryIn locks the entry with a trace number in a file.
func (q queries) ACHEntryIn(ctx context.Context, fileID, trace string) (ach.Entry, error) {
	return getOne[achEntryRow](ctx, q.ex, achEntryIn, fileID, trace)
}

const markACHEntryReturned = `
UPDATE ach_entries SET return_code = $3, return_trace = NULLIF($4, ''), returned_at = $5
WHERE file_id = $1 AND trace_number = $2`

// MarkACHEntryReturned records the return applied to an entry of a file.
func (q queries) MarkACHEntryReturned(ctx context.Context, fileID, trace, code, returnTrace string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, markACHEntryReturned, fileID, trace, code, returnTrace, at)
	return translate(err)
}

const achFile = `SELECT id, serial, name, status, created_at, offset_traces FROM ach_files WHERE id = $1`

// ACHFile reads a file record.
func (q queries) ACHFile(ctx context.Context, id string) (ach.File, error) {
	var r achFileRow
	if err := sqlx.GetContext(ctx, q.ex, &r, achFile, id); err != nil {
		return ach.File{}, translate(err)
	}
	return r.domain(), nil
}

const paymentEntry = `SELECT ` + achEntryColumns + ` FROM ach_entries
WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND kind = 'payment'`

// PaymentEntry returns a payment's entry.
func (q queries) PaymentEntry(ctx context.Context, scope tenant.Scope, paymentID string) (ach.Entry, error) {
	return getOne[achEntryRow](ctx, q.ex, paymentEntry, scope.MerchantID, scope.Env, paymentID)
}

// nullBytes is b, or NULL when b is empty.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
