package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

type mandateRow struct {
	MerchantID   string     `db:"merchant_id"`
	Environment  string     `db:"environment"`
	ID           string     `db:"id"`
	SourceID     string     `db:"funding_source_id"`
	CustomerID   string     `db:"customer_id"`
	Type         string     `db:"type"`
	SECCode      string     `db:"sec_code"`
	Status       string     `db:"status"`
	AcceptedAt   time.Time  `db:"accepted_at"`
	IPAddress    *string    `db:"ip_address"`
	UserAgent    *string    `db:"user_agent"`
	Text         string     `db:"text"`
	TextSHA256   string     `db:"text_sha256"`
	RevokedAt    *time.Time `db:"revoked_at"`
	RevokeReason *string    `db:"revoke_reason"`
	CreatedAt    time.Time  `db:"created_at"`
	UsedAt       *time.Time `db:"used_at"`
}

func (r mandateRow) domain() payment.Mandate {
	return payment.Mandate{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, SourceID: r.SourceID, CustomerID: r.CustomerID, Type: payment.MandateType(r.Type),
		SECCode: r.SECCode, Status: r.Status, AcceptedAt: r.AcceptedAt.UTC(), IPAddress: r.IPAddress,
		UserAgent: r.UserAgent, Text: r.Text, TextSHA256: r.TextSHA256, RevokedAt: utcPtr(r.RevokedAt),
		RevokeReason: r.RevokeReason, CreatedAt: r.CreatedAt.UTC(), UsedAt: utcPtr(r.UsedAt),
	}
}

const mandateColumns = `merchant_id, environment, id, funding_source_id, customer_id, type, sec_code, status,
       accepted_at, ip_address, user_agent, text, text_sha256, revoked_at, revoke_reason, created_at, used_at`

const insertMandate = `
INSERT INTO mandates (` + mandateColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`

// InsertMandate stores a new mandate.
func (q queries) InsertMandate(ctx context.Context, m payment.Mandate) error {
	_, err := q.ex.ExecContext(ctx, insertMandate, m.Scope.MerchantID, m.Scope.Env, m.ID, m.SourceID, m.CustomerID,
		m.Type, m.SECCode, m.Status, m.AcceptedAt, m.IPAddress, m.UserAgent, m.Text, m.TextSHA256, m.RevokedAt,
		m.RevokeReason, m.CreatedAt, m.UsedAt)
	return translate(err)
}

const selectMandate = `SELECT ` + mandateColumns + ` FROM mandates
WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// Mandate returns one mandate.
func (q queries) Mandate(ctx context.Context, scope tenant.Scope, id string) (payment.Mandate, error) {
	return getOne[mandateRow](ctx, q.ex, selectMandate, scope.MerchantID, scope.Env, id)
}

// MandateForUpdate is Mandate with its row locked until the transaction ends.
func (q queries) MandateForUpdate(ctx context.Context, scope tenant.Scope, id string) (payment.Mandate, error) {
	return getOne[mandateRow](ctx, q.ex, selectMandate+` FOR UPDATE`, scope.MerchantID, scope.Env, id)
}

// mandateRefusal is the mandate rule over a named mandate m, for a debit
// or subscription (kind, 'single' or 'recurring') of the source source:
// the name of its refusal (payment.RefusedMandate*), NULL when m
// authorizes it. A mandate authorizes only its own source's debits, only
// while active, a subscription only when recurring, and a single one
// only one debit. This is the rule's one home: createDebit decides by it
// with the mandate locked, and MandateForUse reports its answer to a
// subscription written from Go.
func mandateRefusal(source, kind string) string {
	return strings.NewReplacer("SOURCE", source, "KIND", kind).Replace(`CASE WHEN m.funding_source_id <> SOURCE THEN 'mandate_other_source'
           WHEN m.status <> 'active' THEN 'mandate_revoked'
           WHEN KIND::text = 'recurring' AND m.type <> 'recurring' THEN 'mandate_not_recurring'
           WHEN m.type = 'single' AND m.used_at IS NOT NULL THEN 'mandate_used' END`)
}

var mandateForUse = `SELECT ` + mandateRefusal("$4", "$5") + ` AS refusal FROM mandates m
WHERE m.merchant_id = $1 AND m.environment = $2 AND m.id = $3
FOR UPDATE OF m`

// MandateForUse locks a mandate and reports the mandate rule's refusal
// of it authorizing typ on sourceID (mandateRefusal), read as it stands
// once a concurrent use or revocation has committed.
func (q queries) MandateForUse(ctx context.Context, scope tenant.Scope, id, sourceID string, typ payment.MandateType) (string, error) {
	var refusal *string
	if err := sqlx.GetContext(ctx, q.ex, &refusal, mandateForUse, scope.MerchantID, scope.Env, id, sourceID, string(typ)); err != nil {
		return "", translate(err)
	}
	return deref(refusal), nil
}

const listMandates = `SELECT ` + mandateColumns + ` FROM mandates
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
  AND ($6 = '' OR funding_source_id = $6)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListMandates returns up to p.Limit+1 mandates, newest first.
func (q queries) ListMandates(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]payment.Mandate, error) {
	var rows []mandateRow
	if err := q.list(ctx, &rows, listMandates, "mandates", scope, p, sourceID); err != nil {
		return nil, err
	}
	return mapRows(rows, mandateRow.domain), nil
}

const activeMandatesOfSource = `SELECT ` + mandateColumns + ` FROM mandates
WHERE merchant_id = $1 AND environment = $2 AND funding_source_id = $3 AND status = 'active'
ORDER BY created_at
FOR UPDATE`

// ActiveMandatesOfSource locks a source's active mandates.
func (q queries) ActiveMandatesOfSource(ctx context.Context, scope tenant.Scope, sourceID string) ([]payment.Mandate, error) {
	var rows []mandateRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, activeMandatesOfSource, scope.MerchantID, scope.Env, sourceID); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, mandateRow.domain), nil
}

const revokeMandate = `
UPDATE mandates SET status = $4, revoked_at = $5, revoke_reason = $6
WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// RevokeMandate stores a mandate's revocation.
func (q queries) RevokeMandate(ctx context.Context, m payment.Mandate) error {
	_, err := q.ex.ExecContext(ctx, revokeMandate, m.Scope.MerchantID, m.Scope.Env, m.ID, m.Status, m.RevokedAt, m.RevokeReason)
	return translate(err)
}

// createDebit is a debit's creation with its mandate in one statement, as
// createPayment is a credit's: it share-locks the source (paymentSource)
// and, when the source takes a debit (sourceRefusal), either inserts the
// new mandate ($11, with the source's customer and SEC code) with its
// mandate.created event and delivery, or locks the named one ($10, man),
// decides by the mandate rule (mandateRefusal) over it as it stands once a
// concurrent use or revocation has committed, and, when it authorizes the
// debit and is single, marks it used. The debit is inserted under
// whichever mandate was written. The event's data gets its user_id and
// sec_code from the source. The originator is locked and must take the
// debit (originatorRefusal) before the mandate is touched, so a refusal
// by its limits writes nothing; the debit is counted into its usage of
// the banking day the debit is dated for. The refusal reported is the
// first of the source's, the reinitiation's, the entry description's,
// the originator's and the named mandate's.
var createDebit = `
WITH ` + paymentSource + `, ` + withParams(originatorLocked, "$25", "'debit'", "$5") + `, returned AS (
  -- The reinitiation rule (payment.Reinitiation): the newest debit of
  -- the source and amount that came back with a code of $26 on or after
  -- the date $27 (US Eastern), no earlier than the debit's authorization
  -- ($28, or the named mandate's acceptance; neither: none).
  SELECT r.id, r.failure_code, r.settled_at FROM payments r
  WHERE r.merchant_id = $1 AND r.environment = $2 AND r.funding_source_id = $3
    AND r.direction = 'debit' AND r.amount_cents = $5 AND r.status = 'failed'
    AND r.failure_code = ANY ($26::text[])
    AND (r.settled_at AT TIME ZONE 'America/New_York')::date >= $27::date
    AND r.settled_at >= COALESCE($28::timestamptz,
          (SELECT m.accepted_at FROM mandates m WHERE m.merchant_id = $1 AND m.environment = $2 AND m.id = $10),
          '-infinity')
  ORDER BY r.settled_at DESC
  LIMIT 1
), decision AS (
  -- The source's, the reinitiation's, the entry description's and the
  -- originator's rules, decided once: the refusal's name
  -- (payment.Refused*), NULL to write the debit; and the debit's SEC
  -- code, its mandate's: the named one's, else the one the new mandate
  -- takes (payment.EntrySEC: $18 for an individual's account, $19 for a
  -- company's), written into it below.
  SELECT coalesce(` + withParams(sourceRefusal, "", "'debit'", "") + `,
         CASE WHEN EXISTS (SELECT 1 FROM returned) THEN 'reinitiation'
           -- a named entry description fits the debit's SEC code (one of
           -- $30, which the payment service decided)
           WHEN $23::text IS NOT NULL AND NOT sec.code = ANY($30::text[]) THEN 'entry_description'
           ELSE ` + withParams(originatorRefusal, "$25", "'debit'", "$5") + ` END) AS refusal,
         sec.code AS sec
  FROM src LEFT JOIN org ON true
  CROSS JOIN LATERAL (SELECT coalesce(
      (SELECT nm.sec_code FROM mandates nm WHERE nm.merchant_id = $1 AND nm.environment = $2 AND nm.id = $10),
      CASE WHEN src.business THEN $19 ELSE $18 END) AS code) sec
), ok AS (
  SELECT src.* FROM src, decision WHERE decision.refusal IS NULL
), man AS (
  -- The named mandate, locked once the other rules took the debit; FOR
  -- UPDATE reads the row as a concurrent use or revocation left it.
  SELECT m.id, ` + mandateRefusal("$3", "'single'") + ` AS refusal
  FROM mandates m, ok
  WHERE m.merchant_id = $1 AND m.environment = $2 AND m.id = $10
  FOR UPDATE OF m
), mandate AS (
  -- The named mandate's refusal (payment.RefusedMandate*), NULL to write
  -- the debit; no row when the other rules refused it.
  SELECT CASE WHEN $10::text IS NULL THEN NULL
              WHEN NOT EXISTS (SELECT 1 FROM man) THEN 'mandate_unknown'
              ELSE (SELECT man.refusal FROM man) END AS refusal
  FROM ok
), named AS (
  UPDATE mandates m SET used_at = CASE WHEN m.type = 'single' THEN $9::timestamptz ELSE m.used_at END
  FROM man, mandate
  WHERE m.merchant_id = $1 AND m.environment = $2 AND m.id = man.id AND mandate.refusal IS NULL
  RETURNING m.id
), fresh AS (
  INSERT INTO mandates (` + mandateColumns + `)
  SELECT $1, $2, $11, $3, ok.customer_id, 'single', decision.sec, 'active',
         $12, $13, $14, $15, $16, NULL, NULL, $9, $9
  FROM ok, decision WHERE $11::text IS NOT NULL
  RETURNING id, customer_id, sec_code
), ins AS (
  INSERT INTO payments (` + paymentColumns + `)
  SELECT $1, $2, $4, $3, ok.customer_id, 'debit', $5, $6, $7, NULL, NULL, NULL, NULL, $8, NULL, $9, man.id, $23, $24, $29
  FROM ok, (SELECT id FROM named UNION ALL SELECT id FROM fresh) man
  RETURNING 1
), ` + withParams(originatorCount, "$25", "'debit'", "$5") + `, ev AS (
  INSERT INTO events (merchant_id, environment, id, type, data, created_at, test_clock_id, clock_time)
  SELECT $1, $2, $17, $20, $21::jsonb || jsonb_build_object('user_id', fresh.customer_id, 'sec_code', fresh.sec_code), $34::timestamptz,
    NULLIF($31, ''), NULLIF($32, '')::timestamptz
  FROM fresh
  RETURNING id
), queued AS (
  ` + insertDelivery + `
  SELECT $22, $1, $2, ev.id, $33::timestamptz, $33::timestamptz, $33::timestamptz
  FROM ev JOIN webhook_endpoints w ON w.merchant_id = $1 AND w.environment = $2
  RETURNING 1
)
SELECT s.customer_id, s.verified, s.removed, s.business, s.blocked, EXISTS (SELECT 1 FROM ins) AS created,
       coalesce(d.refusal, (SELECT refusal FROM mandate)) AS refusal, d.sec, (SELECT count(*) FROM queued) AS queued,
       ` + originatorTermsColumns + `,
       ret.id AS returned_id, ret.failure_code AS returned_code, ret.settled_at AS returned_at
FROM src s CROSS JOIN decision d LEFT JOIN org ON true LEFT JOIN returned ret ON true`

// CreateDebit stores a debit with its mandate in one statement.
func (q queries) CreateDebit(ctx context.Context, d payment.NewDebit) (payment.DebitOutcome, error) {
	p := d.Payment
	var named, fresh, ip, ua, text, sha, evID, evType, data, delivery *string
	var clock, clockAt string
	// The event's creation time is arraysOf's (the wall clock's on a test
	// clock, whose time is the payment's), not the payment's.
	due := p.CreatedAt.UTC().Format(time.RFC3339Nano)
	evAt := due
	var accepted *time.Time
	if m := d.Mandate; m != nil {
		fresh, ip, ua, text, sha, accepted = &m.ID, m.IPAddress, m.UserAgent, &m.Text, &m.TextSHA256, &m.AcceptedAt
		c, err := arraysOf(ctx, q.wall(), []event.Event{d.Created}, true)
		if err != nil {
			return payment.DebitOutcome{}, err
		}
		evID, evType, delivery, data = &c.ids[0], &c.types[0], &c.deliveries[0], &c.data[0]
		clock, clockAt, due, evAt = c.clocks[0], c.clockAt[0], c.due[0], c.at[0]
	} else {
		named = p.MandateID
	}
	var r struct {
		CustomerID string  `db:"customer_id"`
		Verified   bool    `db:"verified"`
		Removed    bool    `db:"removed"`
		Business   bool    `db:"business"`
		Blocked    bool    `db:"blocked"`
		Created    bool    `db:"created"`
		Refusal    *string `db:"refusal"`
		SEC        string  `db:"sec"`
		Queued     int     `db:"queued"`
		termsRow
		ReturnedID   *string    `db:"returned_id"`
		ReturnedCode *string    `db:"returned_code"`
		ReturnedAt   *time.Time `db:"returned_at"`
	}
	err := sqlx.GetContext(ctx, q.ex, &r, createDebit, p.Scope.MerchantID, p.Scope.Env, p.SourceID, p.ID, p.Cents,
		p.Description, p.Status, p.SettleAt, p.CreatedAt, named, fresh, accepted, ip, ua, text, sha, evID,
		d.SECCodes[0], d.SECCodes[1], evType, data, delivery, p.EntryDescription, p.SameDay, dayOf(p),
		pq.Array(d.Reinitiation.Codes), d.Reinitiation.Since.Format(time.DateOnly), d.Reinitiation.AuthorizedAt,
		p.Purpose, pq.Array(p.DescriptionFits), clock, clockAt, due, evAt)
	if err != nil {
		return payment.DebitOutcome{}, translate(err)
	}
	q.queued(r.Queued)
	out := payment.DebitOutcome{Source: payment.SourceInfo{CustomerID: r.CustomerID, Verified: r.Verified,
		Removed: r.Removed, Business: r.Business, Blocked: r.Blocked}, Originator: r.termsRow.domain(), Created: r.Created,
		Refusal: deref(r.Refusal), SEC: r.SEC}
	if r.ReturnedID != nil && r.ReturnedAt != nil {
		out.Reinitiation = &payment.Returned{PaymentID: *r.ReturnedID, Code: deref(r.ReturnedCode), At: r.ReturnedAt.UTC()}
	}
	return out, nil
}
