-- +goose Up
-- Reinitiations and reversals are payments of their own that point at the
-- payment they present again or reverse. A re-presentment (one-off or of a
-- subscription) names its original, the first presentment, and its
-- presentment number (2 or 3): an original has at most one of each, so two
-- concurrent retries cannot both be stored. A reversal names the payment it
-- reverses and why; a payment is reversed at most once. The original's
-- reversal is read from the reversal's row, never stored twice.
-- Additive only: a binary that predates it writes NULL into all four.
ALTER TABLE payments
    ADD COLUMN retry_of text,
    ADD COLUMN retry_attempt smallint CHECK (retry_attempt BETWEEN 2 AND 3),
    ADD COLUMN reversal_of text,
    ADD COLUMN reversal_reason text CHECK (reversal_reason IN ('duplicate', 'wrong_amount', 'wrong_account', 'wrong_date')),
    ADD CONSTRAINT payments_retry_check CHECK ((retry_of IS NULL) = (retry_attempt IS NULL)),
    ADD CONSTRAINT payments_reversal_check CHECK ((reversal_of IS NULL) = (reversal_reason IS NULL)),
    ADD CONSTRAINT payments_retry_of_fkey FOREIGN KEY (merchant_id, environment, retry_of)
        REFERENCES payments (merchant_id, environment, id),
    ADD CONSTRAINT payments_reversal_of_fkey FOREIGN KEY (merchant_id, environment, reversal_of)
        REFERENCES payments (merchant_id, environment, id);
CREATE UNIQUE INDEX payments_one_per_retry ON payments (merchant_id, environment, retry_of, retry_attempt)
    WHERE retry_of IS NOT NULL;
CREATE UNIQUE INDEX payments_one_reversal ON payments (merchant_id, environment, reversal_of)
    WHERE reversal_of IS NOT NULL;

-- +goose Down
DROP INDEX payments_one_reversal;
DROP INDEX payments_one_per_retry;
ALTER TABLE payments
    DROP CONSTRAINT payments_reversal_of_fkey, DROP CONSTRAINT payments_retry_of_fkey,
    DROP CONSTRAINT payments_reversal_check, DROP CONSTRAINT payments_retry_check,
    DROP COLUMN reversal_reason, DROP COLUMN reversal_of, DROP COLUMN retry_attempt, DROP COLUMN retry_of;
