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

-- A payment's and a subscription's purpose (goods, services, bill,
-- donation, payroll, other), which decides the company entry description
-- NACHA fixes for some entries (PURCHASE, PAYROLL). Rows written before
-- purposes existed, and by a previous binary during a rolling upgrade,
-- are goods: that binary describes an individual's WEB debit PURCHASE.
ALTER TABLE payments ADD COLUMN purpose text NOT NULL DEFAULT 'goods'
    CHECK (purpose IN ('goods', 'services', 'bill', 'donation', 'payroll', 'other'));
ALTER TABLE subscriptions ADD COLUMN purpose text NOT NULL DEFAULT 'goods'
    CHECK (purpose IN ('goods', 'services', 'bill', 'donation', 'payroll', 'other'));

-- An originator's default purpose: goods for the originators that exist
-- (their payments were all described as payments for goods), other for
-- new ones. Adding the column with 'goods' fills the existing rows; the
-- default then changes for the rows inserted later.
ALTER TABLE originators ADD COLUMN default_purpose text NOT NULL DEFAULT 'goods'
    CHECK (default_purpose IN ('goods', 'services', 'bill', 'donation', 'payroll', 'other'));
ALTER TABLE originators ALTER COLUMN default_purpose SET DEFAULT 'other';

-- +goose Down
ALTER TABLE originators DROP COLUMN default_purpose, DROP COLUMN company_id_assigned;
ALTER TABLE subscriptions DROP COLUMN purpose;
ALTER TABLE payments DROP COLUMN purpose;
