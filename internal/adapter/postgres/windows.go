package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

// paymentDates are the select-list part that reads a payment's departure
// (payment.Dates) and its source's holder type, without locking the
// source (p is the payment's alias).
const paymentDates = `, same_day, sent_at, effective_date, settlement_date, unauthorized_return_until,
       COALESCE((SELECT f.account_holder_type = 'individual' FROM funding_sources f
                 WHERE f.merchant_id = p.merchant_id AND f.environment = p.environment AND f.id = p.funding_source_id),
                false) AS holder_individual`

// paymentDatesRow is paymentDates' columns.
type paymentDatesRow struct {
	SameDay           bool       `db:"same_day"`
	SentAt            *time.Time `db:"sent_at"`
	EffectiveDate     *time.Time `db:"effective_date"`
	SettlementDate    *time.Time `db:"settlement_date"`
	UnauthorizedUntil *time.Time `db:"unauthorized_return_until"`
	HolderIndividual  bool       `db:"holder_individual"`
}

func (r paymentDatesRow) apply(p *payment.Payment) {
	p.SameDay, p.HolderIndividual = r.SameDay, r.HolderIndividual
	p.Dates = payment.NewDates(r.SentAt, r.EffectiveDate, r.SettlementDate, r.UnauthorizedUntil)
}

// achAssignmentLock is the transaction-level advisory lock that makes
// assignments take turns: the two-key lock ("ACH\0" as a 32-bit integer,
// 1), whose key space does not meet the one-key locks of idempotency keys.
const achAssignmentLock = `SELECT pg_advisory_xact_lock(x'41434800'::int, 1)`

// LockACHAssignment waits for the assignment lock and holds it until the
// transaction ends.
func (q queries) LockACHAssignment(ctx context.Context) error {
	_, err := q.ex.ExecContext(ctx, achAssignmentLock)
	return translate(err)
}

const claimACHWindow = `
INSERT INTO ach_windows (window_date, window_time, claimed_at) VALUES ($1, $2, $3)
ON CONFLICT (window_date, window_time) DO NOTHING`

const claimClockWindow = `
INSERT INTO test_clock_windows (test_clock_id, window_date, window_time, claimed_at) VALUES ($4, $1, $2, $3)
ON CONFLICT (test_clock_id, window_date, window_time) DO NOTHING`

// ClaimACHWindow inserts window w's row (of the context's test clock, if
// any); false when it exists. A concurrent claim's insert waits for this
// transaction, then finds the row.
func (q queries) ClaimACHWindow(ctx context.Context, w calendar.Window, at time.Time) (bool, error) {
	args := []any{w.Date.Format(time.DateOnly), w.At.String(), at}
	query := claimACHWindow
	if c := clockParam(ctx); c.Valid {
		query, args = claimClockWindow, append(args, c.String)
	}
	res, err := q.ex.ExecContext(ctx, query, args...)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

const setACHWindowFile = `UPDATE ach_windows SET file_id = $3 WHERE window_date = $1 AND window_time = $2`

const setClockWindowFile = `UPDATE test_clock_windows SET file_id = $3 WHERE window_date = $1 AND window_time = $2 AND test_clock_id = $4`

// SetACHWindowFile names the file a window built.
func (q queries) SetACHWindowFile(ctx context.Context, w calendar.Window, fileID string) error {
	args := []any{w.Date.Format(time.DateOnly), w.At.String(), fileID}
	query := setACHWindowFile
	if c := clockParam(ctx); c.Valid {
		query, args = setClockWindowFile, append(args, c.String)
	}
	_, err := q.ex.ExecContext(ctx, query, args...)
	return translate(err)
}

const setPaymentSent = `
UPDATE payments SET settle_at = $4, sent_at = $5, effective_date = $6, settlement_date = $7, unauthorized_return_until = $8
WHERE ` + byID

// SetPaymentSent stores how a payment leaves and when it settles; sent_at
// stays NULL while s.At is zero (its file is not delivered yet).
func (q queries) SetPaymentSent(ctx context.Context, scope tenant.Scope, id string, s payment.Sent) error {
	var at *time.Time
	if !s.At.IsZero() {
		at = &s.At
	}
	var until *string
	if d := s.UnauthorizedUntil(); d != nil {
		v := d.Format(time.DateOnly)
		until = &v
	}
	_, err := q.ex.ExecContext(ctx, setPaymentSent, scope.MerchantID, scope.Env, id, s.SettleAt, at,
		s.Effective.Format(time.DateOnly), s.Settlement.Format(time.DateOnly), until)
	return translate(err)
}

const setPaymentSettlement = `
UPDATE payments SET settlement_date = $4, unauthorized_return_until = $5
WHERE ` + byID

// SetPaymentSettlement stores the settlement date the bank's statement
// shows, and the unauthorized-return window's last day after it.
func (q queries) SetPaymentSettlement(ctx context.Context, scope tenant.Scope, id string, settlement calendar.Date, until *calendar.Date) error {
	var last *string
	if until != nil {
		v := until.Format(time.DateOnly)
		last = &v
	}
	_, err := q.ex.ExecContext(ctx, setPaymentSettlement, scope.MerchantID, scope.Env, id, settlement.Format(time.DateOnly), last)
	return translate(err)
}

// balances sums a scope's pending payments by direction, and its
// processed debits whose unauthorized-return window is still open on the
// day $4; and the sums of its ledger's available and pending lines, from
// the statement that lists them (balanceLines): all of them the money of
// the clock of $3 (ledgerClock).
var balances = `
WITH ` + balanceLines + `, sums AS (
  SELECT COALESCE(sum(cents) FILTER (WHERE status = 'available'), 0)::bigint AS available,
         COALESCE(sum(cents) FILTER (WHERE status = 'pending'), 0)::bigint AS pending
  FROM lines
)
SELECT (SELECT available FROM sums) AS available, (SELECT pending FROM sums) AS pending,
       COALESCE(sum(p.amount_cents) FILTER (WHERE p.status = 'pending' AND p.direction = 'debit'), 0) AS pending_debits,
       COALESCE(sum(p.amount_cents) FILTER (WHERE p.status = 'pending' AND p.direction = 'credit'), 0) AS pending_credits,
       COALESCE(sum(p.amount_cents) FILTER (WHERE p.status = 'processed'), 0) AS at_risk_debits
FROM payments p
WHERE p.merchant_id = $1 AND p.environment = $2
  AND (p.status = 'pending'
       OR (p.status = 'processed' AND p.direction = 'debit' AND p.unauthorized_return_until IS NOT NULL
           AND p.unauthorized_return_until >= $4::date))
  AND ` + ledgerClock

// Balances sums a scope's money in flight and at risk on today, of the
// context's clock.
func (q queries) Balances(ctx context.Context, scope tenant.Scope, today calendar.Date) (payment.BalanceCents, error) {
	var r struct {
		PendingDebits  int64 `db:"pending_debits"`
		PendingCredits int64 `db:"pending_credits"`
		AtRiskDebits   int64 `db:"at_risk_debits"`
		Available      int64 `db:"available"`
		Pending        int64 `db:"pending"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, balances, scope.MerchantID, scope.Env, clockParam(ctx), today.Format(time.DateOnly)); err != nil {
		return payment.BalanceCents{}, translate(err)
	}
	return payment.BalanceCents{PendingDebits: r.PendingDebits, PendingCredits: r.PendingCredits, AtRiskDebits: r.AtRiskDebits,
		Available: r.Available, Pending: r.Pending}, nil
}
