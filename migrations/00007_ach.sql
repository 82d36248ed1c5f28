-- +goose Up
-- NACHA files written to the outbox folder. A file is 'building' from the
-- moment its entries are assigned until it is safely in the folder; a
-- process that finds a 'building' file (after a crash) writes it again from
-- its entries, which gives the same bytes under the same name.
CREATE TABLE ach_files (
    id          text PRIMARY KEY,
    serial      bigserial NOT NULL UNIQUE,
    name        text NOT NULL UNIQUE,
    status      text NOT NULL CHECK (status IN ('building', 'written')),
    created_at  timestamptz NOT NULL,
    written_at  timestamptz
);
CREATE INDEX ach_files_building ON ach_files (created_at) WHERE status = 'building';

-- One row per ACH entry, keyed by its trace number. Each micro-deposit
-- credit and each payment is in exactly one file: the unique indexes below.
CREATE TABLE ach_entries (
    trace_number       text PRIMARY KEY CHECK (trace_number ~ '^[0-9]{15}$'),
    file_id            text NOT NULL REFERENCES ach_files (id),
    merchant_id        text NOT NULL,
    environment        text NOT NULL CHECK (environment = 'production'),
    kind               text NOT NULL CHECK (kind IN ('micro_deposit', 'payment')),
    funding_source_id  text NOT NULL,
    customer_id        text NOT NULL,
    deposit_seq        integer,
    deposit_index      integer CHECK (deposit_index IN (1, 2)),
    payment_id         text,
    debit              boolean NOT NULL,
    amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
    return_code        text,
    returned_at        timestamptz,
    CHECK ((kind = 'payment') = (payment_id IS NOT NULL)),
    CHECK ((kind = 'micro_deposit') = (deposit_seq IS NOT NULL AND deposit_index IS NOT NULL))
);
CREATE INDEX ach_entries_file ON ach_entries (file_id, trace_number);
CREATE UNIQUE INDEX ach_entries_one_per_payment ON ach_entries (merchant_id, environment, payment_id)
    WHERE kind = 'payment';
CREATE UNIQUE INDEX ach_entries_one_per_deposit ON ach_entries (merchant_id, environment, funding_source_id, deposit_seq, deposit_index)
    WHERE kind = 'micro_deposit';

-- Trace number sequences (the last 7 digits).
CREATE SEQUENCE ach_trace_seq MINVALUE 1 MAXVALUE 9999999 CYCLE;

-- +goose Down
DROP SEQUENCE ach_trace_seq;
DROP TABLE ach_entries;
DROP TABLE ach_files;
