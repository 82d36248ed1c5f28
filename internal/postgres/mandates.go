package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

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
}

func (r mandateRow) domain() payment.Mandate {
	return payment.Mandate{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, SourceID: r.SourceID, CustomerID: r.CustomerID, Type: payment.MandateType(r.Type),
		SECCode: r.SECCode, Status: r.Status, AcceptedAt: r.AcceptedAt.UTC(), IPAddress: r.IPAddress,
		UserAgent: r.UserAgent, Text: r.Text, TextSHA256: r.TextSHA256, RevokedAt: utcPtr(r.RevokedAt),
		RevokeReason: r.RevokeReason, CreatedAt: r.CreatedAt.UTC(),
	}
}

const mandateColumns = `merchant_id, environment, id, funding_source_id, customer_id, type, sec_code, status,
       accepted_at, ip_address, user_agent, text, text_sha256, revoked_at, revoke_reason, created_at`

const insertMandate = `
INSERT INTO mandates (` + mandateColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// InsertMandate stores a new mandate.
func (q queries) InsertMandate(ctx context.Context, m payment.Mandate) error {
	_, err := q.ex.ExecContext(ctx, insertMandate, m.Scope.MerchantID, m.Scope.Env, m.ID, m.SourceID, m.CustomerID,
		m.Type, m.SECCode, m.Status, m.AcceptedAt, m.IPAddress, m.UserAgent, m.Text, m.TextSHA256, m.RevokedAt,
		m.RevokeReason, m.CreatedAt)
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

const mandateUsed = `SELECT EXISTS (SELECT 1 FROM payments
WHERE merchant_id = $1 AND environment = $2 AND mandate_id = $3)`

// MandateUsed reports whether a payment was authorized by the mandate.
func (q queries) MandateUsed(ctx context.Context, scope tenant.Scope, id string) (bool, error) {
	var used bool
	err := sqlx.GetContext(ctx, q.ex, &used, mandateUsed, scope.MerchantID, scope.Env, id)
	return used, translate(err)
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
