-- +goose NO TRANSACTION
-- +goose Up
-- The request log's rows arrive in time order with random request ids.
-- Keyed by (merchant, environment, id), each row went to a random page of
-- the key's index, and after every checkpoint the first change to a page
-- writes the whole page to the write-ahead log. Keyed by time first, rows
-- land on the index's right edge; and the key, read backwards, serves the
-- dashboard's newest-first list, so the list's own index goes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS api_requests_by_time ON api_requests (merchant_id, environment, created_at, id);
ALTER TABLE api_requests DROP CONSTRAINT IF EXISTS api_requests_pkey,
    ADD CONSTRAINT api_requests_pkey PRIMARY KEY USING INDEX api_requests_by_time;
DROP INDEX CONCURRENTLY IF EXISTS api_requests_newest;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_requests_newest ON api_requests (merchant_id, environment, created_at DESC, id DESC);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS api_requests_by_id ON api_requests (merchant_id, environment, id);
ALTER TABLE api_requests DROP CONSTRAINT IF EXISTS api_requests_pkey,
    ADD CONSTRAINT api_requests_pkey PRIMARY KEY USING INDEX api_requests_by_id;
