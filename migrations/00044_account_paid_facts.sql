-- +goose Up
-- A settled payment into or out of an account is a fact about it ('paid',
-- no code): with 'verified', the uses of the account by other merchants'
-- customers that the account check's many_customers counts. A link alone
-- no longer counts for any check (anyone can link an account and delete
-- it), so a 'linked' fact marks no kept check; it is still recorded, since
-- the marking finds an account's sources by their links. A 'paid' fact
-- marks only other merchants' sources: a merchant's own customers never
-- count for its own check. An earlier release beside this one still
-- counts links; its kept answers are no longer marked by a new link, so
-- until it is replaced it may answer a link-counted many_customers late.
ALTER TABLE account_facts DROP CONSTRAINT account_facts_kind_check;
ALTER TABLE account_facts ADD CONSTRAINT account_facts_kind_check
    CHECK (kind IN ('linked', 'verified', 'paid', 'returned', 'rejected', 'corrected'));
ALTER TABLE account_facts DROP CONSTRAINT account_facts_check;
ALTER TABLE account_facts ADD CONSTRAINT account_facts_check
    CHECK ((kind IN ('linked', 'verified', 'paid')) = (code IS NULL));

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION account_facts_mark_checks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE funding_sources s
    SET check_result = NULL, check_seq = s.check_seq + 1
    FROM (SELECT DISTINCT l.merchant_id, l.environment, l.funding_source_id
          FROM (SELECT DISTINCT environment, account_fp, kind, merchant_id FROM added WHERE kind <> 'linked') n
          JOIN account_facts l ON l.environment = n.environment AND l.account_fp = n.account_fp AND l.kind = 'linked'
          WHERE n.kind <> 'paid' OR l.merchant_id <> n.merchant_id) m
    WHERE s.merchant_id = m.merchant_id AND s.environment = m.environment AND s.id = m.funding_source_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION account_facts_mark_checks() RETURNS trigger LANGUAGE plpgsql AS $$
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
DELETE FROM account_facts WHERE kind = 'paid';
ALTER TABLE account_facts DROP CONSTRAINT account_facts_check;
ALTER TABLE account_facts ADD CONSTRAINT account_facts_check
    CHECK ((kind IN ('linked', 'verified')) = (code IS NULL));
ALTER TABLE account_facts DROP CONSTRAINT account_facts_kind_check;
ALTER TABLE account_facts ADD CONSTRAINT account_facts_kind_check
    CHECK (kind IN ('linked', 'verified', 'returned', 'rejected', 'corrected'));
