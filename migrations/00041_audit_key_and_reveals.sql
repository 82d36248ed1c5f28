-- +goose Up
-- The audit chain's hash becomes keyed (HMAC-SHA256 under AUDIT_KEY,
-- version 2); rows written before, and by a previous binary during an
-- upgrade, keep plain SHA-256 (version 1, the default).
ALTER TABLE audit_events ADD COLUMN IF NOT EXISTS version smallint NOT NULL DEFAULT 1 CHECK (version IN (1, 2));

-- A secret key rolled from the dashboard is shown once: the session's
-- cookie carries it masked with a random pad that only this column holds,
-- and showing it clears the pad, so a replayed cookie reveals nothing and
-- a database reader never sees the key.
ALTER TABLE dashboard_sessions ADD COLUMN IF NOT EXISTS reveal_pad bytea CHECK (length(reveal_pad) <= 128);

-- +goose Down
ALTER TABLE dashboard_sessions DROP COLUMN IF EXISTS reveal_pad;
ALTER TABLE audit_events DROP COLUMN IF EXISTS version;
