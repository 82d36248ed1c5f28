-- +goose Up
-- ACH files are built at fixed windows of a banking day. Each window is
-- claimed by one row, inserted in the transaction that assigns the
-- window's entries, so however many processes run, a window builds once.
CREATE TABLE ach_windows (
    window_date date NOT NULL,
    window_time text NOT NULL CHECK (window_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    claimed_at  timestamptz NOT NULL,
    file_id     text REFERENCES ach_files (id), -- NULL when nothing waited
    PRIMARY KEY (window_date, window_time)
);

-- An entry's effective date is decided when it is assigned to a file (a
-- Same Day ACH entry's differs from the file's other entries), so that a
-- file rebuilt after a crash has the same bytes. NULL on entries assigned
-- before: their file's next banking day.
ALTER TABLE ach_entries ADD COLUMN effective_date date;

-- A payment asks for Same Day ACH; once its entry leaves it carries when
-- (sent_at), its effective and settlement dates, and for an individual's
-- debit the last day of its unauthorized-return window.
ALTER TABLE payments
    ADD COLUMN same_day boolean NOT NULL DEFAULT false,
    ADD COLUMN sent_at timestamptz,
    ADD COLUMN effective_date date,
    ADD COLUMN settlement_date date,
    ADD COLUMN unauthorized_return_until date;

-- The money still at risk of an unauthorized return (GET /v2/balances).
CREATE INDEX payments_at_risk ON payments (merchant_id, environment, unauthorized_return_until)
    WHERE status = 'processed' AND direction = 'debit' AND unauthorized_return_until IS NOT NULL;
CREATE INDEX payments_pending_sums ON payments (merchant_id, environment, direction) INCLUDE (amount_cents)
    WHERE status = 'pending';

-- +goose Down
DROP INDEX payments_pending_sums;
DROP INDEX payments_at_risk;
ALTER TABLE payments DROP COLUMN unauthorized_return_until, DROP COLUMN settlement_date,
    DROP COLUMN effective_date, DROP COLUMN sent_at, DROP COLUMN same_day;
ALTER TABLE ach_entries DROP COLUMN effective_date;
DROP TABLE ach_windows;
