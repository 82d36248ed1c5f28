-- +goose Up
-- A new fact about an account marks the kept account check of the
-- sources of that account it can change (see 00042 and 00044). A
-- statement trigger runs for every statement that inserts a fact, the
-- creation of every source among them, whose only fact is a link, which
-- marks nothing; a row trigger with a condition fires only for the facts
-- that mark, and a creation builds no transition table and runs no
-- function.
-- +goose StatementBegin
CREATE FUNCTION account_facts_mark_source_checks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE funding_sources s
    SET check_result = NULL, check_seq = s.check_seq + 1
    FROM account_facts l
    WHERE l.environment = NEW.environment AND l.account_fp = NEW.account_fp AND l.kind = 'linked'
      AND (NEW.kind <> 'paid' OR l.merchant_id <> NEW.merchant_id)
      AND s.merchant_id = l.merchant_id AND s.environment = l.environment AND s.id = l.funding_source_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER account_facts_mark_source_checks AFTER INSERT ON account_facts
    FOR EACH ROW WHEN (NEW.kind <> 'linked') EXECUTE FUNCTION account_facts_mark_source_checks();
DROP TRIGGER account_facts_mark_checks ON account_facts;
DROP FUNCTION account_facts_mark_checks();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION account_facts_mark_checks() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER account_facts_mark_checks AFTER INSERT ON account_facts
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION account_facts_mark_checks();
DROP TRIGGER account_facts_mark_source_checks ON account_facts;
DROP FUNCTION account_facts_mark_source_checks();
