-- +goose Up
-- Merchants: the businesses using the service. Email is the dashboard login.
CREATE TABLE merchants (
    id                       text PRIMARY KEY,
    name                     text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    email                    text NOT NULL UNIQUE CHECK (email = lower(email)),
    password_hash            text NOT NULL,
    production_activated_at  timestamptz,
    created_at               timestamptz NOT NULL DEFAULT now()
);

-- One row per merchant and environment: the public key and the environment's flags.
CREATE TABLE merchant_environments (
    merchant_id               text NOT NULL REFERENCES merchants (id),
    environment               text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    public_key                text NOT NULL UNIQUE,
    third_party_verification  boolean NOT NULL DEFAULT false,
    created_at                timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment)
);

-- Secret API keys, stored only as SHA-256 of the whole key (256 random bits,
-- so a fast hash is enough). At most one active key per merchant and environment.
CREATE TABLE api_keys (
    id            text PRIMARY KEY,
    merchant_id   text NOT NULL,
    environment   text NOT NULL,
    secret_hash   bytea NOT NULL UNIQUE,
    last_four     text NOT NULL,
    permissions   text[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);
CREATE UNIQUE INDEX api_keys_one_active ON api_keys (merchant_id, environment) WHERE revoked_at IS NULL;

-- Customers of a merchant, per environment.
CREATE TABLE customers (
    merchant_id    text NOT NULL,
    environment    text NOT NULL,
    id             text NOT NULL,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    email          text NOT NULL,
    business_name  text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);
CREATE INDEX customers_newest ON customers (merchant_id, environment, created_at DESC, id DESC);

-- Events (the outbox): written in the same transaction as the change they describe.
CREATE TABLE events (
    merchant_id  text NOT NULL,
    environment  text NOT NULL,
    id           text NOT NULL,
    type         text NOT NULL,
    data         jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment, id)
);
CREATE INDEX events_newest ON events (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX events_created ON events (created_at);

-- Idempotency keys: the first response to a POST, kept 24 hours. The row is
-- written in the same transaction as the request's own changes.
CREATE TABLE idempotency_keys (
    merchant_id      text NOT NULL,
    environment      text NOT NULL,
    key              text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash     bytea NOT NULL,
    response_status  integer NOT NULL,
    response_body    bytea NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE events;
DROP TABLE customers;
DROP TABLE api_keys;
DROP TABLE merchant_environments;
DROP TABLE merchants;
