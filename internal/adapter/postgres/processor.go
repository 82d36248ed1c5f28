package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

const processorTokenUsed = `
SELECT EXISTS (SELECT 1 FROM processor_tokens WHERE environment = $1 AND fingerprint = $2)`

// ProcessorTokenUsed reports whether a token fingerprint was consumed.
func (q queries) ProcessorTokenUsed(ctx context.Context, env tenant.Environment, fingerprint []byte) (bool, error) {
	var used bool
	err := sqlx.GetContext(ctx, q.ex, &used, processorTokenUsed, env, fingerprint)
	return used, translate(err)
}

const consumeProcessorToken = `
INSERT INTO processor_tokens (environment, fingerprint, merchant_id, funding_source_id, consumed_at)
VALUES ($1, $2, $3, $4, $5)`

// ConsumeProcessorToken records a token as used; errs.Conflict if it was.
func (q queries) ConsumeProcessorToken(ctx context.Context, scope tenant.Scope, fingerprint []byte, sourceID string, at time.Time) error {
	_, err := q.ex.ExecContext(ctx, consumeProcessorToken, scope.Env, fingerprint, scope.MerchantID, sourceID, at)
	return translate(err)
}

// sourceVerified reads when a source became Verified and, only for a
// Verified source that neither a verification nor an ownership check
// explains, whether the token ledger holds a token of it (a scan of the
// ledger, which has no index by source: disputes are rare reads).
const sourceVerified = `
SELECT f.verified_at,
       CASE WHEN f.status = 'Verified' AND f.md_status IS DISTINCT FROM 'succeeded' AND f.ownership_result IS NULL
            THEN EXISTS (SELECT 1 FROM processor_tokens t
                         WHERE t.environment = f.environment AND t.merchant_id = f.merchant_id AND t.funding_source_id = f.id)
            ELSE false END AS by_token
FROM funding_sources f
WHERE f.` + byID

// SourceVerified returns when a source became Verified and whether a
// processor token linked it.
func (q queries) SourceVerified(ctx context.Context, scope tenant.Scope, id string) (*time.Time, bool, error) {
	var r struct {
		VerifiedAt *time.Time `db:"verified_at"`
		ByToken    bool       `db:"by_token"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, sourceVerified, scope.MerchantID, scope.Env, id); err != nil {
		return nil, false, translate(err)
	}
	return r.VerifiedAt, r.ByToken, nil
}
