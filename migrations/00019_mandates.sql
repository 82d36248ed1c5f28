-- +goose Up
-- Mandates: a customer's authorization of debits, kept as evidence. A
-- source's removal is a mark on its row, so its mandates stay; the foreign
-- key refuses to delete a source that has any, and a trigger refuses to
-- delete a mandate that is active or was revoked less than two years ago.
CREATE TABLE mandates (
    merchant_id        text NOT NULL,
    environment        text NOT NULL,
    id                 text NOT NULL,
    funding_source_id  text NOT NULL,
    customer_id        text NOT NULL,
    type               text NOT NULL CHECK (type IN ('single', 'recurring')),
    sec_code           text NOT NULL CHECK (sec_code IN ('WEB', 'CCD', 'PPD')),
    status             text NOT NULL CHECK (status IN ('active', 'revoked')),
    accepted_at        timestamptz NOT NULL,
    ip_address         text,
    user_agent         text,
    text               text NOT NULL,
    text_sha256        text NOT NULL CHECK (text_sha256 ~ '^[0-9a-f]{64}$'),
    revoked_at         timestamptz,
    revoke_reason      text,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, funding_source_id)
        REFERENCES funding_sources (merchant_id, environment, id) ON DELETE RESTRICT,
    CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX mandates_newest ON mandates (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX mandates_of_source ON mandates (merchant_id, environment, funding_source_id, created_at DESC, id DESC);

-- +goose StatementBegin
CREATE FUNCTION mandates_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'active' OR OLD.revoked_at > now() - interval '2 years' THEN
        RAISE EXCEPTION 'mandate % is kept until two years after its revocation', OLD.id;
    END IF;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER mandates_keep BEFORE DELETE ON mandates FOR EACH ROW EXECUTE FUNCTION mandates_keep();

-- The mandate a debit or subscription was authorized by; NULL for credits
-- and for what was created before mandates existed.
ALTER TABLE subscriptions ADD COLUMN mandate_id text,
    ADD FOREIGN KEY (merchant_id, environment, mandate_id) REFERENCES mandates (merchant_id, environment, id);
ALTER TABLE payments ADD COLUMN mandate_id text,
    ADD FOREIGN KEY (merchant_id, environment, mandate_id) REFERENCES mandates (merchant_id, environment, id);
CREATE INDEX payments_of_mandate ON payments (merchant_id, environment, mandate_id) WHERE mandate_id IS NOT NULL;

-- +goose Down
DROP INDEX payments_of_mandate;
ALTER TABLE payments DROP COLUMN mandate_id;
ALTER TABLE subscriptions DROP COLUMN mandate_id;
DROP TABLE mandates;
DROP FUNCTION mandates_keep();
