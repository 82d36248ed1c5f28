-- +goose Up
-- Funding sources. The account number is only ever stored sealed (AES-256-GCM,
-- key id beside it) with its HMAC fingerprint; last_four is the only clear part.
CREATE TABLE funding_sources (
    merchant_id         text NOT NULL,
    environment         text NOT NULL,
    id                  text NOT NULL,
    customer_id         text NOT NULL,
    status              text NOT NULL CHECK (status IN ('Unverified', 'Verified')),
    routing_number      text NOT NULL CHECK (routing_number ~ '^[0-9]{9}$'),
    bank_name           text,
    last_four           text NOT NULL CHECK (last_four ~ '^[0-9]{4}$'),
    account_type        text NOT NULL CHECK (account_type IN ('checking', 'savings')),
    nickname            text,
    account_key_id      text NOT NULL,
    account_ciphertext  bytea NOT NULL,
    fingerprint         bytea NOT NULL,
    created_at          timestamptz NOT NULL,
    verified_at         timestamptz,
    removed_at          timestamptz,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, customer_id) REFERENCES customers (merchant_id, environment, id)
);
CREATE INDEX funding_sources_by_customer
    ON funding_sources (merchant_id, environment, customer_id, created_at DESC, id DESC);

-- The account-number registry: one row per account number in use in an
-- environment, across all merchants and customers. Its primary key is what
-- enforces uniqueness; it is written in the same transaction as the source
-- and deleted when the source is removed. Kept apart from funding_sources so
-- that table can later be sharded by merchant.
CREATE TABLE account_numbers (
    environment        text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    fingerprint        bytea NOT NULL,
    merchant_id        text NOT NULL,
    funding_source_id  text NOT NULL,
    customer_id        text NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (environment, fingerprint)
);

-- Micro-deposit verifications: at most three per source; amounts sealed.
CREATE TABLE micro_deposits (
    merchant_id            text NOT NULL,
    environment            text NOT NULL,
    funding_source_id      text NOT NULL,
    seq                    integer NOT NULL CHECK (seq BETWEEN 1 AND 3),
    amounts_key_id         text NOT NULL,
    amounts_ciphertext     bytea NOT NULL,
    status                 text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'expired')),
    initiated_at           timestamptz NOT NULL,
    expected_arrival_date  date NOT NULL,
    expires_at             timestamptz NOT NULL,
    attempts_remaining     integer NOT NULL CHECK (attempts_remaining BETWEEN 0 AND 3),
    finished_at            timestamptz,
    return_code            text,
    PRIMARY KEY (merchant_id, environment, funding_source_id, seq),
    FOREIGN KEY (merchant_id, environment, funding_source_id) REFERENCES funding_sources (merchant_id, environment, id)
);
CREATE INDEX micro_deposits_open ON micro_deposits (expires_at) WHERE status = 'pending';
-- At most one open verification per source.
CREATE UNIQUE INDEX micro_deposits_one_open
    ON micro_deposits (merchant_id, environment, funding_source_id) WHERE status = 'pending';

-- +goose Down
DROP TABLE micro_deposits;
DROP TABLE account_numbers;
DROP TABLE funding_sources;
