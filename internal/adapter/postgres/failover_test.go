package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/dev/pgserver"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if got := errs.CodeOf(err); got != errs.ServiceUnavailable {
		t.Errorf("%s: code %q, want %q (err %v)", what, got, errs.ServiceUnavailable, err)
	}
}

// TestReadOnlyServerIsServiceUnavailable puts the database in read-only
// sessions (what a standby, or a primary stepping down, answers): writes
// on both pools and /readyz's ping are service_unavailable, and once it
// is writable again every pool works at once, because the connections
// that met the read-only server were dropped, not pooled.
func TestReadOnlyServerIsServiceUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	admin := sqlx.MustOpen("postgres", url)
	defer admin.Close()
	admin.SetMaxOpenConns(1) // one session, opened before the switch, stays writable
	cfg, err := pq.NewConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := pqName(cfg.Database)
	admin.MustExec("CREATE TABLE marks (at int)")
	admin.MustExec("ALTER DATABASE " + db + " SET default_transaction_read_only = on")

	store, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	wantUnavailable(t, "ping of a read-only server", store.Ping(ctx))
	_, err = store.Pool().Exec("INSERT INTO marks VALUES (1)")
	wantUnavailable(t, "write on the pool", postgres.Translate(err))
	_, err = store.BatchPool().Exec("INSERT INTO marks VALUES (2)")
	wantUnavailable(t, "write on the batch writers' pool", postgres.Translate(err))
	wantUnavailable(t, "store write", store.InsertMerchant(ctx, newMerchant("mer_ro", "ro@example.com")))

	// Several hosts, target_session_attrs=read-write: a dead host and a
	// read-only one make "could not connect to any of the hosts".
	multi := fmt.Sprintf("host=%s,%s port=%d,%d user=%s dbname=%s sslmode=disable password='%s'",
		cfg.Host, cfg.Host, deadPort(t), cfg.Port, cfg.User, cfg.Database, cfg.Password)
	lazy, err := postgres.OpenLazy(multi)
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	wantUnavailable(t, "ping with no writable host", lazy.Ping(ctx))
	_, err = lazy.Merchant(ctx, "mer_x")
	wantUnavailable(t, "read with no writable host", err)

	admin.MustExec("ALTER DATABASE " + db + " RESET default_transaction_read_only")
	if err := store.Ping(ctx); err != nil {
		t.Errorf("ping once writable: %v", err)
	}
	for i, x := range []*sqlx.DB{store.Pool(), store.BatchPool(), lazy.Pool()} {
		if _, err := x.Exec("INSERT INTO marks VALUES (10)"); err != nil {
			t.Errorf("pool %d once writable: %v", i, err)
		}
	}
}

func pqName(s string) string { return pq.QuoteIdentifier(s) }

// TestPoolsAndListenerFollowThePrimary runs two servers behind one
// multi-host connection string: A writable, B read-only (a standby, as
// target_session_attrs sees it). A stops and B becomes writable (a
// failover): meanwhile every pool answers service_unavailable, then
// writes land on B, the ping is healthy, and the listener hears
// notifications sent on B.
func TestPoolsAndListenerFollowThePrimary(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := startServer(t, "a"), startServer(t, "b")
	for _, s := range []*pgserver.Server{a, b} {
		x := sqlx.MustOpen("postgres", s.URL("postgres"))
		x.MustExec("CREATE TABLE marks (port int)")
		x.Close()
	}
	bAdmin := sqlx.MustOpen("postgres", b.URL("template1"))
	defer bAdmin.Close()
	bAdmin.MustExec("ALTER DATABASE postgres SET default_transaction_read_only = on")

	dsn := fmt.Sprintf("host=%s,%s port=%d,%d user=postgres dbname=postgres sslmode=disable",
		socketDir(a), socketDir(b), a.Port(), b.Port())
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pools := map[string]*sqlx.DB{"pool": db.Pool(), "batch writers": db.BatchPool()}
	writeOn := func(x *sqlx.DB) (int, error) {
		var port int
		err := x.Get(&port, "INSERT INTO marks VALUES (current_setting('port')::int) RETURNING port")
		return port, postgres.Translate(err)
	}
	for name, x := range pools {
		if got, err := writeOn(x); err != nil || got != a.Port() {
			t.Fatalf("%s writes on port %d (%v), want A's %d", name, got, err, a.Port())
		}
	}

	heard := make(chan struct{}, 16)
	sub := postgres.Subscribe(ctx, dsn, "failover_test", slog.New(slog.DiscardHandler), func() { heard <- struct{}{} })
	waitFor(t, "listener connected", sub.Connected)
	sendNotify := func(s *pgserver.Server) error {
		x, err := sql.Open("postgres", s.URL("postgres")+" options='-c default_transaction_read_only=off'")
		if err != nil {
			return err
		}
		defer x.Close()
		_, err = x.Exec("NOTIFY failover_test")
		return err
	}
	if !hears(t, heard, func() error { return sendNotify(a) }) {
		t.Fatal("listener did not hear a notification on A")
	}

	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	wantUnavailable(t, "ping with A down and B read-only", db.Ping(ctx))
	for name, x := range pools {
		_, err := writeOn(x)
		wantUnavailable(t, name+" with A down and B read-only", err)
	}
	waitFor(t, "listener disconnected", func() bool { return !sub.Connected() })

	bAdmin.MustExec("ALTER DATABASE postgres RESET default_transaction_read_only") // the promotion
	for name, x := range pools {
		if got, err := writeOn(x); err != nil || got != b.Port() {
			t.Errorf("%s after the failover writes on port %d (%v), want B's %d", name, got, err, b.Port())
		}
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("ping after the failover: %v", err)
	}
	waitFor(t, "listener reconnected", sub.Connected)
	if !hears(t, heard, func() error { return sendNotify(b) }) {
		t.Error("listener did not hear a notification on B after the failover")
	}
}

// hears drains heard, runs send, and reports whether heard fires within 2 s.
func hears(t *testing.T, heard chan struct{}, send func() error) bool {
	t.Helper()
	for {
		select {
		case <-heard:
			continue
		default:
		}
		break
	}
	if err := send(); err != nil {
		t.Fatalf("notify: %v", err)
	}
	select {
	case <-heard:
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startServer starts a throwaway server of the test's own, on a Unix socket.
func startServer(t *testing.T, name string) *pgserver.Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "fundsource-failover-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil { // the server may run as the postgres user
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s, err := pgserver.Start(t.Context(), pgserver.Options{DataDir: filepath.Join(dir, "data"), SocketDir: filepath.Join(dir, "sock"), Log: log})
	if err != nil {
		out, _ := os.ReadFile(log.Name())
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { _ = s.Stop(); _ = os.RemoveAll(dir) })
	return s
}

func socketDir(s *pgserver.Server) string {
	cfg, _ := pq.NewConfig(s.URL("postgres"))
	return cfg.Host
}

// TestUnavailableCausesAnywhereInTheTree classifies the errors lib/pq
// builds with several hosts, whose causes are joined: any cause that
// says "no primary now" makes service_unavailable, whichever comes first.
func TestUnavailableCausesAnywhereInTheTree(t *testing.T) {
	t.Parallel()
	hosts := func(causes ...error) error {
		return fmt.Errorf("pq: could not connect to any of the hosts:\n%w", errors.Join(causes...))
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want errs.Code
	}{
		{"auth error first, refused after", hosts(&pq.Error{Code: "28P01"}, refused), errs.ServiceUnavailable},
		{"read-only and hot standby", hosts(errors.New("session is read-only"), errors.New("server is in hot standby mode")), errs.ServiceUnavailable},
		{"starting up and read-only", hosts(&pq.Error{Code: "57P03"}, errors.New("session is read-only")), errs.ServiceUnavailable},
		{"read-only transaction", fmt.Errorf("insert: %w", &pq.Error{Code: "25006"}), errs.ServiceUnavailable},
		{"BEGIN READ WRITE on a standby", &pq.Error{Code: "0A000", Message: "cannot set transaction read-write mode during recovery"}, errs.ServiceUnavailable},
		{"another feature_not_supported", &pq.Error{Code: "0A000", Message: "cached plan must not change result type"}, ""},
		{"unique violation", &pq.Error{Code: "23505"}, errs.Conflict},
		{"wrong password on every host", hosts(&pq.Error{Code: "28P01"}, &pq.Error{Code: "28P01"}), ""},
	}
	for _, tt := range tests {
		if got := errs.CodeOf(postgres.Translate(tt.err)); got != tt.want {
			t.Errorf("%s: code %q, want %q", tt.name, got, tt.want)
		}
	}
}
