package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	core "github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/testclock"
)

// TestClocks is the clocks' store on q's executor.
func (q queries) TestClocks() testclock.Store {
	return store[testclock.Store]{q, queries.TestClocks}
}

type clockRow struct {
	MerchantID  string     `db:"merchant_id"`
	Environment string     `db:"environment"`
	ID          string     `db:"id"`
	Name        *string    `db:"name"`
	FrozenTime  time.Time  `db:"frozen_time"`
	Status      string     `db:"status"`
	AdvanceTo   *time.Time `db:"advance_to"`
	CreatedAt   time.Time  `db:"created_at"`
}

func (r clockRow) domain() testclock.Clock {
	return testclock.Clock{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, Name: r.Name, FrozenTime: r.FrozenTime.UTC(), Status: testclock.Status(r.Status),
		AdvanceTo: utcPtr(r.AdvanceTo), CreatedAt: r.CreatedAt.UTC(),
	}
}

const clockColumns = `merchant_id, environment, id, name, frozen_time, status, advance_to, created_at`

// lockClocks takes the scope's environment row so that creations of its
// clocks count one after another (FOR NO KEY UPDATE: the foreign keys
// that reference the row do not wait on it).
const lockClocks = `SELECT 1 FROM merchant_environments WHERE merchant_id = $1 AND environment = $2 FOR NO KEY UPDATE`

// insertClock inserts the clock when the scope has fewer than $8; run
// after lockClocks in the same transaction, its snapshot counts every
// creation committed before it.
const insertClock = `
INSERT INTO test_clocks (merchant_id, environment, id, name, frozen_time, status, created_at)
SELECT $1, $2, $3, $4, $5, $6, $7
WHERE (SELECT count(*) FROM test_clocks WHERE merchant_id = $1 AND environment = $2) < $8`

// InsertClock stores c unless its scope has max clocks already.
func (q queries) InsertClock(ctx context.Context, c testclock.Clock, max int) (bool, error) {
	var stored bool
	err := q.withTx(ctx, func(tx queries) error {
		if _, err := tx.ex.ExecContext(ctx, lockClocks, c.Scope.MerchantID, c.Scope.Env); err != nil {
			return translate(err)
		}
		res, err := tx.ex.ExecContext(ctx, insertClock, c.Scope.MerchantID, c.Scope.Env, c.ID, c.Name,
			c.FrozenTime, c.Status, c.CreatedAt, max)
		if err != nil {
			return translate(err)
		}
		n, err := res.RowsAffected()
		stored = n == 1
		return translate(err)
	})
	return stored, err
}

const selectClock = `SELECT ` + clockColumns + ` FROM test_clocks WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// Clock returns one clock of the scope.
func (q queries) Clock(ctx context.Context, scope tenant.Scope, id string) (testclock.Clock, error) {
	return getOne[clockRow](ctx, q.ex, selectClock, scope.MerchantID, scope.Env, id)
}

// ClockForUpdate returns one clock of the scope with its row locked.
func (q queries) ClockForUpdate(ctx context.Context, scope tenant.Scope, id string) (testclock.Clock, error) {
	return getOne[clockRow](ctx, q.ex, selectClock+` FOR UPDATE`, scope.MerchantID, scope.Env, id)
}

const updateClock = `
UPDATE test_clocks SET frozen_time = $4, status = $5, advance_to = $6,
  advance_lease_owner = CASE WHEN $5 = 'ready' THEN NULL ELSE advance_lease_owner END,
  advance_lease_until = CASE WHEN $5 = 'ready' THEN NULL ELSE advance_lease_until END
WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// UpdateClock stores a clock's frozen time, status and advance target; a
// ready clock's engine lease ends with its advance.
func (q queries) UpdateClock(ctx context.Context, c testclock.Clock) error {
	res, err := q.ex.ExecContext(ctx, updateClock, c.Scope.MerchantID, c.Scope.Env, c.ID, c.FrozenTime, c.Status, c.AdvanceTo)
	return oneRow(res, err, errs.NotFound)
}

const listClocks = `SELECT ` + clockColumns + `
FROM test_clocks
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListClocks returns up to p.Limit+1 clocks, newest first.
func (q queries) ListClocks(ctx context.Context, scope tenant.Scope, p paging.Page) ([]testclock.Clock, error) {
	var rows []clockRow
	if err := q.list(ctx, &rows, listClocks, "test_clocks", scope, p); err != nil {
		return nil, err
	}
	return mapRows(rows, clockRow.domain), nil
}

// The clock's objects, as subqueries of deleteClockSteps ($1 merchant, $2
// environment, $3 clock). Every step keeps to the scope, so no other
// merchant's or clock's row can match.
const (
	clockCustomers = `(SELECT id FROM customers WHERE merchant_id = $1 AND environment = $2 AND test_clock_id = $3)`
	clockSources   = `(SELECT id FROM funding_sources WHERE merchant_id = $1 AND environment = $2 AND customer_id IN ` + clockCustomers + `)`
	clockPayments  = `(SELECT id FROM payments WHERE merchant_id = $1 AND environment = $2 AND customer_id IN ` + clockCustomers + `)`
	scoped         = `merchant_id = $1 AND environment = $2 AND `
	// ownClock holds when clock $3 is the scope's: the clock's ACH rows
	// carry no merchant.
	ownClock      = `EXISTS (SELECT 1 FROM test_clocks WHERE merchant_id = $1 AND environment = $2 AND id = $3)`
	ownClockFiles = `(SELECT id FROM ach_files WHERE test_clock_id = $3 AND ` + ownClock + `)`
)

// deleteClockSteps delete a clock's objects in the order their foreign
// keys allow, after locking the clock's customers (a source or payment
// being created for one waits, then finds it gone): what references a
// payment, the payments, subscriptions and mandates, what references a
// source, the sources, the clock's events (their deliveries and attempts
// cascade), the customers, the clock's ACH files and exchange, the clock.
// The caller holds the clock's row,
// so no customer joins it meanwhile.
var deleteClockSteps = []string{
	`SELECT 1 FROM customers WHERE ` + scoped + `test_clock_id = $3 FOR UPDATE`,
	`DELETE FROM instant_credits WHERE ` + scoped + `payment_id IN ` + clockPayments,
	`DELETE FROM fraud_alerts WHERE ` + scoped + `(payment_id IN ` + clockPayments + ` OR funding_source_id IN ` + clockSources + `)`,
	`DELETE FROM ach_entries WHERE ` + scoped + `(customer_id IN ` + clockCustomers + ` OR funding_source_id IN ` + clockSources +
		` OR payment_id IN ` + clockPayments + `)`,
	`DELETE FROM payments WHERE ` + scoped + `customer_id IN ` + clockCustomers,
	`DELETE FROM subscriptions WHERE ` + scoped + `customer_id IN ` + clockCustomers,
	`DELETE FROM mandates WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM funding_source_changes WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM micro_deposits WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM verification_intents WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM processor_tokens WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM account_numbers WHERE ` + scoped + `funding_source_id IN ` + clockSources,
	`DELETE FROM account_facts WHERE ` + scoped + `customer_id IN ` + clockCustomers,
	`DELETE FROM funding_sources WHERE ` + scoped + `customer_id IN ` + clockCustomers,
	`DELETE FROM events WHERE ` + scoped + `test_clock_id = $3`,
	`DELETE FROM customers WHERE ` + scoped + `test_clock_id = $3`,
	// The clock's ACH files, the dishonors in them and of their entries,
	// its windows and its exchange with its simulated bank.
	`DELETE FROM ach_dishonors WHERE original_file_id IN ` + ownClockFiles + ` OR file_id IN ` + ownClockFiles,
	`DELETE FROM ach_entries WHERE file_id IN ` + ownClockFiles,
	`DELETE FROM ach_settlements WHERE file_id IN ` + ownClockFiles,
	`DELETE FROM test_clock_windows WHERE test_clock_id = $3 AND ` + ownClock,
	`DELETE FROM ach_files WHERE id IN ` + ownClockFiles,
	`DELETE FROM test_clock_files WHERE test_clock_id = $3 AND ` + ownClock,
	`DELETE FROM test_clock_banks WHERE test_clock_id = $3 AND ` + ownClock,
	`DELETE FROM test_clocks WHERE ` + scoped + `id = $3`,
}

// DeleteClock deletes the clock and everything on it in one transaction;
// errs.NotFound when the scope has no such clock.
func (q queries) DeleteClock(ctx context.Context, scope tenant.Scope, id string) error {
	return q.withTx(ctx, func(tx queries) error {
		var n int64
		for _, step := range deleteClockSteps {
			res, err := tx.ex.ExecContext(ctx, step, scope.MerchantID, scope.Env, id)
			if err != nil {
				return translate(err)
			}
			if n, err = res.RowsAffected(); err != nil {
				return translate(err)
			}
		}
		if n == 0 { // the last step, the clock itself
			return errs.New(errs.NotFound, "no such test clock")
		}
		return nil
	})
}

// clockOfObjects resolves the test clock of a request's objects: the
// clock of the customers named ($3), and of the customers of the funding
// sources ($4), payments ($5), subscriptions ($6) and mandates ($7)
// named. Every lookup is by primary key within the scope; it answers at
// most two clocks (more than one is the caller's error).
const clockOfObjects = `
SELECT DISTINCT k.id, k.frozen_time, k.status
FROM customers u
JOIN test_clocks k ON k.merchant_id = u.merchant_id AND k.environment = u.environment AND k.id = u.test_clock_id
WHERE u.merchant_id = $1 AND u.environment = $2 AND u.test_clock_id IS NOT NULL AND u.id IN (
  SELECT unnest($3::text[])
  UNION ALL SELECT customer_id FROM funding_sources WHERE merchant_id = $1 AND environment = $2 AND id = ANY ($4::text[])
  UNION ALL SELECT customer_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = ANY ($5::text[])
  UNION ALL SELECT customer_id FROM subscriptions WHERE merchant_id = $1 AND environment = $2 AND id = ANY ($6::text[])
  UNION ALL SELECT customer_id FROM mandates WHERE merchant_id = $1 AND environment = $2 AND id = ANY ($7::text[]))
LIMIT 2`

// ClocksOf returns the test clocks the objects named live on (none: all
// are on the wall clock, or unknown), with each clock's status.
func (q queries) ClocksOf(ctx context.Context, scope tenant.Scope, o testclock.Objects) ([]testclock.Resolved, error) {
	var rows []struct {
		ID         string    `db:"id"`
		FrozenTime time.Time `db:"frozen_time"`
		Status     string    `db:"status"`
	}
	err := sqlx.SelectContext(ctx, q.ex, &rows, clockOfObjects, scope.MerchantID, scope.Env,
		pq.StringArray(o.Customers), pq.StringArray(o.Sources), pq.StringArray(o.Payments),
		pq.StringArray(o.Subscriptions), pq.StringArray(o.Mandates))
	if err != nil {
		return nil, translate(err)
	}
	out := make([]testclock.Resolved, len(rows))
	for i, r := range rows {
		out[i] = testclock.Resolved{Clock: core.Clock{ID: r.ID, Now: r.FrozenTime.UTC()}, Status: testclock.Status(r.Status)}
	}
	return out, nil
}
