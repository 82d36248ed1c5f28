-- +goose Up
-- Why a payment was canceled: the merchant asked ('requested'), or its
-- authorization no longer stood when it was to leave or when the source or
-- mandate changed ('funding_source_blocked', 'funding_source_removed',
-- 'mandate_revoked', 'originator_suspended'). NULL on payments that are
-- not canceled, and on those canceled before reasons were kept (by their
-- merchant: they are marked 'requested' below). IF NOT EXISTS: another
-- change of the same release may bring the column too.
ALTER TABLE payments ADD COLUMN IF NOT EXISTS cancel_reason text;
UPDATE payments SET cancel_reason = 'requested' WHERE status = 'canceled' AND cancel_reason IS NULL;
ALTER TABLE payments ADD CONSTRAINT payments_cancel_reason_only_canceled
    CHECK (cancel_reason IS NULL OR status = 'canceled');

-- Trace numbers restart for each file creation date (US Eastern): the
-- ODFI's 8 routing digits and a 7-digit sequence handed out by one counter
-- row per ODFI and date, under that row's lock. A date's counter never
-- passes 9,999,999: origination refuses rather than wrap.
CREATE TABLE ach_trace_counters (
    odfi       text NOT NULL CHECK (odfi ~ '^[0-9]{8}$'),
    file_date  date NOT NULL,
    last_seq   integer NOT NULL CHECK (last_seq BETWEEN 1 AND 9999999),
    PRIMARY KEY (odfi, file_date)
);

-- A trace number is unique per file date, no longer on its own: the same
-- 15 digits recur on another date. file_date is the creation date of the
-- entry's file; rows written before this migration get it from their file,
-- and rows the previous release writes during a rolling upgrade have
-- none (they take their numbers from ach_trace_seq, which stays). A lookup
-- by trace number takes the newest entry that has it.
ALTER TABLE ach_entries ADD COLUMN file_date date;
UPDATE ach_entries e SET file_date = (f.created_at AT TIME ZONE 'America/New_York')::date
FROM ach_files f WHERE f.id = e.file_id AND e.file_date IS NULL;
ALTER TABLE ach_entries DROP CONSTRAINT ach_entries_pkey;
CREATE UNIQUE INDEX ach_entries_trace_per_date ON ach_entries (trace_number, file_date);
ALTER TABLE ach_entries ALTER COLUMN trace_number SET NOT NULL;

-- +goose Down
ALTER TABLE ach_entries ALTER COLUMN trace_number DROP NOT NULL;
DROP INDEX ach_entries_trace_per_date;
-- Fails, rather than lose entries, once a trace number has recurred.
ALTER TABLE ach_entries ADD PRIMARY KEY (trace_number);
ALTER TABLE ach_entries DROP COLUMN file_date;
DROP TABLE ach_trace_counters;
ALTER TABLE payments DROP CONSTRAINT payments_cancel_reason_only_canceled;
ALTER TABLE payments DROP COLUMN cancel_reason;
