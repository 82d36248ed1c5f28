-- +goose Up
-- A dishonored return must leave within five banking days after the
-- return's settlement date. return_settled_on is that date (NULL on rows
-- stored before it was kept: read from return_settlement then);
-- late_for_dishonor_at is when a dishonor was found past the limit, so
-- that it is never sent and an operator sees the return it kept.
ALTER TABLE ach_dishonors ADD COLUMN return_settled_on date;
ALTER TABLE ach_dishonors ADD COLUMN late_for_dishonor_at timestamptz;

-- Alerts of one kind across every merchant (reversal_then_return in
-- /metrics) are counted by rule and time.
CREATE INDEX fraud_alerts_rule ON fraud_alerts (rule_id, created_at);

-- +goose Down
DROP INDEX fraud_alerts_rule;
ALTER TABLE ach_dishonors DROP COLUMN late_for_dishonor_at;
ALTER TABLE ach_dishonors DROP COLUMN return_settled_on;
