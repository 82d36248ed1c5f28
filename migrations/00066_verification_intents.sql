-- +goose Up
-- An instant verification credit being sent: written and committed before
-- the credit leaves, so no transaction or row lock is held while the rail
-- is asked, and replaced by its micro_deposits row (or deleted, when the
-- rail took nothing) once the rail answered. One per source: a second
-- initiation while one is being sent is refused. A sender holds it until
-- lease_until; one whose lease ran out is resolved as sent with its rail
-- status unknown.
CREATE TABLE verification_intents (
    merchant_id        text NOT NULL,
    environment        text NOT NULL,
    funding_source_id  text NOT NULL,
    seq                integer NOT NULL CHECK (seq BETWEEN 1 AND 3),
    method             text NOT NULL CHECK (method IN ('instant', 'auto')),
    rail               text NOT NULL CHECK (rail IN ('rtp', 'fednow')),
    rail_message_id    text NOT NULL UNIQUE,
    code_key_id        text NOT NULL,
    code_ciphertext    bytea NOT NULL,
    initiated_at       timestamptz NOT NULL,
    lease_until        timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, funding_source_id),
    FOREIGN KEY (merchant_id, environment, funding_source_id) REFERENCES funding_sources (merchant_id, environment, id)
);
CREATE INDEX verification_intents_lease ON verification_intents (lease_until);
-- The source's row carries its intent's lease (NULL: none), written with
-- the intent: a reader that locks the source sees it in the row it locked,
-- with no second read.
ALTER TABLE funding_sources ADD COLUMN intent_lease_until timestamptz;

-- +goose Down
ALTER TABLE funding_sources DROP COLUMN intent_lease_until;
DROP TABLE verification_intents;
