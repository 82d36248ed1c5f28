package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// riskFacts reads what the risk rules judge a new payment by, as
// subqueries of one statement over the source's row: its debits and
// credits through
// payments_of_source (the source's rows, newest first, stop at the day's
// start), its changes through funding_source_changes_of_source, the
// customer, the originator's guardrail and its rule thresholds by
// primary key.
const riskFacts = `
SELECT f.created_at, f.status = 'Verified' AS verified,
  (SELECT count(*) FROM (SELECT 1 FROM payments p
     WHERE p.merchant_id = f.merchant_id AND p.environment = f.environment AND p.funding_source_id = f.id
       AND p.direction = 'debit' AND p.status <> 'canceled' LIMIT 1) x) AS prior_debits,
  (SELECT count(*) FROM (SELECT 1 FROM payments p
     WHERE p.merchant_id = f.merchant_id AND p.environment = f.environment AND p.funding_source_id = f.id
       AND p.direction = 'credit' AND p.status <> 'canceled' LIMIT 1) x) AS prior_credits,
  d.n AS day_debits, d.cents AS day_cents,
  (SELECT max(c.created_at) FROM funding_source_changes c
     WHERE c.merchant_id = f.merchant_id AND c.environment = f.environment AND c.funding_source_id = f.id
       AND c.change_code IN ('C01', 'C02', 'C03', 'C06', 'C07')) AS account_changed_at,
  coalesce((SELECT u.screening ->> 'status' FROM customers u
     WHERE u.merchant_id = f.merchant_id AND u.environment = f.environment AND u.id = f.customer_id), '') AS screening,
  coalesce(g.hold_reason, '') AS guardrail, g.computed_at AS guardrail_computed_at,
  coalesce(o.rule_thresholds, '{}') AS rule_thresholds,
  coalesce(o.status = 'active' AND NOT o.company_id_assigned, false) AS company_id_missing,
  coalesce(o.default_purpose, '') AS default_purpose
FROM funding_sources f
CROSS JOIN LATERAL (
  SELECT count(*) AS n, coalesce(sum(p.amount_cents), 0) AS cents FROM payments p
  WHERE p.merchant_id = f.merchant_id AND p.environment = f.environment AND p.funding_source_id = f.id
    AND p.created_at >= $4 AND p.direction = 'debit' AND p.status NOT IN ('canceled', 'failed')) d
LEFT JOIN return_rate_guardrails g ON g.merchant_id = f.merchant_id AND g.environment = f.environment
LEFT JOIN originators o ON o.merchant_id = f.merchant_id AND o.environment = f.environment
WHERE f.id = $3 AND (f.merchant_id, f.environment) IS NOT DISTINCT FROM ($1::text, $2::text)`

// RiskFacts reads the facts of the risk rules for a new payment.
func (q queries) RiskFacts(ctx context.Context, scope tenant.Scope, sourceID string, dayStart time.Time) (payment.RiskFacts, error) {
	var r struct {
		CreatedAt         time.Time  `db:"created_at"`
		Verified          bool       `db:"verified"`
		PriorDebits       int        `db:"prior_debits"`
		PriorCredits      int        `db:"prior_credits"`
		DayDebits         int        `db:"day_debits"`
		DayCents          int64      `db:"day_cents"`
		AccountChangedAt  *time.Time `db:"account_changed_at"`
		Screening         string     `db:"screening"`
		Guardrail         string     `db:"guardrail"`
		GuardrailComputed *time.Time `db:"guardrail_computed_at"`
		Thresholds        []byte     `db:"rule_thresholds"`
		CompanyIDMissing  bool       `db:"company_id_missing"`
		DefaultPurpose    string     `db:"default_purpose"`
	}
	err := sqlx.GetContext(ctx, q.ex, &r, riskFacts, scope.MerchantID, scope.Env, sourceID, dayStart)
	if errors.Is(err, sql.ErrNoRows) {
		return payment.RiskFacts{}, nil
	}
	if err != nil {
		return payment.RiskFacts{}, translate(err)
	}
	var th map[string]string
	if err := json.Unmarshal(r.Thresholds, &th); err != nil {
		return payment.RiskFacts{}, fmt.Errorf("originator's rule thresholds: %w", err)
	}
	return payment.RiskFacts{Found: true, Thresholds: th, SourceCreatedAt: r.CreatedAt.UTC(), Verified: r.Verified,
		PriorDebits: r.PriorDebits, PriorCredits: r.PriorCredits, DayDebits: r.DayDebits, DayCents: r.DayCents, AccountChangedAt: utcPtr(r.AccountChangedAt),
		Screening: r.Screening, Guardrail: r.Guardrail, GuardrailComputedAt: utcPtr(r.GuardrailComputed),
		CompanyIDMissing: r.CompanyIDMissing, DefaultPurpose: r.DefaultPurpose}, nil
}

const holdPayment = `UPDATE payments SET status = 'held', hold_reason = $4 WHERE ` + byID + ` AND status = 'pending'`

// HoldPayment marks a pending payment held.
func (q queries) HoldPayment(ctx context.Context, p payment.Payment) error {
	res, err := q.ex.ExecContext(ctx, holdPayment, p.Scope.MerchantID, p.Scope.Env, p.ID, p.HoldReason)
	return oneRow(res, err, errs.Conflict)
}

const releaseHeld = `UPDATE payments SET status = 'pending', hold_reason = NULL, settle_at = $4
WHERE ` + byID + ` AND status = 'held'`

// ReleaseHeld makes a held payment pending again.
func (q queries) ReleaseHeld(ctx context.Context, p payment.Payment) error {
	res, err := q.ex.ExecContext(ctx, releaseHeld, p.Scope.MerchantID, p.Scope.Env, p.ID, p.SettleAt)
	return oneRow(res, err, errs.Conflict)
}

const insertAlert = `
INSERT INTO fraud_alerts (merchant_id, environment, id, rule_id, rule_version, threshold, payment_id, funding_source_id, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// InsertAlert stores a fraud rule's alert.
func (q queries) InsertAlert(ctx context.Context, a payment.Alert) error {
	_, err := q.ex.ExecContext(ctx, insertAlert, a.Scope.MerchantID, a.Scope.Env, a.ID, a.RuleID, a.RuleVersion,
		a.Threshold, a.PaymentID, a.SourceID, a.CreatedAt)
	return translate(err)
}

const heldPayments = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE status = 'held' AND ($1::text IS NULL OR (merchant_id = $1 AND environment = $2))
ORDER BY created_at, id
LIMIT $3`

// HeldPayments returns held payments, oldest first (payments_held).
func (q queries) HeldPayments(ctx context.Context, scope *tenant.Scope, limit int) ([]payment.Payment, error) {
	var m, e *string
	if scope != nil {
		env := string(scope.Env)
		m, e = &scope.MerchantID, &env
	}
	var rows []paymentRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, heldPayments, m, e, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, paymentRow.domain), nil
}

const heldPaymentForUpdate = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p WHERE id = $1 FOR UPDATE OF p`

// HeldPaymentForUpdate locks a payment found by its id alone (payments_id).
func (q queries) HeldPaymentForUpdate(ctx context.Context, id string) (payment.Payment, error) {
	return getOne[paymentRow](ctx, q.ex, heldPaymentForUpdate, id)
}

const heldOfCustomer = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND ($3 = '' OR customer_id = $3) AND status = 'held' AND hold_reason = $4
ORDER BY created_at, id
FOR UPDATE OF p`

// HeldOfCustomer locks a customer's payments held for a reason, or every
// customer's when customerID is "".
func (q queries) HeldOfCustomer(ctx context.Context, scope tenant.Scope, customerID, reason string) ([]payment.Payment, error) {
	var rows []paymentRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, heldOfCustomer, scope.MerchantID, scope.Env, customerID, reason); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, paymentRow.domain), nil
}

const alertCounts = `SELECT rule_id, count(*) AS n FROM fraud_alerts
WHERE merchant_id = $1 AND environment = $2 AND created_at >= $3 GROUP BY rule_id`

// AlertCounts counts a scope's alerts since a time, by rule.
func (q queries) AlertCounts(ctx context.Context, scope tenant.Scope, since time.Time) (map[string]int, error) {
	var rows []struct {
		Rule string `db:"rule_id"`
		N    int    `db:"n"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, alertCounts, scope.MerchantID, scope.Env, since); err != nil {
		return nil, translate(err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Rule] = r.N
	}
	return out, nil
}

const insertReview = `INSERT INTO risk_reviews (id, year, reviewed_by, note, created_at) VALUES ($1, $2, $3, $4, $5)`

// InsertReview stores an annual review.
func (q queries) InsertReview(ctx context.Context, r payment.Review) error {
	_, err := q.ex.ExecContext(ctx, insertReview, r.ID, r.Year, r.ReviewedBy, r.Note, r.CreatedAt)
	return translate(err)
}

const lastReview = `SELECT id, year, reviewed_by, note, created_at FROM risk_reviews ORDER BY created_at DESC LIMIT 1`

// LastReview is the newest annual review.
func (q queries) LastReview(ctx context.Context) (payment.Review, error) {
	var r struct {
		ID         string    `db:"id"`
		Year       int       `db:"year"`
		ReviewedBy string    `db:"reviewed_by"`
		Note       *string   `db:"note"`
		CreatedAt  time.Time `db:"created_at"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, lastReview); err != nil {
		return payment.Review{}, translate(err)
	}
	return payment.Review{ID: r.ID, Year: r.Year, ReviewedBy: r.ReviewedBy, Note: r.Note, CreatedAt: r.CreatedAt.UTC()}, nil
}

type guardrailRow struct {
	Debits         int       `db:"debits"`
	Unauthorized   int       `db:"unauthorized"`
	Administrative int       `db:"administrative"`
	Returns        int       `db:"returns"`
	HoldReason     *string   `db:"hold_reason"`
	Warned         []byte    `db:"warned"`
	ComputedAt     time.Time `db:"computed_at"`
}

const selectGuardrail = `SELECT debits, unauthorized, administrative, returns, hold_reason, warned, computed_at
FROM return_rate_guardrails WHERE merchant_id = $1 AND environment = $2`

func (q queries) guardrail(ctx context.Context, scope tenant.Scope, query string) (payment.Guardrail, error) {
	var r guardrailRow
	err := sqlx.GetContext(ctx, q.ex, &r, query, scope.MerchantID, scope.Env)
	if errors.Is(err, sql.ErrNoRows) {
		return payment.Guardrail{}, nil
	}
	if err != nil {
		return payment.Guardrail{}, translate(err)
	}
	g := payment.Guardrail{Counts: payment.ReturnCounts{Debits: r.Debits, Unauthorized: r.Unauthorized,
		Administrative: r.Administrative, Returns: r.Returns}, HoldReason: deref(r.HoldReason), ComputedAt: r.ComputedAt.UTC()}
	if err := json.Unmarshal(r.Warned, &g.Warned); err != nil {
		return payment.Guardrail{}, err
	}
	return g, nil
}

// Guardrail reads an originator's guardrail.
func (q queries) Guardrail(ctx context.Context, scope tenant.Scope) (payment.Guardrail, error) {
	return q.guardrail(ctx, scope, selectGuardrail)
}

// GuardrailForUpdate reads and locks an originator's guardrail.
func (q queries) GuardrailForUpdate(ctx context.Context, scope tenant.Scope) (payment.Guardrail, error) {
	return q.guardrail(ctx, scope, selectGuardrail+` FOR UPDATE`)
}

const saveGuardrail = `
INSERT INTO return_rate_guardrails (merchant_id, environment, debits, unauthorized, administrative, returns, hold_reason, warned, computed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (merchant_id, environment) DO UPDATE SET debits = $3, unauthorized = $4, administrative = $5, returns = $6,
  hold_reason = $7, warned = $8, computed_at = $9`

// SaveGuardrail stores an originator's guardrail.
func (q queries) SaveGuardrail(ctx context.Context, scope tenant.Scope, g payment.Guardrail) error {
	warned, err := json.Marshal(g.Warned)
	if err != nil {
		return err
	}
	var hold *string
	if g.HoldReason != "" {
		hold = &g.HoldReason
	}
	c := g.Counts
	_, err = q.ex.ExecContext(ctx, saveGuardrail, scope.MerchantID, scope.Env, c.Debits, c.Unauthorized, c.Administrative,
		c.Returns, hold, warned, g.ComputedAt)
	return translate(err)
}

const customerScreening = `SELECT first_name, last_name, business_name, screening FROM customers WHERE ` + byID

// CustomerScreening reads a customer's names and screening.
func (q queries) CustomerScreening(ctx context.Context, scope tenant.Scope, customerID string) ([]sanctions.Name, sanctions.Screening, error) {
	var r struct {
		First     string  `db:"first_name"`
		Last      string  `db:"last_name"`
		Business  *string `db:"business_name"`
		Screening []byte  `db:"screening"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, customerScreening, scope.MerchantID, scope.Env, customerID); err != nil {
		return nil, sanctions.Screening{}, translate(err)
	}
	names := []sanctions.Name{sanctions.Person(r.First, r.Last)}
	if r.Business != nil {
		names = append(names, sanctions.Business(*r.Business))
	}
	sc, err := screeningOf(r.Screening)
	return names, sc, err
}

// screeningOf reads a screening column; NULL (never screened) is clear.
func screeningOf(b []byte) (sanctions.Screening, error) {
	sc := sanctions.Screening{Status: sanctions.Clear}
	if len(b) == 0 {
		return sc, nil
	}
	return sc, json.Unmarshal(b, &sc)
}

const customerScreeningForUpdate = `SELECT merchant_id, environment, screening FROM customers WHERE id = $1 FOR UPDATE`

// CustomerScreeningForUpdate locks a customer found by id alone.
func (q queries) CustomerScreeningForUpdate(ctx context.Context, customerID string) (tenant.Scope, sanctions.Screening, error) {
	var r struct {
		MerchantID string `db:"merchant_id"`
		Env        string `db:"environment"`
		Screening  []byte `db:"screening"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, customerScreeningForUpdate, customerID); err != nil {
		return tenant.Scope{}, sanctions.Screening{}, translate(err)
	}
	sc, err := screeningOf(r.Screening)
	return tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Env)}, sc, err
}

const setCustomerScreening = `UPDATE customers SET screening = $4 WHERE ` + byID

// SetCustomerScreening stores a customer's screening.
func (q queries) SetCustomerScreening(ctx context.Context, scope tenant.Scope, customerID string, sc sanctions.Screening) error {
	b, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	res, err := q.ex.ExecContext(ctx, setCustomerScreening, scope.MerchantID, scope.Env, customerID, b)
	return oneRow(res, err, errs.NotFound)
}

const countAlerts = `SELECT count(*) FROM fraud_alerts WHERE rule_id = $1 AND created_at >= $2`

// CountAlerts counts every scope's alerts of one rule since a time.
func (q queries) CountAlerts(ctx context.Context, id string, since time.Time) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, q.ex, &n, countAlerts, id, since)
	return n, translate(err)
}
