package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/internal/testclock"
)

type customerRow struct {
	MerchantID   string            `db:"merchant_id"`
	Environment  string            `db:"environment"`
	ID           string            `db:"id"`
	FirstName    string            `db:"first_name"`
	LastName     string            `db:"last_name"`
	Email        string            `db:"email"`
	BusinessName *string           `db:"business_name"`
	CreatedAt    time.Time         `db:"created_at"`
	Screening    []byte            `db:"screening"`
	Metadata     metadata.Metadata `db:"metadata"`
	TestClock    *string           `db:"test_clock_id"`
}

func (r customerRow) domain() customer.Customer {
	c := customer.Customer{
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		ID:    r.ID, FirstName: r.FirstName, LastName: r.LastName, Email: r.Email,
		BusinessName: r.BusinessName, CreatedAt: r.CreatedAt.UTC(), Metadata: r.Metadata, TestClock: deref(r.TestClock),
	}
	// A screening that does not read is shown clear rather than failing
	// the read; only this service writes the column.
	c.Screening, _ = screeningOf(r.Screening)
	return c
}

const insertCustomer = `
INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email, business_name, created_at, screening, metadata)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`

// insertClockCustomer is insertCustomer for a customer on a test clock: it
// counts the customer on the clock's row ($11, ready, fewer than $12
// customers) and inserts it only when that row changed. The UPDATE waits
// for a concurrent creation's lock on the row and then reads the count it
// committed, so racing creations cannot pass the limit. It answers whether
// it inserted and, when not, the clock's status (NULL: no such clock).
const insertClockCustomer = `
WITH k AS (
  UPDATE test_clocks SET customer_count = customer_count + 1
  WHERE merchant_id = $1 AND environment = $2 AND id = $11 AND status = 'ready' AND customer_count < $12
  RETURNING id
), ins AS (
  INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email, business_name, created_at, screening, metadata, test_clock_id)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, k.id FROM k
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM ins) AS inserted,
  (SELECT status FROM test_clocks WHERE merchant_id = $1 AND environment = $2 AND id = $11) AS status`

// InsertCustomer stores a new customer; one on a test clock only when the
// clock takes it (customer.ErrNoClock, ErrClockAdvancing, ErrClockFull).
func (q queries) InsertCustomer(ctx context.Context, c customer.Customer) error {
	args := []any{c.Scope.MerchantID, c.Scope.Env, c.ID,
		c.FirstName, c.LastName, c.Email, c.BusinessName, c.CreatedAt, screeningJSON(c.Screening), c.Metadata}
	if c.TestClock == "" {
		_, err := q.ex.ExecContext(ctx, insertCustomer, args...)
		return translate(err)
	}
	var r struct {
		Inserted bool    `db:"inserted"`
		Status   *string `db:"status"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, insertClockCustomer, append(args, c.TestClock, customer.MaxPerClock)...); err != nil {
		return translate(err)
	}
	switch {
	case r.Inserted:
		return nil
	case r.Status == nil:
		return customer.ErrNoClock
	case *r.Status != string(testclock.Ready):
		return customer.ErrClockAdvancing
	}
	return customer.ErrClockFull
}

const customerColumns = `merchant_id, environment, id, first_name, last_name, email, business_name, created_at, screening, metadata, test_clock_id`

const selectCustomer = `
SELECT ` + customerColumns + `
FROM customers WHERE ` + byID

// Customer returns one customer of the scope.
func (q queries) Customer(ctx context.Context, scope tenant.Scope, id string) (customer.Customer, error) {
	var r customerRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectCustomer, scope.MerchantID, scope.Env, id); err != nil {
		return customer.Customer{}, translate(err)
	}
	return r.domain(), nil
}

const listCustomers = `
SELECT ` + customerColumns + `
FROM customers
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
  AND ($6 = '' OR id = $6 OR email ILIKE $7 OR (first_name || ' ' || last_name) ILIKE $7 OR business_name ILIKE $7)
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListCustomers returns up to p.Limit+1 customers, newest first; with a
// search text, only those whose user_id is it or whose email or name
// contains it.
func (q queries) ListCustomers(ctx context.Context, scope tenant.Scope, search string, p paging.Page) ([]customer.Customer, error) {
	var rows []customerRow
	err := q.list(ctx, &rows, listCustomers, "customers", scope, p, search, contains(search))
	if err != nil {
		return nil, err
	}
	return mapRows(rows, customerRow.domain), nil
}

// CustomerForUpdate returns a customer with its row locked.
func (q queries) CustomerForUpdate(ctx context.Context, scope tenant.Scope, id string) (customer.Customer, error) {
	return getOne[customerRow](ctx, q.ex, selectCustomer+` FOR UPDATE`, scope.MerchantID, scope.Env, id)
}

const updateCustomer = `
UPDATE customers SET first_name = $4, last_name = $5, email = $6, business_name = $7, screening = $8, metadata = $9::jsonb
WHERE ` + byID

// UpdateCustomer stores a customer's changed fields.
func (q queries) UpdateCustomer(ctx context.Context, c customer.Customer) error {
	res, err := q.ex.ExecContext(ctx, updateCustomer, c.Scope.MerchantID, c.Scope.Env, c.ID,
		c.FirstName, c.LastName, c.Email, c.BusinessName, screeningJSON(c.Screening), c.Metadata)
	return oneRow(res, err, errs.NotFound)
}

// screeningJSON is a screening's column value.
func screeningJSON(sc sanctions.Screening) []byte {
	if sc.Status == "" {
		return nil
	}
	b, _ := json.Marshal(sc) // plain strings and numbers: never fails
	return b
}

// customersOnClocks ranks each clock's customers newest first (the index
// customers_by_test_clock finds them) and keeps the first $4 of each,
// with the clock's count on every row.
const customersOnClocks = `
SELECT ` + customerColumns + `, n FROM (
  SELECT ` + customerColumns + `,
    row_number() OVER (PARTITION BY test_clock_id ORDER BY created_at DESC, id DESC) AS rank,
    count(*) OVER (PARTITION BY test_clock_id) AS n
  FROM customers
  WHERE merchant_id = $1 AND environment = $2 AND test_clock_id = ANY($3)
) c WHERE rank <= $4
ORDER BY test_clock_id, created_at DESC, id DESC`

// CustomersOnClocks returns up to perClock customers of each clock named,
// newest first, and how many each clock carries (absent: none).
func (q queries) CustomersOnClocks(ctx context.Context, scope tenant.Scope, clocks []string, perClock int) ([]customer.Customer, map[string]int, error) {
	var rows []struct {
		customerRow
		N int `db:"n"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, customersOnClocks, scope.MerchantID, scope.Env, pq.Array(clocks), perClock); err != nil {
		return nil, nil, translate(err)
	}
	out, counts := make([]customer.Customer, len(rows)), map[string]int{}
	for i, r := range rows {
		out[i] = r.domain()
		counts[out[i].TestClock] = r.N
	}
	return out, counts, nil
}
