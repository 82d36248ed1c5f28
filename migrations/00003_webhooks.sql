-- +goose Up
-- One webhook endpoint per merchant and environment (that is, per API key).
-- The signing secret is sealed like account numbers; after a roll the
-- previous secret keeps signing until previous_secret_expires_at.
CREATE TABLE webhook_endpoints (
    merchant_id                 text NOT NULL,
    environment                 text NOT NULL,
    url                         text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    secret_key_id               text NOT NULL,
    secret_sealed               bytea NOT NULL,
    previous_secret_key_id      text,
    previous_secret_sealed      bytea,
    previous_secret_expires_at  timestamptz,
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment),
    CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL))
);

-- A delivery is the job of getting one event to the endpoint. It is written
-- in the transaction that records the event (or by a redelivery) and claimed
-- by a worker with FOR UPDATE SKIP LOCKED. next_attempt_at is set while pending.
CREATE TABLE webhook_deliveries (
    id               text PRIMARY KEY,
    merchant_id      text NOT NULL,
    environment      text NOT NULL,
    event_id         text NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'delivered', 'failed', 'canceled')),
    attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at  timestamptz,
    last_error       text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    FOREIGN KEY (merchant_id, environment, event_id) REFERENCES events (merchant_id, environment, id) ON DELETE CASCADE,
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (merchant_id, environment, event_id, created_at);

-- Every HTTP attempt of a delivery: what was sent where and what came back.
CREATE TABLE webhook_attempts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id    text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at   timestamptz NOT NULL,
    url            text NOT NULL,
    status_code    integer,
    latency_ms     integer NOT NULL CHECK (latency_ms >= 0),
    response_body  text NOT NULL DEFAULT '',
    error          text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at);

-- GET /v2/events?type=… pages through one type newest first.
CREATE INDEX events_type_newest ON events (merchant_id, environment, type, created_at DESC, id DESC);

-- +goose Down
DROP INDEX events_type_newest;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
