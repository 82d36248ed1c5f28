-- +goose Up
-- The dashboard shows a funding source's event history: events found by
-- the source id in their data, newest first, without scanning the
-- merchant's whole outbox.
CREATE INDEX events_by_source ON events (merchant_id, environment, (data->>'funding_source_id'), created_at DESC, id DESC)
    WHERE data ? 'funding_source_id';

-- +goose Down
DROP INDEX events_by_source;
