package pgserver

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPrivateClusterTakesAPassword: the cluster of 'make run' refuses
// connections without its password, over TCP and the socket alike; the
// password is generated into a 0600 file beside the cluster and reused by
// the next start; a cluster made before it had a password gets one.
func TestPrivateClusterTakesAPassword(t *testing.T) {
	if _, err := BinDir(); err != nil {
		t.Fatal(err) // make test installs PostgreSQL: a missing server is a failure
	}
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "new", true: "made without a password"}[old], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := privateDir(t)
			if old {
				// A cluster made without a password: every connection trusted.
				if err := os.MkdirAll(dir, 0o711); err != nil {
					t.Fatal(err)
				}
				log, err := os.CreateTemp(t.TempDir(), "postgres.log")
				if err != nil {
					t.Fatal(err)
				}
				defer log.Close()
				srv, err := Start(ctx, Options{DataDir: filepath.Join(dir, "postgres"), SocketDir: socketDir(dir), TCPAddr: "127.0.0.1", Log: log})
				if err != nil {
					out, _ := os.ReadFile(log.Name())
					t.Fatalf("%v\n%s", err, out)
				}
				if refuses(ctx, dsn("127.0.0.1", srv.Port(), "postgres", "")) {
					t.Fatal("the cluster without a password refuses a connection without one")
				}
				if err := srv.Stop(); err != nil {
					t.Fatal(err)
				}
			}
			p := Private{Dir: dir, Database: "fundsource"}
			srv, url, err := p.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			password := checkPassword(t, ctx, p, srv, url)

			// A file others could read is made the owner's again; the next
			// start reuses the password.
			if err := os.Chmod(passwordFile(dir), 0o644); err != nil {
				t.Fatal(err)
			}
			p.Forget()
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			srv, url, err = p.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Forget(); _ = srv.Stop() })
			if again := checkPassword(t, ctx, p, srv, url); again != password {
				t.Errorf("the second start changed the password")
			}
		})
	}
}

// checkPassword checks the running cluster's authentication and returns
// its password.
func checkPassword(t *testing.T, ctx context.Context, p Private, srv *Server, url string) string {
	t.Helper()
	dir := p.Dir
	st, err := os.Stat(passwordFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("password file mode %v, want 0600", st.Mode().Perm())
	}
	password, err := readPassword(dir, false)
	if err != nil || len(password) != 64 {
		t.Fatalf("password %q: %v", password, err)
	}
	for name, d := range map[string]string{
		"TCP without a password":    dsn("127.0.0.1", srv.Port(), "fundsource", ""),
		"TCP with a wrong password": dsn("127.0.0.1", srv.Port(), "fundsource", "postgres"),
		"socket without a password": dsn(socketDir(dir), srv.Port(), "fundsource", ""),
	} {
		if !refuses(ctx, d) {
			t.Errorf("%s: connected", name)
		}
	}
	running, err := p.URL()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{url, running, dsn("127.0.0.1", srv.Port(), "fundsource", password)} {
		db, err := sql.Open("postgres", d)
		if err != nil {
			t.Fatal(err)
		}
		var one int
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			t.Errorf("with the password: %v", err)
		}
		db.Close()
	}
	return password
}

// privateDir is a folder for a cluster that the server's user (postgres,
// when the tests run as root) can traverse.
func privateDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "pgserver-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(base, "data")
}
