-- +goose Up
-- Subscriptions: a debit of a Verified source on a schedule.
CREATE TABLE subscriptions (
    merchant_id        text NOT NULL,
    environment        text NOT NULL,
    id                 text NOT NULL,
    funding_source_id  text NOT NULL,
    customer_id        text NOT NULL,
    amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
    interval           text NOT NULL CHECK (interval IN ('weekly', 'monthly')),
    description        text,
    status             text NOT NULL CHECK (status IN ('active', 'canceled')),
    start_date         date NOT NULL,
    next_date          date,
    payment_count      integer NOT NULL DEFAULT 0 CHECK (payment_count >= 0),
    cancel_reason      text,
    created_at         timestamptz NOT NULL,
    canceled_at        timestamptz,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, funding_source_id) REFERENCES funding_sources (merchant_id, environment, id),
    CHECK ((status = 'active') = (next_date IS NOT NULL))
);
CREATE INDEX subscriptions_newest ON subscriptions (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX subscriptions_due ON subscriptions (next_date) WHERE status = 'active';

-- Payments: ACH debits and credits. A subscription's debit for one due date
-- exists at most once (subscriptions_one_per_date).
CREATE TABLE payments (
    merchant_id        text NOT NULL,
    environment        text NOT NULL,
    id                 text NOT NULL,
    funding_source_id  text NOT NULL,
    customer_id        text NOT NULL,
    direction          text NOT NULL CHECK (direction IN ('debit', 'credit')),
    amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
    description        text,
    status             text NOT NULL CHECK (status IN ('pending', 'processed', 'failed')),
    failure_code       text,
    subscription_id    text,
    due_date           date,
    settle_at          timestamptz,
    settled_at         timestamptz,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, funding_source_id) REFERENCES funding_sources (merchant_id, environment, id),
    FOREIGN KEY (merchant_id, environment, subscription_id) REFERENCES subscriptions (merchant_id, environment, id),
    CHECK ((status = 'failed') = (failure_code IS NOT NULL)),
    CHECK ((subscription_id IS NULL) = (due_date IS NULL))
);
CREATE INDEX payments_newest ON payments (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX payments_of_source ON payments (merchant_id, environment, funding_source_id, created_at DESC, id DESC);
CREATE INDEX payments_settling ON payments (settle_at) WHERE status = 'pending' AND settle_at IS NOT NULL;
CREATE UNIQUE INDEX subscriptions_one_per_date ON payments (merchant_id, environment, subscription_id, due_date)
    WHERE subscription_id IS NOT NULL;

-- +goose Down
DROP TABLE payments;
DROP TABLE subscriptions;
