// Package pgtest gives tests a real PostgreSQL: one throwaway server per test
// process (or TEST_DATABASE_URL's server when set), a template database
// migrated once, and a fresh database per test cloned from it.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/dev/pgserver"
)

var (
	once     sync.Once
	setupErr error
	server   *pgserver.Server
	tmpDir   string
	adminDSN string // connection to a maintenance database of the server
	template string // name of the migrated template database
	mkURL    func(db string) string
)

// Main runs the package's tests and then stops the throwaway server. Call it
// from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }. The after
// functions run once the tests are done, before the server stops.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	shutdown()
	os.Exit(code)
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if url := os.Getenv("TEST_DATABASE_URL"); url != "" {
		adminDSN = url
		mkURL = func(db string) string { return withDatabase(url, db) }
	} else {
		var err error
		if tmpDir, err = os.MkdirTemp("", "fundsource-pg-"); err != nil {
			return err
		}
		// The server may run as the postgres user: let it traverse the parent.
		if err := os.Chmod(tmpDir, 0o711); err != nil {
			return err
		}
		log, _ := os.Create(filepath.Join(tmpDir, "postgres.log"))
		server, err = pgserver.Start(ctx, pgserver.Options{
			DataDir:   filepath.Join(tmpDir, "data"),
			SocketDir: filepath.Join(tmpDir, "sock"),
			Log:       log,
		})
		if err != nil {
			return fmt.Errorf("start throwaway PostgreSQL: %w", err)
		}
		adminDSN = server.URL("postgres")
		mkURL = server.URL
	}
	template = "fs_tmpl_" + randomHex()
	if err := exec(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(template)); err != nil {
		return err
	}
	db, err := sql.Open("postgres", mkURL(template))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := postgres.Migrate(ctx, db); err != nil {
		return err
	}
	return nil
}

func shutdown() {
	if template != "" && setupErr == nil {
		_ = exec(context.Background(), "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(template)+" WITH (FORCE)")
	}
	if server != nil {
		_ = server.Stop()
	}
	if tmpDir != "" {
		_ = os.RemoveAll(tmpDir)
	}
}

func exec(ctx context.Context, stmt string) error {
	db, err := sql.Open("postgres", adminDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// URL returns the connection string of a fresh migrated database, dropped
// when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("pgtest: %v", setupErr)
	}
	name := "fs_test_" + randomHex()
	ctx := context.Background()
	// CREATE DATABASE … TEMPLATE needs the template to have no sessions; a
	// concurrent clone can briefly hold it, so retry a few times.
	var err error
	for range 20 {
		err = exec(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(template))
		if err == nil || !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		_ = exec(context.Background(), "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
	})
	return mkURL(name)
}

// DB returns a store on a fresh migrated database, closed when the test ends.
func DB(t testing.TB) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// withDatabase replaces the database name in a URL or key=value DSN.
func withDatabase(dsn, db string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + db
		return u.String()
	}
	var parts []string
	for _, f := range strings.Fields(dsn) {
		if !strings.HasPrefix(f, "dbname=") {
			parts = append(parts, f)
		}
	}
	return strings.Join(append(parts, "dbname="+db), " ")
}
