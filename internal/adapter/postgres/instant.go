package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

// The SQL of instant payouts (payment/instant.go).

// achRail is the condition on a payment p's own row that it goes over
// ACH: the statements that build files, settle sandbox payments and
// cancel unsent ones leave instant credits to their rail. It is a column
// of the row, so a FOR UPDATE that waited re-checks it.
const achRail = `(rail IS NULL OR rail = 'ach')`

// paymentRailColumns are a payment's method, rail, fallback reason and
// rail status, read with it.
const paymentRailColumns = `, method, rail, fallback_reason, rail_status`

type paymentRailRow struct {
	Method         *string `db:"method"`
	Rail           *string `db:"rail"`
	FallbackReason *string `db:"fallback_reason"`
	RailStatus     *string `db:"rail_status"`
}

func (r paymentRailRow) apply(p *payment.Payment) {
	p.Method, p.Rail, p.FallbackReason, p.RailStatus = deref(r.Method), deref(r.Rail), r.FallbackReason, r.RailStatus
	*p = p.WithRailDefaults()
	if p.Rail == payment.RailACH {
		return
	}
	// An instant credit is final: no return window, and its failure is
	// the rail's ISO reason.
	p.ReturnWindowClosesAt, p.UnauthorizedReturnWindowClosesAt = nil, nil
	if p.FailureCode != nil {
		reason := payment.InstantReason(*p.FailureCode)
		p.FailureReason = &reason
	}
}

const instantTerms = `
SELECT coalesce(instant, environment = 'sandbox') AS instant, per_entry_instant_credit_cents, daily_instant_credit_cents
FROM originators WHERE merchant_id = $1 AND environment = $2`

const instantUsed = `
SELECT coalesce(sum(amount_cents), 0) FROM instant_credits
WHERE merchant_id = $1 AND environment = $2 AND banking_day = $3::date`

// InstantTerms reads an originator's instant switch, limits and the
// instant credits of day. With lock the row is locked first, and the sum
// read by a statement of its own after it, so it sees every credit
// committed by whoever held the lock before.
func (q queries) InstantTerms(ctx context.Context, scope tenant.Scope, day string, lock bool) (payment.InstantTerms, error) {
	var r struct {
		Instant  bool  `db:"instant"`
		PerEntry int64 `db:"per_entry_instant_credit_cents"`
		Daily    int64 `db:"daily_instant_credit_cents"`
	}
	query := instantTerms
	if lock {
		query += ` FOR UPDATE`
	}
	err := sqlx.GetContext(ctx, q.ex, &r, query, scope.MerchantID, scope.Env)
	if err != nil {
		if errs.Is(translate(err), errs.NotFound) {
			return payment.InstantTerms{}, nil
		}
		return payment.InstantTerms{}, translate(err)
	}
	t := payment.InstantTerms{Found: true, Instant: r.Instant, PerEntry: r.PerEntry, Daily: r.Daily}
	if err := sqlx.GetContext(ctx, q.ex, &t.Used, instantUsed, scope.MerchantID, scope.Env, day); err != nil {
		return payment.InstantTerms{}, translate(err)
	}
	return t, nil
}

const insertInstantCredit = `
WITH ic AS (
  INSERT INTO instant_credits (merchant_id, environment, payment_id, message_id, rail, amount_cents, banking_day, state,
                               lease_token, lease_until, next_attempt_at, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7::date, $8, nullif($9, ''), $10, $11, $12)
  RETURNING payment_id
)
UPDATE payments SET method = $13, rail = $5, rail_status = $8
WHERE merchant_id = $1 AND environment = $2 AND id = (SELECT payment_id FROM ic)`

// InsertInstantCredit stores an instant credit's intent with its
// payment's method, rail and rail status.
func (q queries) InsertInstantCredit(ctx context.Context, ic payment.InstantCredit) error {
	var until *time.Time
	if !ic.LeaseUntil.IsZero() {
		until = &ic.LeaseUntil
	}
	res, err := q.ex.ExecContext(ctx, insertInstantCredit, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.MessageID, ic.Rail,
		ic.Cents, ic.Day, ic.State, ic.LeaseToken, until, ic.NextAttemptAt, ic.CreatedAt, ic.Method)
	return oneRow(res, err, errs.NotFound)
}

const setPaymentRoute = `UPDATE payments SET method = $4, rail = $5, fallback_reason = $6 WHERE ` + byID

// SetPaymentRoute stores a payment's method, rail and fallback reason.
func (q queries) SetPaymentRoute(ctx context.Context, p payment.Payment) error {
	res, err := q.ex.ExecContext(ctx, setPaymentRoute, p.Scope.MerchantID, p.Scope.Env, p.ID, p.Method, p.Rail, p.FallbackReason)
	return oneRow(res, err, errs.NotFound)
}

type instantRow struct {
	MerchantID  string    `db:"merchant_id"`
	Environment string    `db:"environment"`
	PaymentID   string    `db:"payment_id"`
	SourceID    string    `db:"funding_source_id"`
	MessageID   string    `db:"message_id"`
	Rail        string    `db:"rail"`
	Method      string    `db:"method"`
	Cents       int64     `db:"amount_cents"`
	Day         string    `db:"banking_day"`
	State       string    `db:"state"`
	Attempts    int       `db:"attempts"`
	LeaseToken  string    `db:"lease_token"`
	LeaseUntil  time.Time `db:"lease_until"`
	CreatedAt   time.Time `db:"created_at"`
}

func (r instantRow) domain() payment.InstantCredit {
	return payment.InstantCredit{Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		PaymentID: r.PaymentID, SourceID: r.SourceID, MessageID: r.MessageID, Rail: r.Rail, Method: r.Method, Cents: r.Cents,
		Day: r.Day, State: r.State, Attempts: r.Attempts, LeaseToken: r.LeaseToken, LeaseUntil: r.LeaseUntil.UTC(),
		CreatedAt: r.CreatedAt.UTC()}
}

// claimInstantCredits leases due credits of pending payments. The
// payments' rows are locked with the credits', so a cancel or a removal
// that waits for them sees rail_status sending and leaves the credit to
// its rail; one that went first left the payment canceled, which this
// statement then skips.
var claimInstantCredits = `
WITH due AS (
  SELECT i.merchant_id, i.environment, i.payment_id
  FROM instant_credits i
  JOIN payments p ON p.merchant_id = i.merchant_id AND p.environment = i.environment AND p.id = i.payment_id
  WHERE i.state IN ('queued', 'sending', 'unknown') AND i.next_attempt_at <= $1
    AND (i.lease_until IS NULL OR i.lease_until < $1) AND p.status = 'pending'
    AND ` + clockRows("p", "p.customer_id", 5) + `
  ORDER BY i.next_attempt_at
  LIMIT $4
  FOR UPDATE OF i, p SKIP LOCKED
), claimed AS (
  UPDATE instant_credits i SET lease_token = $2, lease_until = $3, attempts = i.attempts + 1
  FROM due WHERE (i.merchant_id, i.environment, i.payment_id) = (due.merchant_id, due.environment, due.payment_id)
  RETURNING i.*
), marked AS (
  UPDATE payments p SET rail_status = c.state
  FROM claimed c WHERE (p.merchant_id, p.environment, p.id) = (c.merchant_id, c.environment, c.payment_id)
  RETURNING p.id, p.funding_source_id, coalesce(p.method, 'instant') AS method
)
SELECT c.merchant_id, c.environment, c.payment_id, m.funding_source_id, c.message_id, c.rail, m.method, c.amount_cents,
       to_char(c.banking_day, 'YYYY-MM-DD') AS banking_day, c.state, c.attempts, c.lease_token, c.lease_until, c.created_at
FROM claimed c JOIN marked m ON m.id = c.payment_id`

// ClaimInstantCredits leases due instant credits to token.
func (q queries) ClaimInstantCredits(ctx context.Context, now time.Time, token string, until time.Time, limit int) ([]payment.InstantCredit, error) {
	var rows []instantRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, claimInstantCredits, now, token, until, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, instantRow.domain), nil
}

var paymentToLeave = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + `,` + paymentStanding + ` FROM payments p
WHERE ` + byID + `
FOR UPDATE OF p`

// PaymentToLeave locks a payment and reads it with its standing.
func (q queries) PaymentToLeave(ctx context.Context, scope tenant.Scope, id string) (payment.Payment, error) {
	return getOne[standingRow](ctx, q.ex, paymentToLeave, scope.MerchantID, scope.Env, id)
}

const instantLeaving = `
WITH ic AS (
  UPDATE instant_credits SET state = CASE WHEN $5 THEN 'sending' ELSE state END,
         lease_token = CASE WHEN $5 THEN lease_token END, lease_until = CASE WHEN $5 THEN lease_until END,
         next_attempt_at = CASE WHEN $5 THEN next_attempt_at ELSE $6 END
  WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND lease_token = $4 AND state = 'queued'
  RETURNING payment_id, state
)
UPDATE payments p SET rail_status = ic.state
FROM ic WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = ic.payment_id`

// InstantLeaving marks a queued credit sending, or gives its lease up.
func (q queries) InstantLeaving(ctx context.Context, ic payment.InstantCredit, leaves bool, now time.Time) (bool, error) {
	res, err := q.ex.ExecContext(ctx, instantLeaving, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.LeaseToken, leaves, now)
	return affected(res, err)
}

const instantAnswered = `
WITH ic AS (
  UPDATE instant_credits SET state = $5, reason = nullif($6, ''), answered_at = $7, sent_at = coalesce(sent_at, $7),
         lease_token = NULL, lease_until = NULL
  WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND lease_token = $4
    AND state IN ('queued', 'sending', 'unknown')
  RETURNING payment_id, sent_at
)
UPDATE payments p SET rail_status = $5, sent_at = coalesce(p.sent_at, ic.sent_at)
FROM ic WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = ic.payment_id`

// InstantAnswered settles an instant credit under its lease.
func (q queries) InstantAnswered(ctx context.Context, ic payment.InstantCredit, state, reason string, at time.Time) (bool, error) {
	res, err := q.ex.ExecContext(ctx, instantAnswered, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.LeaseToken, state, reason, at)
	return affected(res, err)
}

const instantUnanswered = `
WITH ic AS (
  UPDATE instant_credits SET state = CASE WHEN $7 THEN 'unknown' ELSE 'queued' END, next_attempt_at = $5,
         sent_at = CASE WHEN $7 THEN coalesce(sent_at, $6) ELSE sent_at END,
         lease_token = NULL, lease_until = NULL
  WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND lease_token = $4
    AND state IN ('queued', 'sending', 'unknown')
  RETURNING payment_id, state, sent_at
)
UPDATE payments p SET rail_status = ic.state, sent_at = coalesce(p.sent_at, ic.sent_at)
FROM ic WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = ic.payment_id`

// InstantUnanswered marks an instant credit sent without an answer, or
// (not taken) back in its queue unsent.
func (q queries) InstantUnanswered(ctx context.Context, ic payment.InstantCredit, sent, next time.Time, taken bool) (bool, error) {
	res, err := q.ex.ExecContext(ctx, instantUnanswered, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.LeaseToken, next, sent, taken)
	return affected(res, err)
}

const dropInstantCredit = `
WITH ic AS (
  DELETE FROM instant_credits
  WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND lease_token = $4 AND state = 'sending'
  RETURNING payment_id, amount_cents, banking_day
), pay AS (
  DELETE FROM payments p USING ic
  WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = ic.payment_id AND p.status = 'pending'
  RETURNING p.amount_cents
)
UPDATE originators o SET usage_credit_cents = greatest(0, o.usage_credit_cents - pay.amount_cents)
FROM pay, ic WHERE o.merchant_id = $1 AND o.environment = $2 AND o.usage_day = ic.banking_day`

// DropInstantCredit deletes a credit the rail took nothing of, with its
// payment, and gives its amount back to the day's credit usage.
func (q queries) DropInstantCredit(ctx context.Context, ic payment.InstantCredit) error {
	_, err := q.ex.ExecContext(ctx, dropInstantCredit, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.LeaseToken)
	return translate(err)
}

const instantToACH = `
WITH ic AS (
  DELETE FROM instant_credits
  WHERE merchant_id = $1 AND environment = $2 AND payment_id = $3 AND lease_token = $4 AND state IN ('queued', 'sending')
  RETURNING payment_id
)
UPDATE payments p SET rail = 'ach', rail_status = NULL, fallback_reason = $7, same_day = $5, settle_at = $6
FROM ic WHERE p.merchant_id = $1 AND p.environment = $2 AND p.id = ic.payment_id AND p.status = 'pending'`

// InstantToACH sends over ACH an "auto" credit that does not go instant.
func (q queries) InstantToACH(ctx context.Context, ic payment.InstantCredit, fallback string, sameDay bool, settleAt *time.Time) error {
	_, err := q.ex.ExecContext(ctx, instantToACH, ic.Scope.MerchantID, ic.Scope.Env, ic.PaymentID, ic.LeaseToken, sameDay, settleAt, fallback)
	return translate(err)
}

// affected reports whether a statement changed a row.
func affected(res interface{ RowsAffected() (int64, error) }, err error) (bool, error) {
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
