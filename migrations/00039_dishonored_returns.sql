-- +goose Up
-- The return applied to an entry: its own trace number, so that the same
-- return imported again is recognized and a second return of the entry
-- (another trace number) is dishonored as a duplicate. NULL on entries
-- returned before it was kept.
ALTER TABLE ach_entries ADD COLUMN return_trace text CHECK (return_trace ~ '^[0-9]{15}$');

-- Dishonored returns the originator owes the network: an untimely return
-- (R68) or a second return of one entry (R67), not applied. The entry is
-- named by its trace number and file. A dishonor is put into exactly one
-- outbox file like an entry: file_id and its own trace number are set in
-- the transaction that assigns the file, and a file rebuilt after a crash
-- writes it again from this row. A contested dishonored return (R71–R77)
-- from the receiving bank is kept on it, with the time the original
-- return was then applied.
CREATE TABLE ach_dishonors (
    id                 text PRIMARY KEY,
    code               text NOT NULL CHECK (code IN ('R67', 'R68')),
    original_trace     text NOT NULL CHECK (original_trace ~ '^[0-9]{15}$'),
    original_file_id   text NOT NULL REFERENCES ach_files (id),
    return_trace       text NOT NULL CHECK (return_trace ~ '^[0-9]{15}$'),
    return_code        text NOT NULL CHECK (return_code ~ '^R[0-9]{2}$'),
    return_settlement  text NOT NULL DEFAULT '' CHECK (return_settlement ~ '^([0-9]{3})?$'),
    rdfi               text NOT NULL CHECK (rdfi ~ '^[0-9]{8}$'),
    created_at         timestamptz NOT NULL,
    file_id            text REFERENCES ach_files (id),
    trace_number       text CHECK (trace_number ~ '^[0-9]{15}$'),
    contested_code     text CHECK (contested_code ~ '^R7[1-7]$'),
    contested_at       timestamptz,
    CHECK ((file_id IS NULL) = (trace_number IS NULL)),
    CHECK ((contested_code IS NULL) = (contested_at IS NULL)),
    -- One dishonor per return: the same return file imported twice adds nothing.
    UNIQUE (original_file_id, original_trace, return_trace)
);
CREATE INDEX ach_dishonors_unsent ON ach_dishonors (created_at) WHERE file_id IS NULL;
CREATE INDEX ach_dishonors_file ON ach_dishonors (file_id) WHERE file_id IS NOT NULL;

-- +goose Down
DROP TABLE ach_dishonors;
ALTER TABLE ach_entries DROP COLUMN return_trace;
