-- +goose Up
-- When a single mandate authorized its debit. A debit marks its mandate in
-- the statement that writes the debit: the update locks the row and, under
-- READ COMMITTED, re-reads it after a concurrent use or revocation commits,
-- so a single mandate authorizes one debit however requests race.
ALTER TABLE mandates ADD COLUMN used_at timestamptz;
UPDATE mandates m SET used_at = u.at
FROM (SELECT merchant_id, environment, mandate_id, min(created_at) AS at FROM payments
      WHERE mandate_id IS NOT NULL GROUP BY 1, 2, 3) u
WHERE m.type = 'single' AND (m.merchant_id, m.environment, m.id) = (u.merchant_id, u.environment, u.mandate_id);

-- +goose Down
ALTER TABLE mandates DROP COLUMN used_at;
