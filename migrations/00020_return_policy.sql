-- +goose Up
-- What returns do to a source: why it was removed ("return_R03", NULL when
-- the merchant removed it), its block while a return disputes the
-- authorization, and its last unblock with the merchant's attestation
-- (an unblock is allowed once per 365 days).
ALTER TABLE funding_sources
    ADD COLUMN removed_reason      text,
    ADD COLUMN block_code          text,
    ADD COLUMN block_reason        text,
    ADD COLUMN blocked_at          timestamptz,
    ADD COLUMN unblocked_at        timestamptz,
    ADD COLUMN unblock_attestation text,
    ADD CONSTRAINT funding_sources_block CHECK ((block_code IS NULL) = (blocked_at IS NULL));

-- +goose Down
ALTER TABLE funding_sources DROP CONSTRAINT funding_sources_block,
    DROP COLUMN removed_reason, DROP COLUMN block_code, DROP COLUMN block_reason, DROP COLUMN blocked_at,
    DROP COLUMN unblocked_at, DROP COLUMN unblock_attestation;
