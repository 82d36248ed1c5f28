-- +goose Up
-- A file's delivery is claimed with a lease instead of a row lock held
-- through the upload: the process that claims it uploads outside any
-- transaction, then records the result; a lease left by a crash expires
-- and another process delivers the same bytes. The bytes delivered are
-- kept sealed (they carry account numbers), so a retried delivery sends
-- them again unless its entries had to be re-dated, and an operator can
-- read what the bank was sent. redated_at is when entries whose effective
-- date could no longer be met were moved to the next date the network can
-- settle.
ALTER TABLE ach_files
    ADD COLUMN lease_owner  text,
    ADD COLUMN lease_until  timestamptz,
    ADD COLUMN bytes_key_id text,
    ADD COLUMN sealed_bytes bytea,
    ADD COLUMN redated_at   timestamptz;

-- +goose Down
ALTER TABLE ach_files DROP COLUMN lease_owner, DROP COLUMN lease_until, DROP COLUMN bytes_key_id,
    DROP COLUMN sealed_bytes, DROP COLUMN redated_at;
