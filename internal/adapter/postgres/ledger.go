package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

const setPaymentLedger = `UPDATE payments SET metadata = $4::jsonb, refund_of = $5, refund_reason = $6 WHERE ` + byID

// SetPaymentLedger stores a new payment's metadata and refund link.
func (q queries) SetPaymentLedger(ctx context.Context, scope tenant.Scope, id string, l payment.Ledger) error {
	res, err := q.ex.ExecContext(ctx, setPaymentLedger, scope.MerchantID, scope.Env, id, l.Metadata, l.RefundOf, l.RefundReason)
	return oneRow(res, err, errs.NotFound)
}

const setPaymentMetadata = `UPDATE payments SET metadata = $4::jsonb WHERE ` + byID

// SetPaymentMetadata stores a payment's metadata.
func (q queries) SetPaymentMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error {
	res, err := q.ex.ExecContext(ctx, setPaymentMetadata, scope.MerchantID, scope.Env, id, m)
	return oneRow(res, err, errs.NotFound)
}

const setSubscriptionMetadata = `UPDATE subscriptions SET metadata = $4::jsonb WHERE ` + byID

// SetSubscriptionMetadata stores a subscription's metadata.
func (q queries) SetSubscriptionMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error {
	res, err := q.ex.ExecContext(ctx, setSubscriptionMetadata, scope.MerchantID, scope.Env, id, m)
	return oneRow(res, err, errs.NotFound)
}

const setSourceMetadata = `UPDATE funding_sources SET metadata = $4::jsonb WHERE ` + byID

// SetSourceMetadata stores a funding source's metadata.
func (q queries) SetSourceMetadata(ctx context.Context, scope tenant.Scope, id string, m metadata.Metadata) error {
	res, err := q.ex.ExecContext(ctx, setSourceMetadata, scope.MerchantID, scope.Env, id, m)
	return oneRow(res, err, errs.NotFound)
}

// refundsLeft counts a debit's refunds that left and did not fail, as a
// reversal's departure is judged: processed, or in production pending
// with its file assigned (settle_at).
const refundsLeft = `
SELECT count(*) FROM payments
WHERE merchant_id = $1 AND environment = $2 AND refund_of = $3
  AND (status = 'processed' OR (status = 'pending' AND environment = 'production' AND settle_at IS NOT NULL))`

// RefundsLeft counts a debit's refunds that left.
func (q queries) RefundsLeft(ctx context.Context, scope tenant.Scope, debitID string) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q.ex, &n, refundsLeft, scope.MerchantID, scope.Env, debitID)
	return n, translate(err)
}

// balanceLines is the merchant's ledger of scope ($1, $2) on the clock of
// $3 (ledgerClock), the one home of its rule (payment/balance.go): each
// line's id, type, signed amount, payment, status, available_on, the
// debit's dates its at_risk_until is computed from, and created_at.
//
//   - A payment that may move or moved money (pending, processed or
//     failed; never held or canceled) has its movement: positive for a
//     debit, negative for a credit; typed refund or reversal when it is
//     one; pending while the payment is.
//   - A failed payment has its return, the movement undone, dated when it
//     failed.
//   - A return the originator dishonors (not contested: a contested one
//     applies to the payment, which then fails) took the money back as
//     the bank booked it: a return line, and unless the dishonor was too
//     late to send, a dishonor line that brings it back, pending until
//     the dishonor is in a file.
var balanceLines = `
lines AS (
  SELECT 'txn_' || substr(p.id, 5) AS id,
         CASE WHEN p.refund_of IS NOT NULL THEN 'refund' WHEN p.reversal_of IS NOT NULL THEN 'reversal' ELSE p.direction END AS type,
         p.id AS payment_id,
         CASE WHEN p.direction = 'debit' THEN p.amount_cents ELSE -p.amount_cents END AS cents,
         CASE WHEN p.status = 'pending' THEN 'pending' ELSE 'available' END AS status,
         CASE WHEN p.direction = 'debit' THEN p.settlement_date ELSE (p.sent_at AT TIME ZONE 'America/New_York')::date END AS available_on,
         CASE WHEN p.direction = 'debit' THEN p.settlement_date END AS settlement,
         CASE WHEN p.direction = 'debit' THEN p.unauthorized_return_until END AS unauthorized_until,
         p.created_at
  FROM payments p
  WHERE p.merchant_id = $1 AND p.environment = $2 AND p.status IN ('pending', 'processed', 'failed')
    AND ` + ledgerClock + `
  UNION ALL
  SELECT 'txn_' || substr(p.id, 5) || '_return', 'return', p.id,
         CASE WHEN p.direction = 'debit' THEN -p.amount_cents ELSE p.amount_cents END,
         'available', (p.settled_at AT TIME ZONE 'America/New_York')::date, NULL, NULL,
         p.settled_at
  FROM payments p
  WHERE p.merchant_id = $1 AND p.environment = $2 AND p.status = 'failed'
    AND ` + ledgerClock + `
  UNION ALL
  SELECT 'txn_' || d.id || x.suffix, x.type, p.id,
         x.sign * CASE WHEN p.direction = 'debit' THEN p.amount_cents ELSE -p.amount_cents END,
         CASE WHEN x.type = 'dishonor' AND d.file_id IS NULL THEN 'pending' ELSE 'available' END,
         (d.created_at AT TIME ZONE 'America/New_York')::date, NULL, NULL,
         d.created_at
  FROM ach_dishonors d
  JOIN ach_entries e ON e.file_id = d.original_file_id AND e.trace_number = d.original_trace AND e.kind = 'payment'
  JOIN payments p ON p.merchant_id = e.merchant_id AND p.environment = e.environment AND p.id = e.payment_id
  CROSS JOIN LATERAL (VALUES ('_return', 'return', -1), ('', 'dishonor', 1)) AS x (suffix, type, sign)
  WHERE e.merchant_id = $1 AND e.environment = $2 AND d.contested_at IS NULL
    AND (x.type = 'return' OR d.late_for_dishonor_at IS NULL OR d.late_for_dishonor_at = '` + clockDishonorHold + `')
    AND ` + ledgerClock + `
)`

// listBalanceLines pages the ledger newest first; the cursor is a line of
// it ($4), found in the same statement (no row: an unknown cursor).
var listBalanceLines = `
WITH ` + balanceLines + `, cur AS (
  SELECT created_at, id FROM lines WHERE id = $4
  UNION ALL SELECT 'infinity'::timestamptz, '' WHERE $4 = ''
)
SELECT l.id, l.type, l.payment_id, l.cents, l.status, l.available_on, l.settlement, l.unauthorized_until, l.created_at, true AS found
FROM lines l, cur
WHERE (l.created_at, l.id) < (cur.created_at, cur.id)
UNION ALL
SELECT '', '', '', 0, '', NULL, NULL, NULL, 'epoch', false WHERE NOT EXISTS (SELECT 1 FROM cur)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// BalanceLines returns up to p.Limit+1 lines of scope's ledger on the
// context's clock, newest first; errs.NotFound when p.StartingAfter names
// no line.
func (q queries) BalanceLines(ctx context.Context, scope tenant.Scope, p paging.Page) ([]payment.LineRow, error) {
	var rows []struct {
		ID                string     `db:"id"`
		Type              string     `db:"type"`
		PaymentID         string     `db:"payment_id"`
		Cents             int64      `db:"cents"`
		Status            string     `db:"status"`
		AvailableOn       *time.Time `db:"available_on"`
		Settlement        *time.Time `db:"settlement"`
		UnauthorizedUntil *time.Time `db:"unauthorized_until"`
		CreatedAt         time.Time  `db:"created_at"`
		Found             bool       `db:"found"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, listBalanceLines, scope.MerchantID, scope.Env, clockParam(ctx), p.StartingAfter, p.Limit+1); err != nil {
		return nil, translate(err)
	}
	out := make([]payment.LineRow, 0, len(rows))
	for _, r := range rows {
		if !r.Found {
			return nil, errs.New(errs.NotFound, "no such balance transaction")
		}
		out = append(out, payment.LineRow{ID: r.ID, Type: r.Type, PaymentID: r.PaymentID, Status: r.Status, Cents: r.Cents,
			AvailableOn: r.AvailableOn, Settlement: r.Settlement, UnauthorizedUntil: r.UnauthorizedUntil, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// settledPayments reads a day's settled payments with the statement line
// their settlement was matched to: the payment's entry's file expects
// settlements in the direction the bank books the payment on the
// originator's account (a debit brings money in: credit), and
// reconciliation ties each to one statement line; the line of the
// settlement of the payment's settlement date comes first (the statement's
// booking date may be later than the date the file expected). They are
// the money of the clock of $3 (ledgerClock), as the ledger is.
var settledPayments = `
SELECT p.id, p.direction, p.amount_cents, p.status, p.settlement_date, p.metadata, p.refund_of, p.reversal_of,
       e.trace_number, l.statement_id, l.entry_ref, l.booking_date, l.direction AS line_direction, l.amount_cents AS line_cents
FROM payments p
LEFT JOIN ach_entries e ON e.merchant_id = p.merchant_id AND e.environment = p.environment AND e.payment_id = p.id
     AND e.kind = 'payment'
LEFT JOIN LATERAL (
  SELECT sl.statement_id, sl.entry_ref, sl.booking_date, sl.direction, sl.amount_cents
  FROM ach_settlements st JOIN ach_statement_lines sl ON sl.settlement_id = st.id
  WHERE st.file_id = e.file_id AND st.direction = CASE WHEN p.direction = 'debit' THEN 'credit' ELSE 'debit' END
  ORDER BY st.settle_date = p.settlement_date DESC, sl.booking_date = p.settlement_date DESC, sl.id
  LIMIT 1
) l ON true
WHERE p.merchant_id = $1 AND p.environment = $2 AND p.settlement_date = $4::date AND p.status IN ('processed', 'failed')
  AND ` + ledgerClock + `
ORDER BY p.created_at, p.id
LIMIT $5`

// SettledPayments returns up to limit payments settled on day, of the
// context's clock.
func (q queries) SettledPayments(ctx context.Context, scope tenant.Scope, day calendar.Date, limit int) ([]payment.SettledPayment, error) {
	var rows []struct {
		ID          string            `db:"id"`
		Direction   string            `db:"direction"`
		Cents       int64             `db:"amount_cents"`
		Status      string            `db:"status"`
		Settlement  time.Time         `db:"settlement_date"`
		Metadata    metadata.Metadata `db:"metadata"`
		RefundOf    *string           `db:"refund_of"`
		ReversalOf  *string           `db:"reversal_of"`
		Trace       *string           `db:"trace_number"`
		StatementID *string           `db:"statement_id"`
		EntryRef    *string           `db:"entry_ref"`
		Booking     *time.Time        `db:"booking_date"`
		LineDir     *string           `db:"line_direction"`
		LineCents   *int64            `db:"line_cents"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, settledPayments, scope.MerchantID, scope.Env, clockParam(ctx), day.Format(time.DateOnly), limit); err != nil {
		return nil, translate(err)
	}
	out := make([]payment.SettledPayment, len(rows))
	for i, r := range rows {
		out[i] = payment.SettledPayment{PaymentID: r.ID, Direction: payment.Direction(r.Direction), Amount: money.Format(r.Cents),
			Currency: "USD", Status: payment.Status(r.Status), SettlementDate: r.Settlement.Format(time.DateOnly),
			TraceNumber: r.Trace, RefundOf: r.RefundOf, ReversalOf: r.ReversalOf, Metadata: r.Metadata}
		if r.StatementID != nil {
			out[i].StatementLine = &payment.StatementLine{StatementID: *r.StatementID, EntryRef: *r.EntryRef,
				BookingDate: r.Booking.Format(time.DateOnly), Direction: *r.LineDir, Amount: money.Format(*r.LineCents)}
		}
	}
	return out, nil
}
