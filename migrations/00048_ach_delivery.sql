-- +goose Up
-- A file's life: 'built' when its entries are assigned, 'delivered' once
-- the transport has it (outbox folder or the bank's SFTP server),
-- 'failed' while a delivery failed (retried at the next run), 'settled'
-- once the bank's statement shows its settlement. 'building' and
-- 'written' stay allowed: the previous release writes them during an
-- upgrade ('written' reads as delivered).
ALTER TABLE ach_files DROP CONSTRAINT ach_files_status_check;
ALTER TABLE ach_files ADD CONSTRAINT ach_files_status_check
    CHECK (status IN ('building', 'written', 'built', 'delivered', 'failed', 'settled'));
ALTER TABLE ach_files
    ADD COLUMN transport     text CHECK (transport IN ('folder', 'sftp')),
    ADD COLUMN delivered_at  timestamptz,
    ADD COLUMN settled_at    timestamptz,
    ADD COLUMN attempts      integer NOT NULL DEFAULT 0,
    ADD COLUMN last_error    text,
    ADD COLUMN entry_count   integer CHECK (entry_count >= 0),
    ADD COLUMN debit_cents   bigint CHECK (debit_cents >= 0),
    ADD COLUMN credit_cents  bigint CHECK (credit_cents >= 0),
    ADD COLUMN sha256        text CHECK (sha256 ~ '^[0-9a-f]{64}$');
CREATE INDEX ach_files_undelivered ON ach_files (created_at) WHERE status IN ('building', 'built', 'failed');

-- Files the bank left in inbound/ (or an operator handed over), by their
-- SHA-256: a file applies once however often it is listed and whatever
-- its name. 'rejected' files could not be read and applied nothing.
CREATE TABLE ach_inbound_files (
    sha256       text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    name         text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('returns', 'statement', 'unknown')),
    status       text NOT NULL CHECK (status IN ('applied', 'rejected')),
    error        text,
    result       jsonb,
    received_at  timestamptz NOT NULL
);
CREATE INDEX ach_inbound_files_received ON ach_inbound_files (received_at);

-- What the service expects on its account's statement: per delivered
-- file, or per return file, the total of one settlement date in one
-- direction as the bank books it on the originator's account ('credit':
-- money in, the file's debits or returned credits; 'debit': money out).
CREATE TABLE ach_settlements (
    id              bigserial PRIMARY KEY,
    file_id         text REFERENCES ach_files (id),
    inbound_sha256  text REFERENCES ach_inbound_files (sha256),
    settle_date     date NOT NULL,
    direction       text NOT NULL CHECK (direction IN ('credit', 'debit')),
    amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
    entries         integer NOT NULL CHECK (entries > 0),
    CHECK ((file_id IS NULL) <> (inbound_sha256 IS NULL))
);
CREATE UNIQUE INDEX ach_settlements_file ON ach_settlements (file_id, settle_date, direction) WHERE file_id IS NOT NULL;
CREATE UNIQUE INDEX ach_settlements_inbound ON ach_settlements (inbound_sha256, settle_date, direction) WHERE inbound_sha256 IS NOT NULL;
CREATE INDEX ach_settlements_date ON ach_settlements (settle_date, direction, amount_cents);

-- The bank's statement lines (camt.053 entries), each matched to at most
-- one expected settlement and each settlement to at most one line.
CREATE TABLE ach_statement_lines (
    id                bigserial PRIMARY KEY,
    statement_sha256  text NOT NULL REFERENCES ach_inbound_files (sha256),
    statement_id      text NOT NULL,
    entry_ref         text NOT NULL,
    booking_date      date NOT NULL,
    direction         text NOT NULL CHECK (direction IN ('credit', 'debit')),
    amount_cents      bigint NOT NULL CHECK (amount_cents >= 0),
    info              text NOT NULL,
    settlement_id     bigint UNIQUE REFERENCES ach_settlements (id),
    matched_at        timestamptz
);
CREATE INDEX ach_statement_lines_date ON ach_statement_lines (booking_date);
CREATE INDEX ach_statement_lines_unmatched ON ach_statement_lines (booking_date) WHERE settlement_id IS NULL;

-- +goose Down
DROP TABLE ach_statement_lines;
DROP TABLE ach_settlements;
DROP TABLE ach_inbound_files;
DROP INDEX ach_files_undelivered;
ALTER TABLE ach_files DROP COLUMN sha256, DROP COLUMN credit_cents, DROP COLUMN debit_cents,
    DROP COLUMN entry_count, DROP COLUMN last_error, DROP COLUMN attempts, DROP COLUMN settled_at,
    DROP COLUMN delivered_at, DROP COLUMN transport;
UPDATE ach_files SET status = 'written' WHERE status IN ('delivered', 'settled');
UPDATE ach_files SET status = 'building' WHERE status IN ('built', 'failed');
ALTER TABLE ach_files DROP CONSTRAINT ach_files_status_check;
ALTER TABLE ach_files ADD CONSTRAINT ach_files_status_check CHECK (status IN ('building', 'written'));
