package pgserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lib/pq"
)

// hbaPassword is the client authentication of a cluster with a password:
// every connection gives it.
const hbaPassword = `# fundsource: every connection gives the postgres role's password.
local all all scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128 scram-sha-256
`

// hbaSetup trusts only the socket while the role gets its password; TCP
// demands the password already.
const hbaSetup = `# fundsource: setting the password; TCP demands it already.
local all all trust
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128 scram-sha-256
`

// GeneratePassword returns a fresh random password: 32 bytes from
// crypto/rand, hex-encoded.
func GeneratePassword() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// prepareAuth reports whether the cluster in dataDir still has to get its
// password (a new cluster, one made without a password, or a conversion
// that stopped half-way); then it writes hbaSetup for the start.
func prepareAuth(dataDir string) (bool, error) {
	path := filepath.Join(dataDir, "pg_hba.conf")
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read the cluster's client authentication: %w", err)
	}
	if string(b) == hbaPassword {
		return false, nil
	}
	// Truncating keeps the file's owner (the server's user) and mode.
	if err := os.WriteFile(path, []byte(hbaSetup), 0o600); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// setPassword gives the postgres role the server's password over the
// trusted socket, then makes the socket demand it too and waits until the
// server refuses a connection without it.
func (s *Server) setPassword(ctx context.Context) error {
	db, err := sql.Open("postgres", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect to set the password: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET password_encryption = 'scram-sha-256'"); err != nil {
		return fmt.Errorf("set the password: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "ALTER ROLE postgres PASSWORD "+pq.QuoteLiteral(s.opts.Password)); err != nil {
		return fmt.Errorf("set the password: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.opts.DataDir, "pg_hba.conf"), []byte(hbaPassword), 0o600); err != nil {
		return fmt.Errorf("write the cluster's client authentication: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload the client authentication: %w", err)
	}
	// The postmaster reloads on a signal: wait until it has.
	without := dsn(s.opts.SocketDir, s.opts.Port, "postgres", "")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if refuses(ctx, without) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("the server still accepts connections without the password after reloading its client authentication")
}

// refuses reports whether the server at dsn refuses a connection.
func refuses(ctx context.Context, dsn string) bool {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return true
	}
	defer db.Close()
	return db.PingContext(ctx) != nil
}

// quoteValue quotes a connection-string value when it needs it.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t\n\r") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
