-- +goose Up
-- Dashboard sign-ins, so that a session can end on the server: sign-out
-- deletes its row, and a cookie whose row is gone opens nothing. The
-- cookie carries the session's 256-bit secret id; only its SHA-256 is
-- stored, so a database reader cannot take over a session.
CREATE TABLE dashboard_sessions (
    id_hash       bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    merchant_id   text NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL,
    ip            text NOT NULL CHECK (length(ip) <= 64),
    user_agent    text NOT NULL CHECK (length(user_agent) <= 256)
);
CREATE INDEX dashboard_sessions_by_merchant ON dashboard_sessions (merchant_id, created_at);

-- +goose Down
DROP TABLE dashboard_sessions;
