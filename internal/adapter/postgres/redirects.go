package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
)

const selectLinkOwner = `
SELECT e.merchant_id, e.environment, e.public_key, e.third_party_verification, m.name,
  ` + brandColumns + `,
  ARRAY(SELECT r.origin FROM redirect_origins r
        WHERE r.merchant_id = e.merchant_id AND r.environment = e.environment ORDER BY r.origin) AS origins
FROM merchant_environments e JOIN merchants m ON m.id = e.merchant_id
  LEFT JOIN merchant_brands b ON b.merchant_id = e.merchant_id
WHERE e.public_key = $1`

// LinkOwner returns the environment a public key belongs to, its merchant's
// name and brand and its allowed redirect origins, in one round trip.
func (q queries) LinkOwner(ctx context.Context, publicKey string) (merchant.Environment, string, merchant.Brand, []string, error) {
	var r struct {
		environmentRow
		brandRow
		Name    string         `db:"name"`
		Origins pq.StringArray `db:"origins"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, selectLinkOwner, publicKey); err != nil {
		return merchant.Environment{}, "", merchant.Brand{}, nil, translate(err)
	}
	return r.environmentRow.domain(), r.Name, r.brandRow.domain(), []string(r.Origins), nil
}

const selectRedirectOrigins = `
SELECT origin FROM redirect_origins
WHERE merchant_id = $1 AND environment = $2
ORDER BY origin`

// RedirectOrigins lists the scope's allowed redirect origins, sorted.
func (q queries) RedirectOrigins(ctx context.Context, scope tenant.Scope) ([]string, error) {
	out := []string{}
	err := sqlx.SelectContext(ctx, q.ex, &out, selectRedirectOrigins, scope.MerchantID, scope.Env)
	return out, translate(err)
}

const insertRedirectOrigin = `
INSERT INTO redirect_origins (merchant_id, environment, origin, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT DO NOTHING`

// InsertRedirectOrigin allows an origin; allowing it twice changes nothing.
func (q queries) InsertRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, insertRedirectOrigin, scope.MerchantID, scope.Env, origin, at)
	return translate(err)
}

const deleteRedirectOrigin = `
DELETE FROM redirect_origins WHERE merchant_id = $1 AND environment = $2 AND origin = $3`

// DeleteRedirectOrigin removes an allowed origin; errs.NotFound when it was not allowed.
func (q queries) DeleteRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string) error {
	res, err := q.ex.ExecContext(ctx, deleteRedirectOrigin, scope.MerchantID, scope.Env, origin)
	return oneRow(res, err, errs.NotFound)
}
