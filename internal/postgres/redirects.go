package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/tenant"
)

const selectEnvironmentByPublicKey = `
SELECT merchant_id, environment, public_key, third_party_verification
FROM merchant_environments WHERE public_key = $1`

// EnvironmentByPublicKey returns the environment a public key belongs to.
func (db *DB) EnvironmentByPublicKey(ctx context.Context, publicKey string) (merchant.Environment, error) {
	var r environmentRow
	if err := sqlx.GetContext(ctx, db.q(ctx), &r, selectEnvironmentByPublicKey, publicKey); err != nil {
		return merchant.Environment{}, translate(err)
	}
	return r.domain(), nil
}

const selectRedirectOrigins = `
SELECT origin FROM redirect_origins
WHERE merchant_id = $1 AND environment = $2
ORDER BY origin`

// RedirectOrigins lists the scope's allowed redirect origins, sorted.
func (db *DB) RedirectOrigins(ctx context.Context, scope tenant.Scope) ([]string, error) {
	out := []string{}
	err := sqlx.SelectContext(ctx, db.q(ctx), &out, selectRedirectOrigins, scope.MerchantID, scope.Env)
	return out, translate(err)
}

const insertRedirectOrigin = `
INSERT INTO redirect_origins (merchant_id, environment, origin, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT DO NOTHING`

// InsertRedirectOrigin allows an origin; allowing it twice changes nothing.
func (db *DB) InsertRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string, at time.Time) error {
	_, err := db.q(ctx).ExecContext(ctx, insertRedirectOrigin, scope.MerchantID, scope.Env, origin, at)
	return translate(err)
}

const deleteRedirectOrigin = `
DELETE FROM redirect_origins WHERE merchant_id = $1 AND environment = $2 AND origin = $3`

// DeleteRedirectOrigin removes an allowed origin; errs.NotFound when it was not allowed.
func (db *DB) DeleteRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string) error {
	res, err := db.q(ctx).ExecContext(ctx, deleteRedirectOrigin, scope.MerchantID, scope.Env, origin)
	return oneRow(res, err, errs.NotFound)
}
