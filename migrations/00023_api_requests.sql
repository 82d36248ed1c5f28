-- +goose Up
-- The API requests of the last 7 days, for the dashboard's request log:
-- what was asked and answered, never a body. Rows come in batches from a
-- buffer off the request path; the retention sweep deletes the old ones.
CREATE TABLE api_requests (
    merchant_id text        NOT NULL,
    environment text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    id          text        NOT NULL, -- the request id, req_…
    created_at  timestamptz NOT NULL,
    method      text        NOT NULL CHECK (length(method) <= 10),
    path        text        NOT NULL CHECK (length(path) <= 300),
    status      smallint    NOT NULL CHECK (status BETWEEN 100 AND 599),
    latency_us  bigint      NOT NULL CHECK (latency_us >= 0),
    PRIMARY KEY (merchant_id, environment, id)
);
CREATE INDEX api_requests_newest ON api_requests (merchant_id, environment, created_at DESC, id DESC);
-- Rows arrive in time order, so a BRIN index finds the old ones cheaply.
CREATE INDEX api_requests_age ON api_requests USING brin (created_at);

-- +goose Down
DROP TABLE api_requests;
