-- +goose Up
-- The merchant's own key-value metadata on customers, funding sources,
-- payments and subscriptions: a JSON object of strings, at most 20 keys
-- (the service checks the sizes; the schema that it is an object). Rows
-- written before it, and by a previous binary, have none.
ALTER TABLE customers ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object');
ALTER TABLE funding_sources ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object');
ALTER TABLE payments ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object');
ALTER TABLE subscriptions ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object');
-- GET /v2/payments?metadata[KEY]=VALUE reads it by containment.
CREATE INDEX payments_metadata ON payments USING gin (metadata jsonb_path_ops);

-- A refund is a credit of its own naming the processed debit it pays
-- back (refund_of), with the merchant's reason. A debit may have several
-- refunds; their total is held to the debit's amount under the debit's
-- row lock, not by the schema.
ALTER TABLE payments
    ADD COLUMN refund_of text,
    ADD COLUMN refund_reason text CHECK (char_length(refund_reason) <= 500),
    ADD CONSTRAINT payments_refund_check CHECK (refund_of IS NOT NULL OR refund_reason IS NULL),
    ADD CONSTRAINT payments_refund_of_fkey FOREIGN KEY (merchant_id, environment, refund_of)
        REFERENCES payments (merchant_id, environment, id);
CREATE INDEX payments_refunds ON payments (merchant_id, environment, refund_of) WHERE refund_of IS NOT NULL;

-- The settlements report reads a day's settled payments.
CREATE INDEX payments_settlement_date ON payments (merchant_id, environment, settlement_date)
    WHERE settlement_date IS NOT NULL;

-- +goose Down
DROP INDEX payments_settlement_date;
DROP INDEX payments_refunds;
ALTER TABLE payments DROP CONSTRAINT payments_refund_of_fkey, DROP CONSTRAINT payments_refund_check,
    DROP COLUMN refund_reason, DROP COLUMN refund_of;
DROP INDEX payments_metadata;
ALTER TABLE subscriptions DROP COLUMN metadata;
ALTER TABLE payments DROP COLUMN metadata;
ALTER TABLE funding_sources DROP COLUMN metadata;
ALTER TABLE customers DROP COLUMN metadata;
