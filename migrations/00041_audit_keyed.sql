-- +goose Up
-- The audit chain's hash becomes keyed (HMAC-SHA256 under AUDIT_KEY,
-- version 2); rows written before, and by a previous binary during an
-- upgrade, keep plain SHA-256 (version 1, the default).
ALTER TABLE audit_events ADD COLUMN IF NOT EXISTS version smallint NOT NULL DEFAULT 1 CHECK (version IN (1, 2));

-- +goose Down
ALTER TABLE audit_events DROP COLUMN IF EXISTS version;
