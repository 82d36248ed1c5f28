package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/advance"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// claimAdvance leases the advancing clock whose lease ran out first (or
// never was) to $1 until $3.
const claimAdvance = `
WITH due AS (
  SELECT merchant_id, environment, id FROM test_clocks
  WHERE status = 'advancing' AND (advance_lease_until IS NULL OR advance_lease_until <= $2)
  ORDER BY advance_lease_until NULLS FIRST, created_at
  LIMIT 1
  FOR UPDATE SKIP LOCKED
)
UPDATE test_clocks t SET advance_lease_owner = $1, advance_lease_until = $3
FROM due WHERE (t.merchant_id, t.environment, t.id) = (due.merchant_id, due.environment, due.id)
RETURNING t.merchant_id, t.environment, t.id, t.frozen_time, t.advance_to`

// ClaimAdvance leases an advancing clock whose lease is free
// (advance.Store).
func (db *DB) ClaimAdvance(ctx context.Context, owner string, now, until time.Time) (advance.Claim, bool, error) {
	var row struct {
		MerchantID  string    `db:"merchant_id"`
		Environment string    `db:"environment"`
		ID          string    `db:"id"`
		Frozen      time.Time `db:"frozen_time"`
		Target      time.Time `db:"advance_to"`
	}
	err := sqlx.GetContext(ctx, db.x, &row, claimAdvance, owner, now, until)
	if errors.Is(err, sql.ErrNoRows) {
		return advance.Claim{}, false, nil
	}
	if err != nil {
		return advance.Claim{}, false, translate(err)
	}
	return advance.Claim{Scope: tenant.Scope{MerchantID: row.MerchantID, Env: tenant.Environment(row.Environment)}, ClockID: row.ID, Now: row.Frozen.UTC(), Target: row.Target.UTC()}, true, nil
}

const advanceStepDone = `
UPDATE test_clocks SET frozen_time = $3, advance_lease_until = $4
WHERE id = $1 AND status = 'advancing' AND advance_lease_owner = $2 AND $3 < advance_to`

// StepDone moves the clock to t under owner's lease (advance.Store).
func (db *DB) StepDone(ctx context.Context, id, owner string, t, until time.Time) (bool, error) {
	res, err := db.x.ExecContext(ctx, advanceStepDone, id, owner, t, until)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}
