package pgtest

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver Pool opens

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// Open returns a store on the database at url (one of URL's), closed when
// the test ends.
func Open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Pool returns a raw connection pool on the database at url, for tests that
// read or change rows directly; closed when the test ends. It is the
// tests' own pool, apart from the store's.
func Pool(t testing.TB, url string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
