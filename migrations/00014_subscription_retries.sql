-- +goose Up
-- A subscription debit returned R01 or R09 is re-presented, at most twice,
-- on a later business day: each payment knows its attempt (1 to 3), a due
-- date has at most one payment per attempt, and the subscription holds the
-- one re-presentment it has scheduled.
ALTER TABLE payments ADD COLUMN attempt smallint;
UPDATE payments SET attempt = 1 WHERE subscription_id IS NOT NULL;
ALTER TABLE payments ADD CONSTRAINT payments_attempt_check
    CHECK ((subscription_id IS NULL) = (attempt IS NULL) AND (attempt IS NULL OR attempt BETWEEN 1 AND 3));
DROP INDEX subscriptions_one_per_date;
CREATE UNIQUE INDEX subscriptions_one_per_attempt ON payments (merchant_id, environment, subscription_id, due_date, attempt)
    WHERE subscription_id IS NOT NULL;

ALTER TABLE subscriptions ADD COLUMN retry_date date, ADD COLUMN retry_due date, ADD COLUMN retry_attempt smallint;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_retry_check
    CHECK ((retry_date IS NULL) = (retry_due IS NULL) AND (retry_date IS NULL) = (retry_attempt IS NULL));
CREATE INDEX subscriptions_retry ON subscriptions (retry_date) WHERE status = 'active' AND retry_date IS NOT NULL;

-- +goose Down
DROP INDEX subscriptions_retry;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_retry_check;
ALTER TABLE subscriptions DROP COLUMN retry_date, DROP COLUMN retry_due, DROP COLUMN retry_attempt;
-- Re-presentments stay as payments of their own, without the subscription.
ALTER TABLE payments DROP CONSTRAINT payments_attempt_check;
UPDATE payments SET subscription_id = NULL, due_date = NULL WHERE attempt > 1;
DROP INDEX subscriptions_one_per_attempt;
CREATE UNIQUE INDEX subscriptions_one_per_date ON payments (merchant_id, environment, subscription_id, due_date)
    WHERE subscription_id IS NOT NULL;
ALTER TABLE payments DROP COLUMN attempt;
