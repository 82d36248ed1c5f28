package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fundsource/fundsource/internal/event"
	"github.com/fundsource/fundsource/internal/ids"
	"github.com/fundsource/fundsource/internal/webhook"
)

// recordEvent writes the event and, when the scope has a webhook endpoint,
// its delivery, due at once; the notification wakes the dispatchers when
// the transaction commits. One statement, one round trip.
const recordEvent = `
WITH ev AS (
  INSERT INTO events (merchant_id, environment, id, type, data, created_at)
  VALUES ($1, $2, $3, $4, $5, $6)
  RETURNING merchant_id, environment, id, created_at
), queued AS (
  INSERT INTO webhook_deliveries (id, merchant_id, environment, event_id, next_attempt_at, created_at, updated_at)
  SELECT $7, ev.merchant_id, ev.environment, ev.id, ev.created_at, ev.created_at, ev.created_at
  FROM ev JOIN webhook_endpoints w ON w.merchant_id = ev.merchant_id AND w.environment = ev.environment
  RETURNING 1
)
SELECT pg_notify('` + DeliveryChannel + `', '') FROM queued`

// RecordEvent writes an event row (and its webhook delivery); call it inside
// the change's transaction.
func (db *DB) RecordEvent(ctx context.Context, e event.Event) error {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Type, err)
	}
	_, err = db.q(ctx).ExecContext(ctx, recordEvent, e.Scope.MerchantID, e.Scope.Env, e.ID, e.Type, data, e.CreatedAt,
		ids.New(webhook.DeliveryPrefix))
	return translate(err)
}
