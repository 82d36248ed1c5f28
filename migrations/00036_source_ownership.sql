-- +goose Up
-- The ownership check of a source linked through a processor token: the
-- provider's scores (0–100) of the customer's name and email against the
-- account's owner, and the result the name score gives. NULL on sources
-- linked any other way, and on those linked before this migration.
-- Additive only, so a binary that predates it keeps reading and writing
-- funding_sources while the new one rolls out.
ALTER TABLE funding_sources
    ADD COLUMN ownership_result text CHECK (ownership_result IN ('match', 'partial', 'mismatch', 'unavailable')),
    ADD COLUMN ownership_name_score smallint CHECK (ownership_name_score BETWEEN 0 AND 100),
    ADD COLUMN ownership_email_score smallint CHECK (ownership_email_score BETWEEN 0 AND 100),
    ADD COLUMN ownership_checked_at timestamptz,
    ADD CONSTRAINT funding_sources_ownership_checked CHECK ((ownership_result IS NULL) = (ownership_checked_at IS NULL));

-- +goose Down
ALTER TABLE funding_sources
    DROP COLUMN ownership_result, DROP COLUMN ownership_name_score,
    DROP COLUMN ownership_email_score, DROP COLUMN ownership_checked_at;
