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
