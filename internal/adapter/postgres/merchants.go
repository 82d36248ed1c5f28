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

type merchantRow struct {
	ID                    string     `db:"id"`
	Name                  string     `db:"name"`
	Email                 string     `db:"email"`
	PasswordHash          string     `db:"password_hash"`
	ProductionActivatedAt *time.Time `db:"production_activated_at"`
	CreatedAt             time.Time  `db:"created_at"`
}

func (r merchantRow) domain() merchant.Merchant {
	return merchant.Merchant{
		ID: r.ID, Name: r.Name, Email: r.Email, PasswordHash: r.PasswordHash,
		ProductionActivatedAt: utcPtr(r.ProductionActivatedAt), CreatedAt: r.CreatedAt.UTC(),
	}
}

const insertMerchant = `
INSERT INTO merchants (id, name, email, password_hash, created_at)
VALUES ($1, $2, $3, $4, $5)`

// InsertMerchant stores a new merchant; errs.Conflict when the email is taken.
func (q queries) InsertMerchant(ctx context.Context, m merchant.Merchant) error {
	_, err := q.ex.ExecContext(ctx, insertMerchant, m.ID, m.Name, m.Email, m.PasswordHash, m.CreatedAt)
	return translate(err)
}

const selectMerchant = `
SELECT id, name, email, password_hash, production_activated_at, created_at
FROM merchants WHERE id = $1`

// Merchant returns a merchant by id.
func (q queries) Merchant(ctx context.Context, id string) (merchant.Merchant, error) {
	var r merchantRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectMerchant, id); err != nil {
		return merchant.Merchant{}, translate(err)
	}
	return r.domain(), nil
}

const selectMerchantByEmail = `
SELECT id, name, email, password_hash, production_activated_at, created_at
FROM merchants WHERE email = $1`

// MerchantByEmail returns a merchant by login email.
func (q queries) MerchantByEmail(ctx context.Context, email string) (merchant.Merchant, error) {
	var r merchantRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectMerchantByEmail, email); err != nil {
		return merchant.Merchant{}, translate(err)
	}
	return r.domain(), nil
}

const markProductionActivated = `
UPDATE merchants SET production_activated_at = $2
WHERE id = $1 AND production_activated_at IS NULL`

// MarkProductionActivated sets the activation time once.
func (q queries) MarkProductionActivated(ctx context.Context, id string, at time.Time) error {
	res, err := q.ex.ExecContext(ctx, markProductionActivated, id, at)
	return oneRow(res, err, errs.Conflict)
}

const insertEnvironment = `
INSERT INTO merchant_environments (merchant_id, environment, public_key, third_party_verification)
VALUES ($1, $2, $3, $4)`

// nameOriginator names the originator the environment's insert created
// (the trigger merchant_environments_originator).
const nameOriginator = `
UPDATE originators SET company_name = $3, updated_at = now()
WHERE merchant_id = $1 AND environment = $2 AND company_name IS DISTINCT FROM $3`

// InsertEnvironment stores a merchant's environment, and its originator's
// company name when it has one.
func (q queries) InsertEnvironment(ctx context.Context, e merchant.Environment) error {
	_, err := q.ex.ExecContext(ctx, insertEnvironment,
		e.Scope.MerchantID, e.Scope.Env, e.PublicKey, e.ThirdPartyVerification)
	if err != nil || e.OriginatorName == "" {
		return translate(err)
	}
	_, err = q.ex.ExecContext(ctx, nameOriginator, e.Scope.MerchantID, e.Scope.Env, e.OriginatorName)
	return translate(err)
}

type environmentRow struct {
	MerchantID             string `db:"merchant_id"`
	Environment            string `db:"environment"`
	PublicKey              string `db:"public_key"`
	ThirdPartyVerification bool   `db:"third_party_verification"`
	AccountCheckPolicy     string `db:"account_check_policy"`
	OwnershipPolicy        string `db:"ownership_policy"`
}

func (r environmentRow) domain() merchant.Environment {
	return merchant.Environment{
		Scope:                  tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		PublicKey:              r.PublicKey,
		ThirdPartyVerification: r.ThirdPartyVerification,
		Policies:               merchant.Policies{AccountCheck: r.AccountCheckPolicy, Ownership: r.OwnershipPolicy},
	}
}

const selectEnvironment = `
SELECT merchant_id, environment, public_key, third_party_verification, account_check_policy, ownership_policy
FROM merchant_environments WHERE merchant_id = $1 AND environment = $2`

// Environment returns a merchant's settings in one environment.
func (q queries) Environment(ctx context.Context, scope tenant.Scope) (merchant.Environment, error) {
	var r environmentRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectEnvironment, scope.MerchantID, scope.Env); err != nil {
		return merchant.Environment{}, translate(err)
	}
	return r.domain(), nil
}

const enableThirdPartyVerification = `
UPDATE merchant_environments SET third_party_verification = true
WHERE merchant_id = $1 AND environment = $2`

const setPolicies = `
UPDATE merchant_environments SET account_check_policy = $3, ownership_policy = $4
WHERE merchant_id = $1 AND environment = $2`

// SetPolicies stores the environment's policies.
func (q queries) SetPolicies(ctx context.Context, scope tenant.Scope, p merchant.Policies) error {
	res, err := q.ex.ExecContext(ctx, setPolicies, scope.MerchantID, scope.Env, p.AccountCheck, p.Ownership)
	return oneRow(res, err, errs.NotFound)
}

// EnableThirdPartyVerification turns the environment's third-party flag on.
func (q queries) EnableThirdPartyVerification(ctx context.Context, scope tenant.Scope) error {
	res, err := q.ex.ExecContext(ctx, enableThirdPartyVerification, scope.MerchantID, scope.Env)
	return oneRow(res, err, errs.NotFound)
}

const insertAPIKey = `
INSERT INTO api_keys (id, merchant_id, environment, secret_hash, last_four, permissions, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

// InsertAPIKey stores a secret key's hash.
func (q queries) InsertAPIKey(ctx context.Context, k merchant.APIKey) error {
	_, err := q.ex.ExecContext(ctx, insertAPIKey, k.ID, k.Scope.MerchantID, k.Scope.Env,
		k.SecretHash, k.LastFour, pq.StringArray(k.Permissions), k.CreatedAt)
	return translate(err)
}

const revokeActiveKey = `
UPDATE api_keys SET revoked_at = $3
WHERE merchant_id = $1 AND environment = $2 AND revoked_at IS NULL
RETURNING permissions`

// RevokeActiveKey revokes the scope's active key and returns its permissions.
func (q queries) RevokeActiveKey(ctx context.Context, scope tenant.Scope, at time.Time) ([]string, error) {
	var perms pq.StringArray
	err := sqlx.GetContext(ctx, q.ex, &perms, revokeActiveKey, scope.MerchantID, scope.Env, at)
	if err != nil {
		return nil, translate(err)
	}
	return perms, nil
}

type keyRow struct {
	ID                     string         `db:"id"`
	MerchantID             string         `db:"merchant_id"`
	Environment            string         `db:"environment"`
	SecretHash             []byte         `db:"secret_hash"`
	LastFour               string         `db:"last_four"`
	Permissions            pq.StringArray `db:"permissions"`
	CreatedAt              time.Time      `db:"created_at"`
	RevokedAt              *time.Time     `db:"revoked_at"`
	PublicKey              string         `db:"public_key"`
	ThirdPartyVerification bool           `db:"third_party_verification"`
	AccountCheckPolicy     string         `db:"account_check_policy"`
	OwnershipPolicy        string         `db:"ownership_policy"`
	HasTestClocks          bool           `db:"has_test_clocks"`
}

const selectAPIKeyByHash = `
SELECT k.id, k.merchant_id, k.environment, k.secret_hash, k.last_four, k.permissions,
       k.created_at, k.revoked_at, e.public_key, e.third_party_verification, e.account_check_policy, e.ownership_policy,
       EXISTS (SELECT 1 FROM test_clocks t WHERE t.merchant_id = k.merchant_id AND t.environment = k.environment) AS has_test_clocks
FROM api_keys k
JOIN merchant_environments e ON e.merchant_id = k.merchant_id AND e.environment = k.environment
WHERE k.secret_hash = $1`

// APIKeyByHash finds a key by the hash of its secret, with its environment.
func (q queries) APIKeyByHash(ctx context.Context, hash []byte) (merchant.APIKey, merchant.Environment, error) {
	var r keyRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectAPIKeyByHash, hash); err != nil {
		return merchant.APIKey{}, merchant.Environment{}, translate(err)
	}
	scope := tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)}
	return merchant.APIKey{
			ID: r.ID, Scope: scope, SecretHash: r.SecretHash, LastFour: r.LastFour,
			Permissions: r.Permissions, CreatedAt: r.CreatedAt.UTC(), RevokedAt: utcPtr(r.RevokedAt),
		}, merchant.Environment{
			Scope: scope, PublicKey: r.PublicKey, ThirdPartyVerification: r.ThirdPartyVerification,
			Policies:      merchant.Policies{AccountCheck: r.AccountCheckPolicy, Ownership: r.OwnershipPolicy},
			HasTestClocks: r.HasTestClocks,
		}, nil
}

const selectActiveKey = `
SELECT id, merchant_id, environment, secret_hash, last_four, permissions, created_at, revoked_at
FROM api_keys WHERE merchant_id = $1 AND environment = $2 AND revoked_at IS NULL`

// ActiveKey returns the scope's active secret key (its hash, never the key).
func (q queries) ActiveKey(ctx context.Context, scope tenant.Scope) (merchant.APIKey, error) {
	var r keyRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectActiveKey, scope.MerchantID, scope.Env); err != nil {
		return merchant.APIKey{}, translate(err)
	}
	return merchant.APIKey{
		ID: r.ID, Scope: scope, SecretHash: r.SecretHash, LastFour: r.LastFour,
		Permissions: r.Permissions, CreatedAt: r.CreatedAt.UTC(),
	}, nil
}

const grantPermission = `
UPDATE api_keys SET permissions = CASE WHEN $3 = ANY (permissions) THEN permissions
                                       ELSE array_append(permissions, $3) END
WHERE merchant_id = $1 AND environment = $2 AND revoked_at IS NULL`

// GrantPermission adds perm to the scope's active key (once).
func (q queries) GrantPermission(ctx context.Context, scope tenant.Scope, perm string) error {
	res, err := q.ex.ExecContext(ctx, grantPermission, scope.MerchantID, scope.Env, perm)
	return oneRow(res, err, errs.NotFound)
}

const setPasswordHash = `UPDATE merchants SET password_hash = $2 WHERE id = $1`

// SetPasswordHash replaces a merchant's password hash.
func (q queries) SetPasswordHash(ctx context.Context, id, hash string) error {
	res, err := q.ex.ExecContext(ctx, setPasswordHash, id, hash)
	return oneRow(res, err, errs.NotFound)
}
