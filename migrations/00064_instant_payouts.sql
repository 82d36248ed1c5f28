-- +goose Up
-- Instant payouts: a credit sent over an instant rail (RTP or FedNow) as a
-- pacs.008 rather than in a NACHA file.
--
-- A payment's method is what the merchant asked for (NULL: a payment from
-- before methods, standard or same-day by its same_day column); rail is the
-- rail it went on (NULL: ach); fallback_reason why "auto" did not go
-- instant; rail_status the instant rail's state of the credit (NULL for
-- ACH). The three added columns are nullable without a default, so the
-- ALTER rewrites nothing and an older binary keeps writing ACH payments.
ALTER TABLE payments
    ADD COLUMN method text CHECK (method IN ('standard', 'same_day', 'instant', 'auto')),
    ADD COLUMN rail text CHECK (rail IN ('rtp', 'fednow', 'ach')),
    ADD COLUMN fallback_reason text
        CHECK (fallback_reason IN ('instant_unavailable', 'rail_unavailable', 'over_rail_limit', 'originator_instant_off')),
    ADD COLUMN rail_status text CHECK (rail_status IN ('queued', 'sending', 'unknown', 'accepted', 'rejected'));

-- One row per instant credit: the intent, written and committed with its
-- payment before the pacs.008 leaves. message_id is the message's id on
-- the rail, unique so that the credit is never sent under two; a resend
-- keeps it (the rail answers a resend from its record). A process sends
-- only under a lease (lease_token until lease_until); a credit whose
-- lease ran out without an answer is the status worker's. state:
--   queued    not sent yet (held for review, or waiting for its sender)
--   sending   a process holds the lease and is sending it
--   unknown   sent, no readable answer yet: the worker asks again
--   accepted  the rail accepted it (ACSC/ACCP): the payment is processed
--   rejected  the rail refused it (reason): the payment is failed
CREATE TABLE instant_credits (
    merchant_id     text NOT NULL,
    environment     text NOT NULL,
    payment_id      text NOT NULL,
    message_id      text NOT NULL UNIQUE,
    rail            text NOT NULL CHECK (rail IN ('rtp', 'fednow')),
    amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
    banking_day     date NOT NULL,
    state           text NOT NULL CHECK (state IN ('queued', 'sending', 'unknown', 'accepted', 'rejected')),
    reason          text,
    attempts        integer NOT NULL DEFAULT 0,
    lease_token     text,
    lease_until     timestamptz,
    next_attempt_at timestamptz NOT NULL,
    sent_at         timestamptz,
    answered_at     timestamptz,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, payment_id),
    FOREIGN KEY (merchant_id, environment, payment_id) REFERENCES payments (merchant_id, environment, id)
);
-- The status worker's queue: credits not settled yet, by when they are due.
CREATE INDEX instant_credits_due ON instant_credits (next_attempt_at) WHERE state IN ('queued', 'sending', 'unknown');
-- An originator's instant credits of a banking day (daily_instant_credit).
CREATE INDEX instant_credits_day ON instant_credits (merchant_id, environment, banking_day);

-- An originator's instant switch and limits. instant NULL is the
-- environment's default: on in sandbox, off in production until an
-- operator turns it on (originator set --instant on).
ALTER TABLE originators
    ADD COLUMN instant boolean,
    ADD COLUMN per_entry_instant_credit_cents bigint NOT NULL DEFAULT 1000000 CHECK (per_entry_instant_credit_cents >= 0),
    ADD COLUMN daily_instant_credit_cents bigint NOT NULL DEFAULT 5000000 CHECK (daily_instant_credit_cents >= 0);

-- +goose Down
ALTER TABLE originators DROP COLUMN daily_instant_credit_cents, DROP COLUMN per_entry_instant_credit_cents, DROP COLUMN instant;
DROP TABLE instant_credits;
ALTER TABLE payments DROP COLUMN rail_status, DROP COLUMN fallback_reason, DROP COLUMN rail, DROP COLUMN method;
