package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fundsource/fundsource/internal/event"
)

const insertEvent = `
INSERT INTO events (merchant_id, environment, id, type, data, created_at)
VALUES ($1, $2, $3, $4, $5, $6)`

// RecordEvent writes an event row; call it inside the change's transaction.
func (db *DB) RecordEvent(ctx context.Context, e event.Event) error {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Type, err)
	}
	_, err = db.q(ctx).ExecContext(ctx, insertEvent, e.Scope.MerchantID, e.Scope.Env, e.ID, e.Type, data, e.CreatedAt)
	return translate(err)
}
