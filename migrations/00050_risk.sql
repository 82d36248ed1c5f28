-- +goose Up
-- Held payments: a payment that a fraud rule, the originator's return
-- rates or sanctions screening stopped waits as 'held' (with why) until an
-- operator releases it (back to 'pending') or rejects it ('canceled').
-- Origination and sandbox settlement take only 'pending' payments.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('pending', 'processed', 'failed', 'canceled', 'held'));
ALTER TABLE payments ADD COLUMN hold_reason text;
CREATE INDEX payments_held ON payments (merchant_id, environment, created_at DESC, id DESC) WHERE status = 'held';

-- A customer's sanctions screening: NULL until screened (read as clear);
-- {status, sdn_entry, score, ...} otherwise.
ALTER TABLE customers ADD COLUMN screening jsonb;

-- Alerts of the fraud-monitoring rules: which rule (and version) held
-- which payment, at what threshold.
CREATE TABLE fraud_alerts (
    merchant_id        text NOT NULL,
    environment        text NOT NULL,
    id                 text NOT NULL,
    rule_id            text NOT NULL,
    rule_version       integer NOT NULL,
    threshold          text NOT NULL,
    payment_id         text NOT NULL,
    funding_source_id  text NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);
CREATE INDEX fraud_alerts_newest ON fraud_alerts (merchant_id, environment, created_at);

-- The platform's annual review of its fraud-monitoring processes.
CREATE TABLE risk_reviews (
    id           text PRIMARY KEY,
    year         integer NOT NULL CHECK (year BETWEEN 2000 AND 9999),
    reviewed_by  text NOT NULL,
    note         text,
    created_at   timestamptz NOT NULL
);
CREATE INDEX risk_reviews_newest ON risk_reviews (created_at DESC);

-- Each originator's (merchant environment's) return rates over 60 days as
-- last computed (when a return is applied), and what they hold: a payment's
-- creation reads this one row rather than counting 60 days of debits.
-- warned maps a rate's name to the last day (YYYY-MM-DD, US Eastern) its
-- warning fired.
CREATE TABLE return_rate_guardrails (
    merchant_id     text NOT NULL,
    environment     text NOT NULL,
    debits          integer NOT NULL,
    unauthorized    integer NOT NULL,
    administrative  integer NOT NULL,
    returns         integer NOT NULL,
    hold_reason     text,
    warned          jsonb NOT NULL DEFAULT '{}',
    computed_at     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment),
    FOREIGN KEY (merchant_id, environment) REFERENCES merchant_environments (merchant_id, environment)
);

-- +goose Down
DROP TABLE return_rate_guardrails;
DROP TABLE risk_reviews;
DROP TABLE fraud_alerts;
ALTER TABLE customers DROP COLUMN screening;
DROP INDEX payments_held;
ALTER TABLE payments DROP COLUMN hold_reason;
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('pending', 'processed', 'failed', 'canceled'));
