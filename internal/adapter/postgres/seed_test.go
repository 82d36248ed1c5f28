package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// poolConn opens the store on a fresh database and returns one of its
// pool's connections, for tests that run raw SQL (EXPLAIN, session
// settings) on one session; both close when the test ends.
func poolConn(t *testing.T) *sqlx.Conn {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Pool().Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// execAll runs SQL statements in order and stops the test at the first
// that fails.
func execAll(t *testing.T, db sqlx.ExecerContext, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// merchantRows are the statements that create sandbox merchants with
// these ids, for tests that write rows in plain SQL.
func merchantRows(ids ...string) []string {
	var m, env []string
	for _, id := range ids {
		m = append(m, "('"+id+"', '"+id+"', '"+id+"@example.com', 'x')")
		env = append(env, "('"+id+"', 'sandbox', 'pk_"+id+"')")
	}
	return []string{
		`INSERT INTO merchants (id, name, email, password_hash) VALUES ` + strings.Join(m, ", "),
		`INSERT INTO merchant_environments (merchant_id, environment, public_key) VALUES ` + strings.Join(env, ", "),
	}
}

// explainJSON is the EXPLAIN (FORMAT JSON) plan of query with args.
func explainJSON(t *testing.T, conn sqlx.QueryerContext, query string, args ...any) []byte {
	t.Helper()
	var plan []byte
	if err := sqlx.GetContext(context.Background(), conn, &plan, `EXPLAIN (FORMAT JSON) `+query, args...); err != nil {
		t.Fatal(err)
	}
	return plan
}
