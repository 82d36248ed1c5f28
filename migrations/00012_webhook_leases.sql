-- +goose Up
-- Deliveries are leased, not locked: a dispatcher claims a due delivery in
-- a short statement that moves next_attempt_at to the lease's end and
-- stamps its lease_token, sends with no transaction open, and records the
-- attempt in a second short statement that must still hold the token. A
-- process that dies mid-send leaves the delivery due again when the lease
-- ends, and another process sends it (at least once, same event id).
ALTER TABLE webhook_deliveries
    ADD COLUMN lease_token text,
    ADD COLUMN leased_until timestamptz,
    ADD CONSTRAINT webhook_deliveries_lease CHECK ((lease_token IS NULL) = (leased_until IS NULL));
-- The oldest due delivery of each endpoint, for fair claims.
CREATE INDEX webhook_deliveries_due_by_endpoint ON webhook_deliveries (merchant_id, environment, next_attempt_at)
    WHERE status = 'pending';

-- Endpoint health: failures in a row, since when the endpoint has failed
-- without a success, and when it was disabled (attempts stop; deliveries
-- are kept for POST /v2/webhooks/enable).
ALTER TABLE webhook_endpoints
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    ADD COLUMN failing_since timestamptz,
    ADD COLUMN disabled_at timestamptz;

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN disabled_at, DROP COLUMN failing_since, DROP COLUMN consecutive_failures;
DROP INDEX webhook_deliveries_due_by_endpoint;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_lease, DROP COLUMN leased_until, DROP COLUMN lease_token;
