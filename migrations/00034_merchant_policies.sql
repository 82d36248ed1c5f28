-- +goose Up
-- A merchant's policies per environment: what an account check that
-- fails does to a creation (flag: create and report; block_fail: refuse),
-- and what an ownership mismatch on the processor path does (flag, or
-- require_match: refuse). On merchant_environments, so the trigger that
-- tells every process's key cache about changes covers them.
ALTER TABLE merchant_environments
    ADD COLUMN account_check_policy text NOT NULL DEFAULT 'flag' CHECK (account_check_policy IN ('flag', 'block_fail')),
    ADD COLUMN ownership_policy text NOT NULL DEFAULT 'flag' CHECK (ownership_policy IN ('flag', 'require_match'));

-- +goose Down
ALTER TABLE merchant_environments DROP COLUMN account_check_policy, DROP COLUMN ownership_policy;
