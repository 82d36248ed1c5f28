-- +goose Up
-- Each merchant environment is an originator: the company its ACH entries
-- go out under (company_name, company_id), whether it may send entries
-- (status), its limits in cents and whether it may use Same Day ACH.
--
-- The row is created by the database as the environment's row is (a
-- trigger), so every binary, one that predates originators included,
-- creates it, and the backfill below uses the same defaults:
--   sandbox     active, 10,000.00 / 50,000.00 / 50,000.00, same_day on;
--   production  pending_review, 5,000.00 / 25,000.00 / 25,000.00,
--               same_day off. An operator reviews and activates it.
-- Production environments that exist already were sending entries, so
-- their backfilled originators are active: an upgrade does not stop them.
--
-- company_name defaults to the merchant's name upper-cased, with the
-- Latin-1 letters that carry marks spelled without them and every other
-- character outside NACHA's name alphabet a space, cut at 16. company_id
-- is a placeholder ("1" and 9 digits of a sequence) until the operator
-- sets the bank's.
--
-- usage_day and the two usage totals count the payments created on one
-- banking day (US Eastern). They live on the originator's row because
-- the statement that creates a payment locks that row FOR UPDATE, which
-- returns its latest committed totals, and adds to them: two payments
-- racing for the last dollar are ordered by the lock. A new banking day
-- starts from zero.
--
-- The transaction is short but takes a SHARE ROW EXCLUSIVE lock on
-- merchant_environments (the foreign key and the trigger) and an ACCESS
-- EXCLUSIVE lock on ach_entries (two nullable columns, no rewrite):
-- sign-ups and origination wait for it, while reads and payments do not.
CREATE SEQUENCE originator_company_ids MINVALUE 1 MAXVALUE 999999999;

CREATE TABLE originators (
    merchant_id          text NOT NULL,
    environment          text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    company_name         text NOT NULL CHECK (company_name ~ '^[ -~]{1,16}$'),
    company_id           text NOT NULL CHECK (company_id ~ '^[ -~]{10}$'),
    status               text NOT NULL CHECK (status IN ('pending_review', 'active', 'suspended')),
    per_entry_debit_cents bigint NOT NULL CHECK (per_entry_debit_cents >= 0),
    daily_debit_cents    bigint NOT NULL CHECK (daily_debit_cents >= 0),
    daily_credit_cents   bigint NOT NULL CHECK (daily_credit_cents >= 0),
    same_day             boolean NOT NULL,
    rule_thresholds      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(rule_thresholds) = 'object'),
    usage_day            date,
    usage_debit_cents    bigint NOT NULL DEFAULT 0 CHECK (usage_debit_cents >= 0),
    usage_credit_cents   bigint NOT NULL DEFAULT 0 CHECK (usage_credit_cents >= 0),
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);

-- +goose StatementBegin
CREATE FUNCTION originator_company_name(name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(nullif(btrim(left(btrim(regexp_replace(upper(translate(name,
        'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖòóôõöÙÚÛÜùúûüÝýÿØøßÆæ',
        'AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOoooooUUUUuuuuYyyOosAa')),
        '[^A-Z0-9 &.,/''-]+', ' ', 'g')), 16)), ''), 'MERCHANT')
$$;

CREATE FUNCTION originator_insert(m_id text, env text, status text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO originators (merchant_id, environment, company_name, company_id, status,
                             per_entry_debit_cents, daily_debit_cents, daily_credit_cents, same_day)
    SELECT m.id, env, originator_company_name(m.name),
           '1' || lpad(nextval('originator_company_ids')::text, 9, '0'), status,
           CASE WHEN env = 'sandbox' THEN 1000000 ELSE 500000 END,
           CASE WHEN env = 'sandbox' THEN 5000000 ELSE 2500000 END,
           CASE WHEN env = 'sandbox' THEN 5000000 ELSE 2500000 END,
           env = 'sandbox'
    FROM merchants m WHERE m.id = m_id
    ON CONFLICT (merchant_id, environment) DO NOTHING
$$;

CREATE FUNCTION merchant_environments_originator() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM originator_insert(NEW.merchant_id, NEW.environment,
        CASE WHEN NEW.environment = 'sandbox' THEN 'active' ELSE 'pending_review' END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER merchant_environments_originator AFTER INSERT ON merchant_environments
    FOR EACH ROW EXECUTE FUNCTION merchant_environments_originator();

SELECT originator_insert(e.merchant_id, e.environment, 'active')
FROM merchant_environments e ORDER BY e.created_at, e.merchant_id, e.environment;

-- The company an entry went out under, decided at assignment like its
-- class so a rebuilt file gives the same bytes (NULL: the platform's,
-- as before originators, and always for micro-deposits).
ALTER TABLE ach_entries
    ADD COLUMN company_name text CHECK (length(company_name) BETWEEN 1 AND 16),
    ADD COLUMN company_id text CHECK (length(company_id) BETWEEN 1 AND 10);

-- +goose Down
ALTER TABLE ach_entries DROP COLUMN company_name, DROP COLUMN company_id;
DROP TRIGGER merchant_environments_originator ON merchant_environments;
DROP FUNCTION merchant_environments_originator();
DROP FUNCTION originator_insert(text, text, text);
DROP FUNCTION originator_company_name(text);
DROP TABLE originators;
DROP SEQUENCE originator_company_ids;
