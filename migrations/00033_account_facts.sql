-- +goose Up
-- What the service has seen happen to a bank account, across merchants,
-- keyed like account_numbers by (environment, account fingerprint): the
-- fingerprint here is a keyed HMAC of routing and account number together
-- (one account at one bank), kept on each source as account_fp. A fact is
-- written in the transaction of what it records: a customer linked the
-- account, it was verified, an ACH return or an instant rail refused it,
-- a notification of change corrected it. The account check reads only
-- which kinds and codes occurred and when (never who or how much), so no
-- answer reveals another merchant. Sources stored before this migration
-- have no account_fp and read as "unknown".
ALTER TABLE funding_sources ADD COLUMN account_fp bytea;

CREATE TABLE account_facts (
    environment        text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    account_fp         bytea NOT NULL,
    kind               text NOT NULL CHECK (kind IN ('linked', 'verified', 'returned', 'rejected', 'corrected')),
    code               text,
    merchant_id        text NOT NULL,
    customer_id        text NOT NULL,
    funding_source_id  text NOT NULL,
    at                 timestamptz NOT NULL,
    CHECK ((kind IN ('linked', 'verified')) = (code IS NULL))
);
CREATE INDEX account_facts_of_account ON account_facts (environment, account_fp, kind, at);

-- +goose Down
DROP TABLE account_facts;
ALTER TABLE funding_sources DROP COLUMN account_fp;
