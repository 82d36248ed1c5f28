package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/pgserver"
	"github.com/fundsource/fundsource/internal/tenant"
)

// Demo merchant of 'make run'.
const (
	demoName  = "Demo Merchant"
	demoEmail = "demo@fundsource.test"
	devDBName = "fundsource"
)

// runDev is 'make run': without DATABASE_URL it starts (or reuses) the private
// cluster under DATA_DIR/postgres, then migrates, makes sure the demo merchant
// exists, prints its keys and serves until interrupted, and finally stops
// the cluster.
func runDev(ctx context.Context, io IO) error {
	cfg, err := config.Load(io.Getenv)
	if err != nil {
		return err
	}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		srv, url, err := startDevCluster(ctx, cfg.DataDir, io)
		if err != nil {
			return err
		}
		defer func() {
			fmt.Fprintln(io.Stderr, "stopping the private PostgreSQL cluster")
			_ = os.Remove(portFile(cfg.DataDir))
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(io.Stderr, err)
			}
		}()
		dbURL = url
	}
	if cfg.ProviderSimulator {
		ln, err := net.Listen("tcp", cfg.ProviderSimAddr)
		if err != nil {
			return fmt.Errorf("start the provider simulator on %s (set PROVIDER_SIM_ADDR or PLAID_BASE_URL): %w", cfg.ProviderSimAddr, err)
		}
		simCtx, stopSim := context.WithCancel(ctx)
		defer stopSim()
		go serveSim(simCtx, ln, devSimConfig(cfg))
		fmt.Fprintf(io.Stderr, "provider simulator on %s\n", cfg.PlaidBaseURL)
	}
	return withDatabase(ctx, cfg, dbURL, io, func(e *env) error {
		if err := e.ensureDemoMerchant(ctx); err != nil {
			return err
		}
		return e.serve(ctx)
	})
}

func portFile(dataDir string) string  { return filepath.Join(dataDir, "postgres.port") }
func socketDir(dataDir string) string { return filepath.Join(dataDir, "run") }

func startDevCluster(ctx context.Context, dataDir string, io IO, settings ...string) (*pgserver.Server, string, error) {
	if _, err := pgserver.BinDir(); err != nil {
		return nil, "", fmt.Errorf("%w\nInstall it (as root: apt-get install -y postgresql) or set DATABASE_URL", err)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, "", err
	}
	if os.Geteuid() == 0 {
		// The server runs as the postgres user, which must traverse DATA_DIR
		// (but not list or read it).
		if err := os.Chmod(abs, 0o711); err != nil {
			return nil, "", err
		}
	}
	logFile, err := os.OpenFile(filepath.Join(abs, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(io.Stderr, "starting the private PostgreSQL cluster in %s (log: %s)\n",
		filepath.Join(abs, "postgres"), logFile.Name())
	srv, err := pgserver.Start(ctx, pgserver.Options{
		DataDir:   filepath.Join(abs, "postgres"),
		SocketDir: socketDir(abs),
		TCPAddr:   "127.0.0.1",
		Durable:   true,
		Log:       logFile,
		Settings:  settings,
	})
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(portFile(abs), []byte(strconv.Itoa(srv.Port())+"\n"), 0o600); err != nil {
		_ = srv.Stop()
		return nil, "", err
	}
	if err := createDatabase(ctx, srv.URL("postgres"), devDBName); err != nil {
		_ = srv.Stop()
		return nil, "", err
	}
	fmt.Fprintf(io.Stderr, "PostgreSQL listens on %s and 127.0.0.1:%d (psql -h %s -p %d -U postgres %s)\n",
		socketDir(abs), srv.Port(), socketDir(abs), srv.Port(), devDBName)
	return srv, srv.URL(devDBName), nil
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

// runningDevCluster is the default DATABASE_URL in development: the private
// cluster of a running 'make run'.
func runningDevCluster(dataDir string) (string, error) {
	abs, err := filepath.Abs(dataDir)
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
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", socketDir(abs), port, devDBName), nil
}

// ensureDemoMerchant makes sure the demo merchant exists with the keys in
// DATA_DIR/demo.env, creating or repairing both, and prints them.
func (e *env) ensureDemoMerchant(ctx context.Context) error {
	path := filepath.Join(e.cfg.DataDir, "demo.env")
	saved := config.ReadEnvFile(path)
	id, secret := saved["DEMO_MERCHANT_ID"], saved["DEMO_SECRET_KEY"]
	if id != "" && secret != "" {
		if p, err := e.merchants.Authenticate(ctx, secret); err == nil && p.Scope.MerchantID == id {
			e.printDemo(saved, path, false)
			return nil
		}
	}
	password := merchant.NewPassword()
	vals := map[string]string{"DEMO_EMAIL": demoEmail, "DEMO_PASSWORD": password}
	m, err := e.merchants.MerchantByEmail(ctx, demoEmail)
	switch {
	case err == nil:
		// The database has the demo merchant but demo.env lost its keys: roll.
		scope := tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox}
		if vals["DEMO_SECRET_KEY"], err = e.merchants.RollKey(ctx, scope); err != nil {
			return err
		}
		envr, err := e.merchants.Environment(ctx, scope)
		if err != nil {
			return err
		}
		if err := e.merchants.SetPassword(ctx, m.ID, password); err != nil {
			return err
		}
		vals["DEMO_MERCHANT_ID"], vals["DEMO_PUBLIC_KEY"] = m.ID, envr.PublicKey
	case errs.Is(err, errs.NotFound):
		created, err := e.merchants.Create(ctx, demoName, demoEmail, password)
		if err != nil {
			return err
		}
		vals["DEMO_MERCHANT_ID"] = created.Merchant.ID
		vals["DEMO_SECRET_KEY"], vals["DEMO_PUBLIC_KEY"] = created.Sandbox.SecretKey, created.Sandbox.PublicKey
	default:
		return err
	}
	var b strings.Builder
	b.WriteString("# The demo merchant of 'make run' (sandbox). Development only.\n")
	for _, k := range []string{"DEMO_MERCHANT_ID", "DEMO_SECRET_KEY", "DEMO_PUBLIC_KEY", "DEMO_EMAIL", "DEMO_PASSWORD"} {
		fmt.Fprintf(&b, "%s=%s\n", k, vals[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	e.printDemo(vals, path, true)
	return nil
}

func (e *env) printDemo(v map[string]string, path string, fresh bool) {
	state := "reused"
	if fresh {
		state = "created"
	}
	base := e.cfg.SandboxBaseURL.String()
	fmt.Fprintf(e.io.Stdout, `
Demo merchant (%s; also in %s)
  merchant id:        %s
  sandbox secret key: %s
  sandbox public key: %s
  dashboard:          %s/dashboard/sign-in
  dashboard sign-in:  %s / %s
  provider simulator: %s (merchant client %s / %s)

Try it:
  curl -s %s/v2/customers -H "Authorization: Bearer %s" \
    -H "Content-Type: application/json" \
    -d '{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}'

Hosted verification page (after initiating micro-deposits; README: "Hosted verification page"):
  %s/#/bank-account/%s/{user_id}/{funding_source_id}?successUrl=https://example.com/done

`, state, path, v["DEMO_MERCHANT_ID"], v["DEMO_SECRET_KEY"], v["DEMO_PUBLIC_KEY"], base, v["DEMO_EMAIL"], v["DEMO_PASSWORD"],
		e.cfg.PlaidBaseURL, config.SimMerchantClientID, config.SimMerchantSecret,
		base, v["DEMO_SECRET_KEY"], e.cfg.HostedBaseURL.String(), v["DEMO_PUBLIC_KEY"])
}
