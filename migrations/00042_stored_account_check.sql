-- +goose Up
-- A source's account check, kept on its row so that reading a source reads
-- no history: the result and reasons as last computed for that source
-- (relative to its own merchant and customer), and when that answer
-- expires because a fact it counted leaves its window (NULL: never).
-- check_result NULL means "compute it": never computed (rows older than
-- this migration, or written by an earlier release), or the account's
-- history changed since. check_seq counts those changes, so a reader that
-- computed an answer from an older history cannot store it over a newer
-- mark.
ALTER TABLE funding_sources
    ADD COLUMN check_result text CHECK (check_result IN ('pass', 'caution', 'fail', 'unknown')),
    ADD COLUMN check_reasons text[],
    ADD COLUMN check_expires_at timestamptz,
    ADD COLUMN check_seq bigint NOT NULL DEFAULT 0;

-- Every fact about an account marks the stored checks of every source
-- that linked the account, of any merchant (each has a 'linked' fact: its
-- creation writes one, and so does a correction that moves it to another
-- account), in
-- the transaction that records the fact, whoever records it: an earlier
-- release running beside this one too. A source's own link never changes
-- its own answer, so its 'linked' fact does not mark it; any other fact
-- does.
-- +goose StatementBegin
CREATE FUNCTION account_facts_mark_checks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE funding_sources s
    SET check_result = NULL, check_seq = s.check_seq + 1
    FROM (SELECT DISTINCT l.merchant_id, l.environment, l.funding_source_id
          FROM (SELECT DISTINCT environment, account_fp, kind, funding_source_id FROM added) n
          JOIN account_facts l ON l.environment = n.environment AND l.account_fp = n.account_fp AND l.kind = 'linked'
          WHERE n.kind <> 'linked' OR l.funding_source_id <> n.funding_source_id) m
    WHERE s.merchant_id = m.merchant_id AND s.environment = m.environment AND s.id = m.funding_source_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER account_facts_mark_checks AFTER INSERT ON account_facts
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION account_facts_mark_checks();

-- +goose Down
DROP TRIGGER account_facts_mark_checks ON account_facts;
DROP FUNCTION account_facts_mark_checks();
ALTER TABLE funding_sources
    DROP COLUMN check_result, DROP COLUMN check_reasons, DROP COLUMN check_expires_at, DROP COLUMN check_seq;
