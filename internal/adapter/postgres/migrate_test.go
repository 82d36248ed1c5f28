package postgres_test

import (
	"context"
	"testing"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestMigrateRebuildsAnInvalidIndex interrupts a migration's CREATE INDEX
// CONCURRENTLY (its statement times out while a writer holds the table),
// which leaves the index invalid; rerunning the statement skips it (IF NOT
// EXISTS), and Migrate rebuilds it.
func TestMigrateRebuildsAnInvalidIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t)
	x := db.Pool()
	const create = `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS funding_sources_id ON funding_sources (id)`
	valid := func() bool {
		var v bool
		if err := x.Get(&v, `SELECT indisvalid FROM pg_index WHERE indexrelid = 'funding_sources_id'::regclass`); err != nil {
			t.Fatal(err)
		}
		return v
	}
	x.MustExec(`DROP INDEX funding_sources_id`)

	writer, err := x.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	writer.MustExec(`LOCK TABLE funding_sources IN ROW EXCLUSIVE MODE`)
	conn, err := x.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn.ExecContext(ctx, `SET statement_timeout = '300ms'`) //nolint:errcheck // checked by the outcome below
	_, err = conn.ExecContext(ctx, create)
	if pqErr, ok := err.(*pq.Error); !ok || pqErr.Code != "57014" {
		t.Fatalf("interrupted CREATE INDEX CONCURRENTLY: %v, want a canceled statement (57014)", err)
	}
	conn.ExecContext(ctx, `RESET statement_timeout`) //nolint:errcheck
	conn.Close()
	if err := writer.Rollback(); err != nil {
		t.Fatal(err)
	}
	x.MustExec(create)
	if valid() {
		t.Fatal("the index is valid after an interrupted build; the test proves nothing")
	}

	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if !valid() {
		t.Error("Migrate left the index invalid")
	}
}
