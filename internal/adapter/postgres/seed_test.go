package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
)

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
