-- +goose NO TRANSACTION
-- +goose Up
-- Sandbox test clocks: a merchant's frozen time that its customers on the
-- clock (and everything of theirs) live on. Sandbox only. status is ready,
-- or advancing to advance_to (set exactly while advancing); the engine that
-- runs an advance holds it by advance_lease_owner until
-- advance_lease_until. customer_count counts the clock's customers: the
-- customer insert raises it in the same statement, under the row's lock,
-- so the limit of 100 holds against concurrent creations.
--
-- Without a transaction (the indexes on customers and events are built
-- CONCURRENTLY, as those tables are large), so every statement can run
-- again after an interruption.
CREATE TABLE IF NOT EXISTS test_clocks (
    merchant_id          text NOT NULL,
    environment          text NOT NULL CHECK (environment = 'sandbox'),
    id                   text NOT NULL,
    name                 text CHECK (length(name) BETWEEN 1 AND 100),
    frozen_time          timestamptz NOT NULL,
    status               text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'advancing')),
    advance_to           timestamptz,
    advance_lease_owner  text,
    advance_lease_until  timestamptz,
    customer_count       integer NOT NULL DEFAULT 0 CHECK (customer_count BETWEEN 0 AND 100),
    created_at           timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment),
    CHECK ((status = 'advancing') = (advance_to IS NOT NULL)),
    CHECK (advance_to IS NULL OR advance_to > frozen_time),
    CHECK ((advance_lease_owner IS NULL) = (advance_lease_until IS NULL))
);
CREATE INDEX IF NOT EXISTS test_clocks_newest ON test_clocks (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS test_clocks_advancing ON test_clocks (advance_lease_until) WHERE status = 'advancing';

-- A customer on a clock. New and NULL everywhere, so the foreign key needs
-- no validating scan (NOT VALID still checks every new and changed row).
ALTER TABLE customers ADD COLUMN IF NOT EXISTS test_clock_id text;
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'customers_test_clock_fkey') THEN
        ALTER TABLE customers ADD CONSTRAINT customers_test_clock_fkey
            FOREIGN KEY (merchant_id, environment, test_clock_id) REFERENCES test_clocks (merchant_id, environment, id) NOT VALID;
    END IF;
END
$$;
-- +goose StatementEnd
CREATE INDEX CONCURRENTLY IF NOT EXISTS customers_by_test_clock ON customers (merchant_id, environment, test_clock_id)
    WHERE test_clock_id IS NOT NULL;

-- An event recorded on a clock: the clock and its time then. Nullable
-- without a default: no rewrite of the table.
ALTER TABLE events ADD COLUMN IF NOT EXISTS test_clock_id text, ADD COLUMN IF NOT EXISTS clock_time timestamptz;
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_by_test_clock ON events (merchant_id, environment, test_clock_id)
    WHERE test_clock_id IS NOT NULL;

-- A merchant environment's first clock changes what its keys resolve to
-- (whether the API must look for clocks): the servers drop their cached keys.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notify_first_test_clock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM test_clocks WHERE merchant_id = NEW.merchant_id AND environment = NEW.environment AND id <> NEW.id) THEN
        PERFORM pg_notify('api_keys_changed', '');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE OR REPLACE TRIGGER test_clocks_first AFTER INSERT ON test_clocks
    FOR EACH ROW EXECUTE FUNCTION notify_first_test_clock();

-- A mandate is kept two years after its revocation (00019), except a
-- mandate of a customer on a sandbox test clock: deleting the clock
-- deletes it, as everything else of that rehearsal (test data that no
-- bank saw).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION mandates_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (OLD.status = 'active' OR OLD.revoked_at > now() - interval '2 years')
       AND NOT (OLD.environment = 'sandbox' AND EXISTS (
           SELECT 1 FROM customers c
           WHERE c.merchant_id = OLD.merchant_id AND c.environment = OLD.environment AND c.id = OLD.customer_id
             AND c.test_clock_id IS NOT NULL)) THEN
        RAISE EXCEPTION 'mandate % is kept until two years after its revocation', OLD.id;
    END IF;
    RETURN OLD;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION mandates_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'active' OR OLD.revoked_at > now() - interval '2 years' THEN
        RAISE EXCEPTION 'mandate % is kept until two years after its revocation', OLD.id;
    END IF;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
DROP TRIGGER IF EXISTS test_clocks_first ON test_clocks;
DROP FUNCTION IF EXISTS notify_first_test_clock();
DROP INDEX CONCURRENTLY IF EXISTS events_by_test_clock;
ALTER TABLE events DROP COLUMN IF EXISTS clock_time, DROP COLUMN IF EXISTS test_clock_id;
DROP INDEX CONCURRENTLY IF EXISTS customers_by_test_clock;
ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_test_clock_fkey;
ALTER TABLE customers DROP COLUMN IF EXISTS test_clock_id;
DROP TABLE IF EXISTS test_clocks;
