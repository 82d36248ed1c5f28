-- +goose Up
-- A sandbox test clock runs the production ACH path on its own time:
-- its files are built at its windows, delivered to a simulated bank kept
-- in the database, and answered from there. Its rows carry the clock
-- (NULL: the bank's files, on the wall clock).
ALTER TABLE ach_files ADD COLUMN test_clock_id text;
ALTER TABLE ach_files DROP CONSTRAINT ach_files_transport_check;
ALTER TABLE ach_files ADD CONSTRAINT ach_files_transport_check CHECK (transport IN ('folder', 'sftp', 'test_clock'));
CREATE INDEX ach_files_undelivered_clock ON ach_files (test_clock_id, created_at)
    WHERE status IN ('building', 'built', 'failed') AND test_clock_id IS NOT NULL;

-- A clock's entries are sandbox entries (a file of the bank's takes
-- production ones only: the statements that claim them say so).
ALTER TABLE ach_entries DROP CONSTRAINT ach_entries_environment_check;
ALTER TABLE ach_entries ADD CONSTRAINT ach_entries_environment_check CHECK (environment IN ('sandbox', 'production'));

-- A clock's windows, claimed once each like ach_windows' (kept apart so
-- the bank's windows keep their key).
CREATE TABLE test_clock_windows (
    test_clock_id text NOT NULL,
    window_date   date NOT NULL,
    window_time   text NOT NULL CHECK (window_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    claimed_at    timestamptz NOT NULL,
    file_id       text REFERENCES ach_files (id) ON DELETE SET NULL,
    PRIMARY KEY (test_clock_id, window_date, window_time)
);

-- The simulated bank's exchange with a clock's originator: the files the
-- originator delivered (outbound), the answers the bank left (inbound),
-- those the originator could not read (rejected), and the bank's memory.
CREATE TABLE test_clock_files (
    test_clock_id text NOT NULL,
    box           text NOT NULL CHECK (box IN ('outbound', 'inbound', 'rejected')),
    name          text NOT NULL,
    data          bytea NOT NULL,
    written_at    timestamptz NOT NULL,
    PRIMARY KEY (test_clock_id, box, name)
);
CREATE TABLE test_clock_banks (
    test_clock_id text PRIMARY KEY,
    state         bytea NOT NULL
);

-- +goose Down
DELETE FROM ach_entries WHERE environment = 'sandbox';
ALTER TABLE ach_entries DROP CONSTRAINT ach_entries_environment_check;
ALTER TABLE ach_entries ADD CONSTRAINT ach_entries_environment_check CHECK (environment = 'production');
DROP TABLE test_clock_banks;
DROP TABLE test_clock_files;
DROP TABLE test_clock_windows;
DROP INDEX ach_files_undelivered_clock;
UPDATE ach_files SET transport = NULL WHERE transport = 'test_clock';
ALTER TABLE ach_files DROP CONSTRAINT ach_files_transport_check;
ALTER TABLE ach_files ADD CONSTRAINT ach_files_transport_check CHECK (transport IN ('folder', 'sftp'));
ALTER TABLE ach_files DROP COLUMN test_clock_id;
