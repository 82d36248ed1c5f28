-- +goose Up
-- The request log, a row per batch of a scope's requests: the entries of
-- one flush are one value, so a flush writes one heap row and one index
-- entry per merchant and environment, not one per request.
-- A batch spans at most a second of arrival times, which is what lets a
-- reader walk the batches by first_at and know when it has the newest
-- entries (package postgres, ListRequests). api_requests keeps the rows
-- written before this table and by older servers during an upgrade;
-- readers merge the two and the retention sweep empties it.
CREATE TABLE api_request_batches (
    merchant_id text        NOT NULL,
    environment text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    first_at    timestamptz NOT NULL,
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    last_at     timestamptz NOT NULL CHECK (last_at >= first_at AND last_at - first_at <= interval '1 second'),
    entries     int         NOT NULL CHECK (entries BETWEEN 1 AND 500),
    -- The entries, in arrival order, in the format package postgres
    -- writes and reads (requestbatch.go): request id, arrival after
    -- first_at, method, path, status and latency.
    body        bytea       NOT NULL,
    PRIMARY KEY (merchant_id, environment, first_at, id)
);
-- Stored out of line without compression: random request ids hardly
-- compress, and compressing a row costs more than writing it whole.
ALTER TABLE api_request_batches ALTER COLUMN body SET STORAGE EXTERNAL;
CREATE INDEX api_request_batches_age ON api_request_batches (last_at);

-- +goose Down
DROP TABLE api_request_batches;
