-- +goose Up
-- A verification whose deposits had not left when its source was removed
-- or blocked is 'canceled': nothing was sent, and nothing will be.
ALTER TABLE micro_deposits DROP CONSTRAINT micro_deposits_status_check;
ALTER TABLE micro_deposits ADD CONSTRAINT micro_deposits_status_check
    CHECK (status IN ('pending', 'succeeded', 'failed', 'expired', 'canceled'));

-- +goose Down
UPDATE micro_deposits SET status = 'failed' WHERE status = 'canceled';
ALTER TABLE micro_deposits DROP CONSTRAINT micro_deposits_status_check;
ALTER TABLE micro_deposits ADD CONSTRAINT micro_deposits_status_check
    CHECK (status IN ('pending', 'succeeded', 'failed', 'expired'));
