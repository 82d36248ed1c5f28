-- +goose Up
-- The security log: one hash chain per merchant (see internal/audit).
-- audit_heads keeps each chain's last sequence number and hash; a writer
-- locks its merchant's head row, so appends to one chain are serial and
-- removing the newest events shows against the head.
-- IF NOT EXISTS: a development database can hold these tables already,
-- created from a branch that numbered this migration differently.
CREATE TABLE IF NOT EXISTS audit_heads (
    merchant_id text   PRIMARY KEY REFERENCES merchants (id),
    seq         bigint NOT NULL CHECK (seq >= 0),
    hash        bytea  NOT NULL
);

CREATE TABLE IF NOT EXISTS audit_events (
    id          text        PRIMARY KEY,
    merchant_id text        NOT NULL REFERENCES merchants (id),
    seq         bigint      NOT NULL CHECK (seq >= 1),
    environment text        CHECK (environment IN ('sandbox', 'production')), -- NULL: the whole account
    action      text        NOT NULL CHECK (length(action) <= 64),
    actor_type  text        NOT NULL CHECK (actor_type IN ('api_key', 'dashboard_user', 'operator')),
    actor_id    text        NOT NULL CHECK (length(actor_id) <= 200),
    actor_ip    text        NOT NULL CHECK (length(actor_ip) <= 64),
    created_at  timestamptz NOT NULL,
    details     jsonb       NOT NULL,
    hash        bytea       NOT NULL CHECK (length(hash) = 32),
    UNIQUE (merchant_id, seq)
);

-- +goose Down
DROP TABLE IF EXISTS audit_events;
DROP TABLE IF EXISTS audit_heads;
