-- +goose Up
-- A pending payment can be canceled: in sandbox before it settles, in
-- production before it is written into an ACH file.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('pending', 'processed', 'failed', 'canceled'));

-- +goose Down
UPDATE payments SET status = 'failed', failure_code = 'R06' WHERE status = 'canceled';
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN ('pending', 'processed', 'failed'));
