-- +goose Up
-- A micro-deposit's amounts are enough to verify its source, so they are
-- kept only sealed (micro_deposits); its ACH entries no longer copy them in
-- clear. File building reads them through the funding service.
ALTER TABLE ach_entries ALTER COLUMN amount_cents DROP NOT NULL;
UPDATE ach_entries SET amount_cents = NULL WHERE kind = 'micro_deposit';
ALTER TABLE ach_entries ADD CONSTRAINT ach_entries_amount_only_for_payments
    CHECK ((kind = 'payment') = (amount_cents IS NOT NULL));

-- +goose Down
ALTER TABLE ach_entries DROP CONSTRAINT ach_entries_amount_only_for_payments;
-- The amounts cannot come back in clear; a file rebuilt after this would fail.
UPDATE ach_entries SET amount_cents = 1 WHERE amount_cents IS NULL;
ALTER TABLE ach_entries ALTER COLUMN amount_cents SET NOT NULL;
