package pgserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lib/pq"
)

// Private is a durable cluster kept in a folder of its own: the cluster in
// DIR/postgres, its socket in DIR/run, its log in DIR/postgres.log, the
// postgres role's password in DIR/postgres.password (0600, generated on
// the first start) and its TCP port in DIR/postgres.port, so that other
// commands find it while it runs. `make run` keeps one under DATA_DIR; the lab's bench and
// resilience suite make one in a temporary folder.
type Private struct {
	Dir      string   // the folder; created when missing
	Database string   // created in the cluster when missing
	Settings []string // more "name=value" server settings
	// Progress, when not nil, is told where the cluster starts and listens.
	Progress io.Writer
}

// Start starts (or reuses) the cluster and returns the server and the URL
// of the database.
func (p Private) Start(ctx context.Context) (*Server, string, error) {
	if _, err := BinDir(); err != nil {
		return nil, "", fmt.Errorf("%w\nInstall it (as root: apt-get install -y postgresql) or set DATABASE_URL", err)
	}
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, "", err
	}
	if os.Geteuid() == 0 {
		// The server runs as the postgres user, which must traverse the
		// folder (but not list or read it).
		if err := os.Chmod(abs, 0o711); err != nil {
			return nil, "", err
		}
	}
	password, err := readPassword(abs, true)
	if err != nil {
		return nil, "", err
	}
	logFile, err := os.OpenFile(filepath.Join(abs, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, "", err
	}
	progress := p.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "starting the private PostgreSQL cluster in %s (log: %s)\n",
		filepath.Join(abs, "postgres"), logFile.Name())
	srv, err := Start(ctx, Options{
		DataDir:   filepath.Join(abs, "postgres"),
		SocketDir: socketDir(abs),
		TCPAddr:   "127.0.0.1",
		Durable:   true,
		Log:       logFile,
		Settings:  p.Settings,
		Password:  password,
	})
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(portFile(abs), []byte(strconv.Itoa(srv.Port())+"\n"), 0o600); err != nil {
		_ = srv.Stop()
		return nil, "", err
	}
	if err := createDatabase(ctx, srv.URL("postgres"), p.Database); err != nil {
		_ = srv.Stop()
		return nil, "", err
	}
	fmt.Fprintf(progress, "PostgreSQL listens on %s and 127.0.0.1:%d (PGPASSWORD=$(cat %s) psql -h %s -p %d -U postgres %s)\n",
		socketDir(abs), srv.Port(), passwordFile(abs), socketDir(abs), srv.Port(), p.Database)
	return srv, srv.URL(p.Database), nil
}

// Forget removes the port file, so that no command takes the cluster for
// running any more; call it before stopping the server.
func (p Private) Forget() {
	if abs, err := filepath.Abs(p.Dir); err == nil {
		_ = os.Remove(portFile(abs))
	}
}

// URL is the database URL of the cluster while it runs (started by another
// process), or an error saying that it does not run.
func (p Private) URL() (string, error) {
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(portFile(abs))
	if err != nil {
		return "", errors.New("DATABASE_URL is not set and the private cluster of 'make run' is not running: start 'make run' first or set DATABASE_URL")
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("bad port in %s", portFile(abs))
	}
	password, err := readPassword(abs, false)
	if err != nil {
		return "", err
	}
	return dsn(socketDir(abs), port, p.Database, password), nil
}

func portFile(dir string) string     { return filepath.Join(dir, "postgres.port") }
func socketDir(dir string) string    { return filepath.Join(dir, "run") }
func passwordFile(dir string) string { return filepath.Join(dir, "postgres.password") }

// readPassword reads the cluster's password from dir, generating the file
// (mode 0600) when it is missing and create is set. A file others may read
// is made the owner's alone again.
func readPassword(dir string, create bool) (string, error) {
	path := passwordFile(dir)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		password := GeneratePassword()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("create the cluster's password file: %w", err)
		}
		_, err = f.WriteString(password + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		return password, nil
	}
	if err != nil {
		return "", fmt.Errorf("read the cluster's password: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("keep %s to its owner: %w", path, err)
	}
	password := strings.TrimSpace(string(b))
	if password == "" {
		return "", fmt.Errorf("%s is empty: delete it only together with the cluster", path)
	}
	return password, nil
}

func createDatabase(ctx context.Context, adminURL, name string) error {
	db, err := sql.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("check database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
