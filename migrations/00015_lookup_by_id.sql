-- +goose NO TRANSACTION
-- +goose Up
-- Reads by id whose plan does not depend on statistics. Every id is random
-- and unique across merchants and environments, so one unique index on id
-- alone can serve a lookup by id, and a lookup keyed by id only (the tenancy
-- check is a filter no index can serve) has exactly one index to choose.
-- Without this, on a table never analyzed, the planner takes the
-- (merchant_id, environment, …) indexes for one-row matches and reads a
-- merchant's whole range instead of one row.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS funding_sources_id ON funding_sources (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS customers_id ON customers (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payments_id ON payments (id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS payments_id;
DROP INDEX CONCURRENTLY IF EXISTS customers_id;
DROP INDEX CONCURRENTLY IF EXISTS funding_sources_id;
