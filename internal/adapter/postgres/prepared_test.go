package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// oneConn opens a pool on a fresh database and takes one connection of it.
func oneConn(t *testing.T) *sqlx.Conn {
	db, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Pool().Connx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestStatementsArePreparedOncePerConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := oneConn(t)
	const query = `SELECT $1::int + 1`
	for i := range 3 {
		var got int
		if err := conn.QueryRowxContext(ctx, query, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("call %d: %d, %v", i, got, err)
		}
	}
	count := func(query string) int {
		var n int
		if err := conn.QueryRowxContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(query); n != 1 {
		t.Errorf("%q is prepared %d times on the connection, want once", query, n)
	}
	// Statements without arguments stay on the simple protocol (several
	// statements in one string must keep working, as migrations need).
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE t (a int); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM t`); n != 0 {
		t.Errorf("a statement without arguments was prepared")
	}

	// A statement prepared inside a transaction that rolls back is still
	// there and still works.
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const inTx = `INSERT INTO t VALUES ($1)`
	if _, err := tx.ExecContext(ctx, inTx, 2); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, inTx, 3); err != nil {
		t.Fatalf("after the rollback: %v", err)
	}
	var rows int
	if err := conn.QueryRowxContext(ctx, `SELECT count(*) FROM t WHERE a >= $1`, 0).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("rows: %d, %v (want 2: the rolled-back insert is gone)", rows, err)
	}
}

func TestAPreparedStatementSurvivesATableChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := oneConn(t)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE changing (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	const query = `SELECT * FROM changing WHERE id = $1`
	rows, err := conn.QueryxContext(ctx, query, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if _, err := conn.ExecContext(ctx, `ALTER TABLE changing ADD COLUMN name text`); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL may refuse the old statement once ("cached plan must not
	// change result type", 0A000); the connection then prepares it again.
	if rows, err := conn.QueryxContext(ctx, query, 1); err == nil {
		rows.Close()
	} else if pqErr := (*pq.Error)(nil); !errors.As(err, &pqErr) || pqErr.Code != "0A000" {
		t.Fatalf("first call after the change: %v", err)
	}
	rows, err = conn.QueryxContext(ctx, query, 1)
	if err != nil {
		t.Fatalf("second call after the change: %v", err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if len(cols) != 2 {
		t.Errorf("columns %v, want id and name", cols)
	}
}

func TestReserveKeepsRequestsTheirConnections(t *testing.T) {
	t.Parallel()
	db, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Pool().Stats().MaxOpenConnections; got != postgres.APIConns {
		t.Fatalf("pool: %d connections, want %d", got, postgres.APIConns)
	}
	db.Reserve(16)
	if got := db.Pool().Stats().MaxOpenConnections; got != postgres.APIConns+16 {
		t.Errorf("after reserving 16: %d connections, want %d", got, postgres.APIConns+16)
	}
}
