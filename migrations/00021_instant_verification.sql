-- +goose Up
-- A verification proves the account one of two ways: two micro-deposits
-- over ACH, or one instant credit whose remittance line carries a code.
-- Both are rows of micro_deposits under the same state machine, attempt
-- counter and expiry; amounts_ciphertext holds the sealed proof (the two
-- amounts, or the code).
ALTER TABLE micro_deposits
    ADD COLUMN method text NOT NULL DEFAULT 'micro_deposits' CHECK (method IN ('micro_deposits', 'instant')),
    ADD COLUMN rail text CHECK (rail IN ('rtp', 'fednow')),
    ADD COLUMN rail_message_id text,
    ADD COLUMN arrived_at timestamptz,
    ADD COLUMN failure_code text,
    ADD COLUMN fallback_reason text CHECK (fallback_reason IN ('instant_unavailable', 'rail_unavailable')),
    ADD CONSTRAINT micro_deposits_instant_has_rail CHECK ((method = 'instant') = (rail IS NOT NULL AND rail_message_id IS NOT NULL)),
    ADD CONSTRAINT micro_deposits_fallback_only_ach CHECK (fallback_reason IS NULL OR method = 'micro_deposits');

ALTER TABLE funding_sources
    ADD COLUMN md_method text,
    ADD COLUMN md_rail text,
    ADD COLUMN md_arrived_at timestamptz,
    ADD COLUMN md_failure_code text,
    ADD COLUMN md_fallback_reason text;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION funding_sources_current_verification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE funding_sources
    SET md_seq = NEW.seq, md_status = NEW.status, md_initiated_at = NEW.initiated_at,
        md_expected_arrival_date = NEW.expected_arrival_date, md_expires_at = NEW.expires_at,
        md_attempts_remaining = NEW.attempts_remaining, md_return_code = NEW.return_code,
        md_method = NEW.method, md_rail = NEW.rail, md_arrived_at = NEW.arrived_at,
        md_failure_code = NEW.failure_code, md_fallback_reason = NEW.fallback_reason
    WHERE id = NEW.funding_source_id
      AND (merchant_id, environment) IS NOT DISTINCT FROM (NEW.merchant_id, NEW.environment)
      AND (md_seq IS NULL OR md_seq <= NEW.seq);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

UPDATE funding_sources SET md_method = 'micro_deposits' WHERE md_seq IS NOT NULL;

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION funding_sources_current_verification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE funding_sources
    SET md_seq = NEW.seq, md_status = NEW.status, md_initiated_at = NEW.initiated_at,
        md_expected_arrival_date = NEW.expected_arrival_date, md_expires_at = NEW.expires_at,
        md_attempts_remaining = NEW.attempts_remaining, md_return_code = NEW.return_code
    WHERE id = NEW.funding_source_id
      AND (merchant_id, environment) IS NOT DISTINCT FROM (NEW.merchant_id, NEW.environment)
      AND (md_seq IS NULL OR md_seq <= NEW.seq);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TABLE funding_sources
    DROP COLUMN md_method, DROP COLUMN md_rail, DROP COLUMN md_arrived_at, DROP COLUMN md_failure_code,
    DROP COLUMN md_fallback_reason;
-- Instant verifications cannot be told apart from micro-deposits without
-- their column; they go with it.
DELETE FROM micro_deposits WHERE method = 'instant';
ALTER TABLE micro_deposits
    DROP CONSTRAINT micro_deposits_fallback_only_ach, DROP CONSTRAINT micro_deposits_instant_has_rail,
    DROP COLUMN fallback_reason, DROP COLUMN failure_code, DROP COLUMN arrived_at, DROP COLUMN rail_message_id,
    DROP COLUMN rail, DROP COLUMN method;
