-- +goose Up
-- How each entry goes to the bank, decided when it is assigned to a file
-- so that a file rebuilt later gives the same bytes: its batch's SEC code
-- and company entry description, and a WEB entry's payment type. Entries
-- assigned before these columns existed have NULLs and are built as they
-- were (PPD; ACCTVERIFY or PAYMENT).
ALTER TABLE ach_entries
    ADD COLUMN sec_code          text CHECK (sec_code IN ('PPD', 'CCD', 'WEB')),
    ADD COLUMN entry_description text CHECK (length(entry_description) <= 10),
    ADD COLUMN payment_type      text CHECK (payment_type IN ('R', 'S'));

-- The trace numbers of a file's offsetting debits, one per micro-deposit
-- batch in the order the batches are written.
ALTER TABLE ach_files ADD COLUMN offset_traces text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE ach_files DROP COLUMN offset_traces;
ALTER TABLE ach_entries DROP COLUMN sec_code, DROP COLUMN entry_description, DROP COLUMN payment_type;
