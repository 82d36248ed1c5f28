-- +goose Up
-- Trace numbers continue across file dates: one sequence per ODFI, so two
-- entries within the return horizon never share a number (a per-date
-- counter gave Monday's and Tuesday's first entries the same one). The
-- sequence starts past the highest number any date's counter handed out
-- within the horizon; a previous release still running during a rolling
-- upgrade keeps its per-date counters, and the unique (trace_number,
-- file_date) index refuses the rare number both would take on one date.
CREATE TABLE ach_trace_sequences (
    odfi     text PRIMARY KEY CHECK (odfi ~ '^[0-9]{8}$'),
    last_seq integer NOT NULL CHECK (last_seq BETWEEN 1 AND 9999999)
);
INSERT INTO ach_trace_sequences (odfi, last_seq)
SELECT odfi, max(last_seq) FROM ach_trace_counters
WHERE file_date > current_date - 120
GROUP BY odfi;

-- The HMAC fingerprint of the account number an entry was sent to (the
-- source's fingerprint when it was assigned): a return or notification of
-- change must name the account the entry went to. NULL on entries
-- assigned before it was kept; those compare with the source's account.
ALTER TABLE ach_entries ADD COLUMN account_fp bytea;

-- Answers from the bank (returns, notifications of change) that matched no
-- entry, or more than one: applied to nothing, kept for an operator to
-- match to a payment or dismiss. The entry and addenda records are kept
-- sealed (they carry the account number); what an operator reads to
-- decide is kept beside them in the clear, the account as its last four.
CREATE TABLE ach_unmatched_answers (
    id              text PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('return', 'change')),
    reason          text NOT NULL CHECK (reason IN ('unmatched', 'ambiguous')),
    candidates      integer NOT NULL DEFAULT 0,
    original_trace  text NOT NULL,
    answer_trace    text NOT NULL,
    code            text NOT NULL,
    amount_cents    bigint NOT NULL,
    account_last4   text NOT NULL,
    company_id      text NOT NULL,
    settlement_day  text NOT NULL DEFAULT '',
    arrived_on      date NOT NULL,
    file_sha256     text NOT NULL DEFAULT '',
    file_name       text NOT NULL DEFAULT '',
    key_id          text NOT NULL,
    sealed_records  bytea NOT NULL,
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'matched', 'dismissed')),
    payment_id      text,
    note            text,
    resolved_by     text,
    resolved_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- The same answer read again (a file imported twice) is kept once.
    UNIQUE (kind, original_trace, answer_trace, code, arrived_on)
);
CREATE INDEX ach_unmatched_answers_open ON ach_unmatched_answers (created_at) WHERE status = 'open';

-- +goose Down
DROP TABLE ach_unmatched_answers;
ALTER TABLE ach_entries DROP COLUMN account_fp;
DROP TABLE ach_trace_sequences;
