package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

// sourceRefusal is the source's rule for a new payment in direction DIR,
// over src (paymentSource): the name of its refusal
// (payment.RefusedRemoved, RefusedUnverified, RefusedBlocked), NULL when
// it takes the payment. A removed source takes no payment; a debit needs
// a Verified source that no return blocked; a credit goes to any live
// source. This is the rule's one home: the creating statements decide by
// it under the source's share lock, and PaymentSource reports its answer
// for both directions (payment.SourceInfo's DebitRefusal and
// CreditRefusal) to the payments written from Go.
const sourceRefusal = `CASE WHEN src.removed THEN 'removed'
           WHEN DIR::text = 'debit' AND NOT src.verified THEN 'unverified'
           WHEN DIR::text = 'debit' AND src.blocked THEN 'blocked' END`

// paymentSource is a CTE, src: the funding source $3 of the scope ($1,
// $2) a payment is written against, share-locked so it cannot be removed
// while the payment is written, with what payments know of it
// (payment.SourceInfo). It is the one source-reading SQL of every
// statement that creates a payment, and of PaymentSource.
const paymentSource = `src AS (
  SELECT f.customer_id, f.status = 'Verified' AS verified, f.removed_at IS NOT NULL AS removed,
         f.account_holder_type = 'company' AS business,
         f.blocked_at IS NOT NULL AS blocked
  FROM funding_sources f
  WHERE f.id = $3 AND (f.merchant_id, f.environment) IS NOT DISTINCT FROM ($1::text, $2::text)
  FOR SHARE OF f
)`

var selectPaymentSource = `WITH ` + paymentSource + `
SELECT customer_id, verified, removed, business, blocked,
       ` + withParams(sourceRefusal, "", "'debit'", "") + ` AS debit_refusal,
       ` + withParams(sourceRefusal, "", "'credit'", "") + ` AS credit_refusal
FROM src`

// PaymentSource reads a funding source for a payment and share-locks it, so
// it cannot be removed while the payment is written; it reports the
// source's refusals of a debit and of a credit (sourceRefusal).
func (q queries) PaymentSource(ctx context.Context, scope tenant.Scope, id string) (payment.SourceInfo, error) {
	var r struct {
		CustomerID    string  `db:"customer_id"`
		Verified      bool    `db:"verified"`
		Removed       bool    `db:"removed"`
		Business      bool    `db:"business"`
		Blocked       bool    `db:"blocked"`
		DebitRefusal  *string `db:"debit_refusal"`
		CreditRefusal *string `db:"credit_refusal"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, selectPaymentSource, scope.MerchantID, scope.Env, id); err != nil {
		return payment.SourceInfo{}, translate(err)
	}
	return payment.SourceInfo{CustomerID: r.CustomerID, Verified: r.Verified, Removed: r.Removed, Business: r.Business, Blocked: r.Blocked,
		DebitRefusal: deref(r.DebitRefusal), CreditRefusal: deref(r.CreditRefusal)}, nil
}

// createPayment is a payment's creation in one statement: it share-locks
// the source so it cannot be removed meanwhile (paymentSource), locks the
// originator (originatorLocked), decides once whether the payment is taken
// (decision: the source's rule, sourceRefusal; its entry description
// fits the SEC code of its entry, payment.EntrySEC, one of $15, which the
// payment service decided; the originator takes it, originatorRefusal)
// and inserts it when it is, counting it into the originator's usage. It
// reports the source as found (no row when unknown), the originator's
// terms, whether the payment was inserted, and the decision's refusal and
// the SEC code it judged by.
var createPayment = `
WITH ` + paymentSource + `, ` + withParams(originatorLocked, "$13", "$5", "$6") + `, decision AS (
  -- The source's, the entry description's and the originator's rules,
  -- decided once: the refusal's name (payment.Refused*), NULL to insert.
  -- The SEC code is the payment's entry's (payment.EntrySEC: $16 for
  -- an individual's account, $17 for a company's).
  SELECT coalesce(` + withParams(sourceRefusal, "", "$5", "") + `,
         CASE WHEN $11::text IS NOT NULL AND NOT sec.code = ANY($15::text[]) THEN 'entry_description'
           ELSE ` + withParams(originatorRefusal, "$13", "$5", "$6") + ` END) AS refusal,
         sec.code AS sec
  FROM src LEFT JOIN org ON true
  CROSS JOIN LATERAL (SELECT CASE WHEN src.business THEN $17::text ELSE $16::text END AS code) sec
), ins AS (
  INSERT INTO payments (` + paymentColumns + `)
  SELECT $1, $2, $4, $3, src.customer_id, $5, $6, $7, $8, NULL, NULL, NULL, NULL, $9, NULL, $10, NULL, $11, $12, $14
  FROM src, decision WHERE decision.refusal IS NULL
  RETURNING 1
), ` + withParams(originatorCount, "$13", "$5", "$6") + `
SELECT s.customer_id, s.verified, s.removed, s.business, EXISTS (SELECT 1 FROM ins) AS created,
       d.refusal, d.sec, ` + originatorTermsColumns + `
FROM src s CROSS JOIN decision d LEFT JOIN org ON true`

// CreatePayment stores p when its source and originator take it, in one
// statement. It returns the source as found (errs.NotFound when unknown),
// the originator's terms and whether p was stored; p's customer is the
// source's.
func (q queries) CreatePayment(ctx context.Context, p payment.Payment) (payment.DebitOutcome, error) {
	var r struct {
		CustomerID string  `db:"customer_id"`
		Verified   bool    `db:"verified"`
		Removed    bool    `db:"removed"`
		Business   bool    `db:"business"`
		Created    bool    `db:"created"`
		Refusal    *string `db:"refusal"`
		SEC        string  `db:"sec"`
		termsRow
	}
	err := sqlx.GetContext(ctx, q.ex, &r, createPayment, p.Scope.MerchantID, p.Scope.Env,
		p.SourceID, p.ID, p.Direction, p.Cents, p.Description, p.Status, p.SettleAt, p.CreatedAt, p.EntryDescription, p.SameDay, dayOf(p),
		p.Purpose, pq.Array(p.DescriptionFits), payment.EntrySEC(p.Direction, false), payment.EntrySEC(p.Direction, true))
	if err != nil {
		return payment.DebitOutcome{}, translate(err)
	}
	return payment.DebitOutcome{Source: payment.SourceInfo{CustomerID: r.CustomerID, Verified: r.Verified, Removed: r.Removed, Business: r.Business},
		Originator: r.termsRow.domain(), Created: r.Created, Refusal: deref(r.Refusal), SEC: r.SEC}, nil
}

type paymentRow struct {
	MerchantID     string     `db:"merchant_id"`
	Environment    string     `db:"environment"`
	ID             string     `db:"id"`
	SourceID       string     `db:"funding_source_id"`
	CustomerID     string     `db:"customer_id"`
	Direction      string     `db:"direction"`
	Cents          int64      `db:"amount_cents"`
	Description    *string    `db:"description"`
	Status         string     `db:"status"`
	FailureCode    *string    `db:"failure_code"`
	SubscriptionID *string    `db:"subscription_id"`
	Attempt        *int       `db:"attempt"`
	DueDate        *time.Time `db:"due_date"`
	SettleAt       *time.Time `db:"settle_at"`
	SettledAt      *time.Time `db:"settled_at"`
	CreatedAt      time.Time  `db:"created_at"`
	MandateID      *string    `db:"mandate_id"`
	EntryDesc      *string    `db:"entry_description"`
	Purpose        string     `db:"purpose"`
	RetryOf        *string    `db:"retry_of"`
	RetryAttempt   *int       `db:"retry_attempt"`
	ReversalOf     *string    `db:"reversal_of"`
	ReversalReason *string    `db:"reversal_reason"`
	// The payment's reversal, read from the reversal's row (paymentLinks).
	Reversed     []byte  `db:"reversed"` // JSON of the reversal's row (paymentLinks); NULL when none
	CancelReason *string `db:"cancel_reason"`
	paymentDatesRow
	HoldReason *string `db:"hold_reason"`
	paymentRailRow
	paymentLedgerRow
}

// paymentLedgerRow is paymentLedger's columns.
type paymentLedgerRow struct {
	Metadata      metadata.Metadata `db:"metadata"`
	RefundOf      *string           `db:"refund_of"`
	RefundReason  *string           `db:"refund_reason"`
	TraceNumber   *string           `db:"trace_number"`
	RefundedCents int64             `db:"refunded_cents"`
}

func (r paymentLedgerRow) apply(p *payment.Payment) {
	p.Metadata, p.RefundOf, p.RefundReason, p.TraceNumber = r.Metadata, r.RefundOf, r.RefundReason, r.TraceNumber
	if p.Direction == payment.Debit {
		p.RefundedCents = r.RefundedCents
		amount := money.Format(r.RefundedCents)
		p.RefundedAmount = &amount
	}
}

func (r paymentRow) domain() payment.Payment {
	p := payment.Payment{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, SourceID: r.SourceID, CustomerID: r.CustomerID, Amount: money.Format(r.Cents), Currency: "USD",
		Cents: r.Cents, Direction: payment.Direction(r.Direction), Description: r.Description,
		Status: payment.Status(r.Status), FailureCode: r.FailureCode, SubscriptionID: r.SubscriptionID,
		Attempt: r.Attempt, SettleAt: utcPtr(r.SettleAt), SettledAt: utcPtr(r.SettledAt), CreatedAt: r.CreatedAt.UTC(),
		MandateID: r.MandateID, EntryDescription: r.EntryDesc, Purpose: payment.Purpose(r.Purpose), RetryOf: r.RetryOf, ReversalOf: r.ReversalOf, ReversalReason: r.ReversalReason,
		CancelReason: r.CancelReason, HoldReason: r.HoldReason,
	}
	if p.Attempt == nil {
		p.Attempt = r.RetryAttempt // a one-off re-presentment's
	}
	if r.Reversed != nil {
		// Built by the statement itself (jsonb_build_object), so it
		// always decodes.
		var rev payment.Reversal
		if err := json.Unmarshal(r.Reversed, &rev); err == nil {
			rev.CreatedAt = rev.CreatedAt.UTC()
			p.Reversal = &rev
		}
	}
	if r.FailureCode != nil {
		reason := achcode.Reason(*r.FailureCode)
		p.FailureReason = &reason
	}
	p.DueDate = dateOnly(r.DueDate)
	r.paymentDatesRow.apply(&p)
	r.paymentRailRow.apply(&p)
	r.paymentLedgerRow.apply(&p)
	return p
}

const paymentColumns = `merchant_id, environment, id, funding_source_id, customer_id, direction, amount_cents,
       description, status, failure_code, subscription_id, attempt, due_date, settle_at, settled_at, created_at, mandate_id,
       entry_description, same_day, purpose`

// paymentReadColumns are what a read of a payment selects: the columns it
// is created with, and what happens to it later.
const paymentReadColumns = paymentColumns + `, cancel_reason, hold_reason` + paymentDates + paymentRailColumns + paymentLedger

// paymentLedger are the select-list part that reads a payment's metadata,
// its refund's link, its entry's trace number once the bank took its
// file, and the total of its refunds that may still move money (p is the
// payment's alias).
const paymentLedger = `, metadata, refund_of, refund_reason,
       (SELECT e.trace_number FROM ach_entries e
        WHERE e.merchant_id = p.merchant_id AND e.environment = p.environment AND e.payment_id = p.id
          AND e.kind = 'payment' AND p.sent_at IS NOT NULL) AS trace_number,
       ` + refundedCents + ` AS refunded_cents`

// refundedCents is the total of payment p's refunds that are not canceled
// or failed: what a new refund must stay within (refund.go).
const refundedCents = `(SELECT COALESCE(sum(r.amount_cents), 0)::bigint FROM payments r
        WHERE r.merchant_id = p.merchant_id AND r.environment = p.environment AND r.refund_of = p.id
          AND r.status NOT IN ('failed', 'canceled'))`

// paymentLinks are a payment's columns that tie it to another: what it
// presents again or reverses, and its own reversal, read from the reversal's row in one
// index probe (p is the payment's alias).
const paymentLinks = `retry_of, retry_attempt, reversal_of, reversal_reason,
       (SELECT jsonb_build_object('payment_id', r.id, 'reason', r.reversal_reason, 'created_at', r.created_at)
        FROM payments r
        WHERE r.merchant_id = p.merchant_id AND r.environment = p.environment AND r.reversal_of = p.id) AS reversed`

// insertPayment stores a payment and counts it into its originator's
// usage of the payment's banking day, whatever the limits.
var insertPayment = `
WITH ins AS (
  INSERT INTO payments (` + paymentColumns + `, retry_of, retry_attempt, reversal_of, reversal_reason)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $23, $25, $19, $20, $21, $22)
  RETURNING 1
), ` + withParams(originatorCount, "$24", "$6", "$7") + `
SELECT 1`

// InsertPayment stores a new payment and counts it into its originator's
// usage; errs.Conflict when a subscription's debit for that due date and
// attempt, an original's re-presentment of that attempt, or a payment's
// reversal exists already.
func (q queries) InsertPayment(ctx context.Context, p payment.Payment) error {
	var attempt, retryAttempt *int
	if p.SubscriptionID != nil {
		attempt = p.Attempt
	}
	if p.RetryOf != nil {
		retryAttempt = p.Attempt
	}
	_, err := q.ex.ExecContext(ctx, insertPayment, p.Scope.MerchantID, p.Scope.Env, p.ID, p.SourceID, p.CustomerID,
		p.Direction, p.Cents, p.Description, p.Status, p.FailureCode, p.SubscriptionID, attempt, p.DueDate, p.SettleAt,
		p.SettledAt, p.CreatedAt, p.MandateID, p.EntryDescription, p.RetryOf, retryAttempt, p.ReversalOf, p.ReversalReason, p.SameDay, dayOf(p),
		p.Purpose)
	return translate(err)
}

const selectPayment = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE ` + byID

// Payment returns one payment.
func (q queries) Payment(ctx context.Context, scope tenant.Scope, id string) (payment.Payment, error) {
	return getOne[paymentRow](ctx, q.ex, selectPayment, scope.MerchantID, scope.Env, id)
}

// PaymentForUpdate is Payment with its row locked until the transaction ends.
func (q queries) PaymentForUpdate(ctx context.Context, scope tenant.Scope, id string) (payment.Payment, error) {
	return getOne[paymentRow](ctx, q.ex, selectPayment+` FOR UPDATE`, scope.MerchantID, scope.Env, id)
}

const listPayments = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
  AND ($6 = '' OR funding_source_id = $6) AND ($7 = '' OR status = $7) AND ($8 = '' OR direction = $8)
  AND ($9 = '' OR coalesce(rail, 'ach') = $9)
  AND ($10 = '' OR coalesce(method, CASE WHEN same_day THEN 'same_day' ELSE 'standard' END) = $10)
  AND metadata @> $11::jsonb
  AND ($12 = '' OR funding_source_id IN (` + sourcesOfCustomer + `))
ORDER BY created_at DESC, id DESC
LIMIT $5`

// sourcesOfCustomer are the ids of the customer $12's sources, removed
// ones too, for a list narrowed to one customer (by payments_of_source).
const sourcesOfCustomer = `SELECT s.id FROM funding_sources s
  WHERE s.merchant_id = $1 AND s.environment = $2 AND s.customer_id = $12`

// ListPayments returns up to p.Limit+1 payments matching f, newest first.
func (q queries) ListPayments(ctx context.Context, scope tenant.Scope, f payment.Filter, p paging.Page) ([]payment.Payment, error) {
	var rows []paymentRow
	if err := q.list(ctx, &rows, listPayments, "payments", scope, p, f.SourceID, f.Status, string(f.Direction), f.Rail, f.Method, f.Metadata, f.CustomerID); err != nil {
		return nil, err
	}
	return mapRows(rows, paymentRow.domain), nil
}

var settlingPayments = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + `,` + paymentStanding + ` FROM payments p
WHERE status = 'pending' AND settle_at IS NOT NULL AND settle_at <= $1
  AND (environment <> 'production' OR sent_at IS NOT NULL)
  AND ` + achRail + `
  AND ` + clockRows("p", "p.customer_id", 3) + `
ORDER BY settle_at
LIMIT $2
FOR UPDATE SKIP LOCKED`

// SettlingPayments locks up to limit pending payments due to settle, with
// their standing; a production payment only once the bank took its file
// (sent_at), so one whose delivery keeps failing never reads as settled.
func (q queries) SettlingPayments(ctx context.Context, now time.Time, limit int) ([]payment.Payment, error) {
	var rows []standingRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, settlingPayments, now, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, standingRow.domain), nil
}

// paymentStanding is the select-list part that reads, beside a payment p
// being claimed to leave, what its authority rests on (payment.Standing),
// in the claiming statement's snapshot. The subqueries name their tables
// so that the payment's own columns stay unqualified.
const paymentStanding = `
  EXISTS (SELECT 1 FROM funding_sources f
          WHERE f.merchant_id = p.merchant_id AND f.environment = p.environment AND f.id = p.funding_source_id
            AND f.blocked_at IS NOT NULL) AS source_blocked,
  EXISTS (SELECT 1 FROM funding_sources f
          WHERE f.merchant_id = p.merchant_id AND f.environment = p.environment AND f.id = p.funding_source_id
            AND f.removed_at IS NOT NULL) AS source_removed,
  EXISTS (SELECT 1 FROM mandates m
          WHERE m.merchant_id = p.merchant_id AND m.environment = p.environment AND m.id = p.mandate_id
            AND m.status = 'revoked') AS mandate_revoked,
  EXISTS (SELECT 1 FROM mandates m
          JOIN payments o ON o.merchant_id = m.merchant_id AND o.environment = m.environment AND o.mandate_id = m.id
          WHERE m.merchant_id = p.merchant_id AND m.environment = p.environment AND m.id = p.mandate_id
            AND m.type = 'single' AND o.id <> p.id AND o.status NOT IN ('failed', 'canceled')
            AND (o.created_at, o.id) < (p.created_at, p.id)) AS mandate_used,
  coalesce((SELECT m.sec_code FROM mandates m
            WHERE m.merchant_id = p.merchant_id AND m.environment = p.environment AND m.id = p.mandate_id), '') AS mandate_sec_code`

// standingRow is a payment with its standing.
type standingRow struct {
	paymentRow
	SourceBlocked  bool   `db:"source_blocked"`
	SourceRemoved  bool   `db:"source_removed"`
	MandateRevoked bool   `db:"mandate_revoked"`
	MandateUsed    bool   `db:"mandate_used"`
	MandateSEC     string `db:"mandate_sec_code"`
}

func (r standingRow) domain() payment.Payment {
	p := r.paymentRow.domain()
	p.Standing = payment.Standing{SourceBlocked: r.SourceBlocked, SourceRemoved: r.SourceRemoved,
		MandateRevoked: r.MandateRevoked, MandateUsed: r.MandateUsed, MandateSEC: r.MandateSEC}
	return p
}

// unsentPayments selects a source's pending (and held) payments that have not left:
// in sandbox every pending one (it has not settled), in production one in
// no ACH file. settle_at IS NULL says the same as the NOT EXISTS in
// production (a file's assignment sets it in its transaction), and it is
// the condition PostgreSQL re-checks on the newest row version when FOR
// UPDATE waited for an assignment that then committed, which a subquery
// on ach_entries is not: so a payment assigned meanwhile is left out.
const unsentPayments = `SELECT ` + paymentReadColumns + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND status IN ('pending', 'held')
  AND (NOT $4 OR direction = 'debit')
  AND (` + achRail + ` OR rail_status = 'queued')
  AND ` + paymentNotSent + `
ORDER BY created_at, id
FOR UPDATE OF p`

// paymentNotSent is unsentPayments' condition on a payment p that has
// not left, which the source's and the mandate's statements share.
const paymentNotSent = `(environment <> 'production'
       OR (settle_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM ach_entries e
                           WHERE e.merchant_id = p.merchant_id AND e.environment = p.environment AND e.payment_id = p.id)))`

// unsentPaymentsOfMandate is unsentPayments for a mandate's payments.
const unsentPaymentsOfMandate = `SELECT ` + paymentReadColumns + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND mandate_id = $3 AND status IN ('pending', 'held')
  AND (NOT $4 OR direction = 'debit')
  AND (` + achRail + ` OR rail_status = 'queued')
  AND ` + paymentNotSent + `
ORDER BY created_at, id
FOR UPDATE OF p`

// UnsentPayments locks the pending payments of a source, or of a mandate,
// that have not left yet.
func (q queries) UnsentPayments(ctx context.Context, scope tenant.Scope, u payment.Unsent) ([]payment.Payment, error) {
	query, id := unsentPayments, u.SourceID
	if u.MandateID != "" {
		query, id = unsentPaymentsOfMandate, u.MandateID
	}
	var rows []paymentRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, query, scope.MerchantID, scope.Env, id, u.DebitsOnly); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, paymentRow.domain), nil
}

const finishPayment = `
UPDATE payments SET status = $4, failure_code = $5, settled_at = $6, cancel_reason = $7
WHERE ` + byID

// FinishPayment stores a payment's final status.
func (q queries) FinishPayment(ctx context.Context, p payment.Payment) error {
	_, err := q.ex.ExecContext(ctx, finishPayment, p.Scope.MerchantID, p.Scope.Env, p.ID, p.Status, p.FailureCode, p.SettledAt,
		p.CancelReason)
	return translate(err)
}

type subscriptionRow struct {
	MerchantID   string            `db:"merchant_id"`
	Environment  string            `db:"environment"`
	ID           string            `db:"id"`
	SourceID     string            `db:"funding_source_id"`
	CustomerID   string            `db:"customer_id"`
	Cents        int64             `db:"amount_cents"`
	Interval     string            `db:"interval"`
	Description  *string           `db:"description"`
	Status       string            `db:"status"`
	StartDate    time.Time         `db:"start_date"`
	NextDate     *time.Time        `db:"next_date"`
	PaymentCount int               `db:"payment_count"`
	CancelReason *string           `db:"cancel_reason"`
	CreatedAt    time.Time         `db:"created_at"`
	CanceledAt   *time.Time        `db:"canceled_at"`
	RetryDate    *time.Time        `db:"retry_date"`
	RetryDue     *time.Time        `db:"retry_due"`
	RetryAttempt *int              `db:"retry_attempt"`
	MandateID    *string           `db:"mandate_id"`
	Purpose      string            `db:"purpose"`
	Metadata     metadata.Metadata `db:"metadata"`
}

func (r subscriptionRow) domain() payment.Subscription {
	s := payment.Subscription{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, SourceID: r.SourceID, CustomerID: r.CustomerID, Amount: money.Format(r.Cents), Currency: "USD",
		Cents: r.Cents, Interval: payment.Interval(r.Interval), Description: r.Description, Status: r.Status,
		StartDate: r.StartDate.Format(time.DateOnly), PaymentCount: r.PaymentCount, CancelReason: r.CancelReason,
		CreatedAt: r.CreatedAt.UTC(), CanceledAt: utcPtr(r.CanceledAt), MandateID: r.MandateID, Purpose: payment.Purpose(r.Purpose),
		Metadata: r.Metadata,
	}
	s.NextDate, s.RetryDate, s.RetryDue = dateOnly(r.NextDate), dateOnly(r.RetryDate), dateOnly(r.RetryDue)
	if r.RetryAttempt != nil {
		s.RetryAttempt = *r.RetryAttempt
	}
	return s
}

// dateOnly formats a date column, YYYY-MM-DD, or nil.
func dateOnly(t *time.Time) *string {
	if t == nil {
		return nil
	}
	d := t.Format(time.DateOnly)
	return &d
}

// retryAttempt is the retry_attempt column: NULL unless a re-presentment
// is scheduled.
func retryAttempt(s payment.Subscription) *int {
	if s.RetryDate == nil {
		return nil
	}
	return &s.RetryAttempt
}

const subscriptionColumns = `merchant_id, environment, id, funding_source_id, customer_id, amount_cents, interval,
       description, status, start_date, next_date, payment_count, cancel_reason, created_at, canceled_at,
       retry_date, retry_due, retry_attempt, mandate_id, purpose, metadata`

const insertSubscription = `
INSERT INTO subscriptions (` + subscriptionColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::jsonb)`

// InsertSubscription stores a new subscription.
func (q queries) InsertSubscription(ctx context.Context, s payment.Subscription) error {
	_, err := q.ex.ExecContext(ctx, insertSubscription, s.Scope.MerchantID, s.Scope.Env, s.ID, s.SourceID, s.CustomerID,
		s.Cents, s.Interval, s.Description, s.Status, s.StartDate, s.NextDate, s.PaymentCount, s.CancelReason,
		s.CreatedAt, s.CanceledAt, s.RetryDate, s.RetryDue, retryAttempt(s), s.MandateID, s.Purpose, s.Metadata)
	return translate(err)
}

const selectSubscription = `SELECT ` + subscriptionColumns + ` FROM subscriptions
WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// Subscription returns one subscription.
func (q queries) Subscription(ctx context.Context, scope tenant.Scope, id string) (payment.Subscription, error) {
	return getOne[subscriptionRow](ctx, q.ex, selectSubscription, scope.MerchantID, scope.Env, id)
}

// SubscriptionForUpdate is Subscription with its row locked until the
// transaction ends.
func (q queries) SubscriptionForUpdate(ctx context.Context, scope tenant.Scope, id string) (payment.Subscription, error) {
	return getOne[subscriptionRow](ctx, q.ex, selectSubscription+` FOR UPDATE`, scope.MerchantID, scope.Env, id)
}

const listSubscriptions = `SELECT ` + subscriptionColumns + ` FROM subscriptions
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
  AND ($6 = '' OR funding_source_id = $6) AND ($7 = '' OR status = $7)
  AND ($8 = '' OR funding_source_id IN (SELECT s.id FROM funding_sources s
                  WHERE s.merchant_id = $1 AND s.environment = $2 AND s.customer_id = $8))
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListSubscriptions returns up to p.Limit+1 subscriptions matching f, newest first.
func (q queries) ListSubscriptions(ctx context.Context, scope tenant.Scope, f payment.Filter, p paging.Page) ([]payment.Subscription, error) {
	var rows []subscriptionRow
	if err := q.list(ctx, &rows, listSubscriptions, "subscriptions", scope, p, f.SourceID, f.Status, f.CustomerID); err != nil {
		return nil, err
	}
	return mapRows(rows, subscriptionRow.domain), nil
}

var dueSubscriptions = `SELECT ` + subscriptionColumns + ` FROM subscriptions s
WHERE status = 'active' AND (next_date <= $1 OR retry_date <= $1)
  AND ` + clockRows("s", "s.customer_id", 3) + `
ORDER BY LEAST(next_date, retry_date)
LIMIT $2
FOR UPDATE SKIP LOCKED`

// DueSubscriptions locks up to limit active subscriptions due on or before today.
func (q queries) DueSubscriptions(ctx context.Context, today string, limit int) ([]payment.Subscription, error) {
	var rows []subscriptionRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, dueSubscriptions, today, limit, clockParam(ctx)); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, subscriptionRow.domain), nil
}

const updateSubscription = `
UPDATE subscriptions SET status = $4, next_date = $5, payment_count = $6, cancel_reason = $7, canceled_at = $8,
       retry_date = $9, retry_due = $10, retry_attempt = $11
WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// UpdateSubscription stores a subscription's schedule and state.
func (q queries) UpdateSubscription(ctx context.Context, s payment.Subscription) error {
	_, err := q.ex.ExecContext(ctx, updateSubscription, s.Scope.MerchantID, s.Scope.Env, s.ID, s.Status, s.NextDate,
		s.PaymentCount, s.CancelReason, s.CanceledAt, s.RetryDate, s.RetryDue, retryAttempt(s))
	return translate(err)
}

const setPaymentSettleAt = `
UPDATE payments SET settle_at = $4
WHERE ` + byID + ` AND status = 'pending'`

// SetPaymentSettleAt sets when a pending payment settles.
func (q queries) SetPaymentSettleAt(ctx context.Context, scope tenant.Scope, id string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, setPaymentSettleAt, scope.MerchantID, scope.Env, id, at)
	return translate(err)
}

const activeSubscriptionsOfSource = `SELECT ` + subscriptionColumns + ` FROM subscriptions
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND status = 'active'
ORDER BY created_at
FOR UPDATE`

// ActiveSubscriptionsOfSource locks a source's active subscriptions.
func (q queries) ActiveSubscriptionsOfSource(ctx context.Context, scope tenant.Scope, sourceID string) ([]payment.Subscription, error) {
	var rows []subscriptionRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, activeSubscriptionsOfSource, scope.MerchantID, scope.Env, sourceID); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, subscriptionRow.domain), nil
}

// returnCounts counts a scope's debits created since the moment given
// (canceled and held ones have not gone out: a merchant cannot lower its
// rates with debits that are held) and their returns by group;
// payments_newest bounds the scan.
const returnCounts = `
SELECT count(*) AS debits,
       count(*) FILTER (WHERE status = 'failed') AS returns,
       count(*) FILTER (WHERE status = 'failed' AND failure_code = ANY ($4::text[])) AS unauthorized,
       count(*) FILTER (WHERE status = 'failed' AND failure_code = ANY ($5::text[])) AS administrative
FROM payments
WHERE merchant_id = $1 AND environment = $2 AND created_at >= $3 AND direction = 'debit' AND status NOT IN ('canceled', 'held')`

// ReturnCounts counts a scope's debits since since and their returns.
func (q queries) ReturnCounts(ctx context.Context, scope tenant.Scope, since time.Time, unauthorized, administrative []string) (payment.ReturnCounts, error) {
	var r struct {
		Debits         int `db:"debits"`
		Returns        int `db:"returns"`
		Unauthorized   int `db:"unauthorized"`
		Administrative int `db:"administrative"`
	}
	err := sqlx.GetContext(ctx, q.ex, &r, returnCounts, scope.MerchantID, scope.Env, since,
		pq.StringArray(unauthorized), pq.StringArray(administrative))
	return payment.ReturnCounts{Debits: r.Debits, Returns: r.Returns, Unauthorized: r.Unauthorized, Administrative: r.Administrative}, translate(err)
}
