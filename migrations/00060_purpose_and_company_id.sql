-- +goose Up
-- company_id_assigned: an operator set the company id the bank knows
-- (originator set --company-id). The database creates originators with a
-- placeholder id, "1" and 9 digits of a sequence, which has the form of a
-- real one (1 and an EIN), so the placeholder cannot be told by its form:
-- an existing originator's id counts as assigned when the security log
-- holds an operator's change of it (originator.changed naming company_id).
-- A previous binary never sets the mark; an id it sets during a rolling
-- upgrade is set again once the new binary runs.
ALTER TABLE originators ADD COLUMN company_id_assigned boolean NOT NULL DEFAULT false;
UPDATE originators o SET company_id_assigned = true
WHERE EXISTS (SELECT 1 FROM audit_events a
              WHERE a.merchant_id = o.merchant_id AND a.environment = o.environment
                AND a.action = 'originator.changed' AND a.details ? 'company_id');

-- +goose Down
ALTER TABLE originators DROP COLUMN company_id_assigned;
