-- +goose Up
-- A source's default Individual Identification Number, written once: the
-- creation statement sets it on every row it inserts, so its rows skip
-- the defaults trigger (a PL/pgSQL call per row); the trigger fills a row
-- inserted without it with the same function. A one-expression SQL
-- function is inlined where it is used.
-- +goose StatementBegin
CREATE FUNCTION funding_source_individual_id(source_id text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN upper(right(source_id, 15));
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION funding_sources_receiver_defaults() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.account_holder_type IS NULL THEN
        NEW.account_holder_type := CASE WHEN EXISTS (SELECT 1 FROM customers c
            WHERE c.merchant_id = NEW.merchant_id AND c.environment = NEW.environment AND c.id = NEW.customer_id
              AND c.business_name <> '') THEN 'company' ELSE 'individual' END;
    END IF;
    IF NEW.individual_id IS NULL THEN
        NEW.individual_id := funding_source_individual_id(NEW.id);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION funding_sources_receiver_defaults() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.account_holder_type IS NULL THEN
        NEW.account_holder_type := CASE WHEN EXISTS (SELECT 1 FROM customers c
            WHERE c.merchant_id = NEW.merchant_id AND c.environment = NEW.environment AND c.id = NEW.customer_id
              AND c.business_name <> '') THEN 'company' ELSE 'individual' END;
    END IF;
    IF NEW.individual_id IS NULL THEN
        NEW.individual_id := upper(right(NEW.id, 15));
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
DROP FUNCTION funding_source_individual_id(text);
