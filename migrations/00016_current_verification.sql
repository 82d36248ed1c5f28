-- +goose Up
-- A source's current (latest) micro-deposit verification, kept on the
-- source's own row so that reading a source is one row, not a join to its
-- latest micro_deposits row. A trigger writes it in the transaction of
-- every micro-deposit insert or update, whoever makes it.
ALTER TABLE funding_sources
    ADD COLUMN md_seq integer,
    ADD COLUMN md_status text,
    ADD COLUMN md_initiated_at timestamptz,
    ADD COLUMN md_expected_arrival_date date,
    ADD COLUMN md_expires_at timestamptz,
    ADD COLUMN md_attempts_remaining integer,
    ADD COLUMN md_return_code text;

-- +goose StatementBegin
CREATE FUNCTION funding_sources_current_verification() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER micro_deposits_current AFTER INSERT OR UPDATE ON micro_deposits
    FOR EACH ROW EXECUTE FUNCTION funding_sources_current_verification();

UPDATE funding_sources f
SET md_seq = m.seq, md_status = m.status, md_initiated_at = m.initiated_at,
    md_expected_arrival_date = m.expected_arrival_date, md_expires_at = m.expires_at,
    md_attempts_remaining = m.attempts_remaining, md_return_code = m.return_code
FROM (SELECT DISTINCT ON (merchant_id, environment, funding_source_id) *
      FROM micro_deposits ORDER BY merchant_id, environment, funding_source_id, seq DESC) m
WHERE m.merchant_id = f.merchant_id AND m.environment = f.environment AND m.funding_source_id = f.id;

-- +goose Down
DROP TRIGGER micro_deposits_current ON micro_deposits;
DROP FUNCTION funding_sources_current_verification();
ALTER TABLE funding_sources
    DROP COLUMN md_seq, DROP COLUMN md_status, DROP COLUMN md_initiated_at, DROP COLUMN md_expected_arrival_date,
    DROP COLUMN md_expires_at, DROP COLUMN md_attempts_remaining, DROP COLUMN md_return_code;
