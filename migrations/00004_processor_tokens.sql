-- +goose Up
-- Processor tokens are single use: every consumed token is kept as a keyed
-- fingerprint (HMAC under FINGERPRINT_KEY), never in clear, per environment.
-- The row is written in the transaction that stores the funding source.
CREATE TABLE processor_tokens (
    environment        text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    fingerprint        bytea NOT NULL,
    merchant_id        text NOT NULL,
    funding_source_id  text NOT NULL,
    consumed_at        timestamptz NOT NULL,
    PRIMARY KEY (environment, fingerprint)
);

-- +goose Down
DROP TABLE processor_tokens;
