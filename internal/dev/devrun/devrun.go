// Package devrun is the development runner of 'make run' ('fundsource
// dev') and the development helpers the product's command line offers
// beside it: the provider simulator, the rail simulator and a webhook
// receiver. None of it serves production; it lives apart from the
// product's commands (internal/app, which calls it) so the tree shows
// what ships and what helps, and so the test harness can run 'make run'
// in a test process without importing the product's command package.
//
// The runner starts (or reuses) a private PostgreSQL cluster under
// DATA_DIR, the simulators the configuration asks for, makes sure the demo
// merchant exists and prints its keys, then serves exactly what 'serve'
// serves (wiring.Services.Serve).
package devrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/dev/pgserver"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/wiring"
)

// Demo merchant of 'make run'.
const (
	demoName  = "Demo Merchant"
	demoEmail = "demo@fundsource.test"
	devDBName = "fundsource"
)

// ErrUsage marks a command-line mistake; the product's main exits with
// status 2 on it (internal/app's ErrUsage is this error).
var ErrUsage = errors.New("usage")

// IO is where a command reads its environment and writes its output.
type IO struct {
	Getenv func(string) string
	Stdout io.Writer // command results
	Stderr io.Writer // logs and messages
}

// run is the wired service of one dev run, with where it writes.
type run struct {
	*wiring.Services
	io IO
}

// Run is 'make run': without DATABASE_URL it starts (or reuses) the private
// cluster under DATA_DIR/postgres, then migrates, makes sure the demo merchant
// exists, prints its keys and serves until interrupted, and finally stops
// the cluster.
func Run(ctx context.Context, io IO) error {
	cfg, err := config.Load(io.Getenv)
	if err != nil {
		return err
	}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		cluster := Cluster(cfg.DataDir)
		cluster.Progress = io.Stderr
		srv, url, err := cluster.Start(ctx)
		if err != nil {
			return err
		}
		defer func() {
			fmt.Fprintln(io.Stderr, "stopping the private PostgreSQL cluster")
			cluster.Forget()
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
	if cfg.RailSimulator {
		ln, err := net.Listen("tcp", cfg.RailSimAddr)
		if err != nil {
			return fmt.Errorf("start the rail simulator on %s (set RAIL_SIM_ADDR or INSTANT_RAIL_URL): %w", cfg.RailSimAddr, err)
		}
		simCtx, stopSim := context.WithCancel(ctx)
		defer stopSim()
		token := ids.Secret("railctl_")
		go serveRailSim(simCtx, ln, railsim.New().WithControlToken(token))
		cfg.InstantRailURL = "http://" + ln.Addr().String() + "/"
		fmt.Fprintf(io.Stderr, "rail simulator on %s (POST /sim/down, /sim/up and GET /sim/credits with -H \"Authorization: Bearer %s\")\n",
			cfg.InstantRailURL, token)
	}
	log, flush := wiring.NewLogger(io.Stderr)
	defer flush()
	svc, closeDB, err := wiring.Open(ctx, cfg, dbURL, log)
	if err != nil {
		return err
	}
	defer closeDB()
	s := &run{Services: svc, io: io}
	if err := s.ensureDemoMerchant(ctx); err != nil {
		return err
	}
	return svc.Serve(ctx, dbURL)
}

// Cluster is the private cluster of 'make run' under DATA_DIR; the
// product's commands use it when DATABASE_URL is unset in development.
func Cluster(dataDir string) pgserver.Private {
	return pgserver.Private{Dir: dataDir, Database: devDBName}
}

// ensureDemoMerchant makes sure the demo merchant exists with the keys in
// DATA_DIR/demo.env, creating or repairing both, prints them, and keeps the
// file current when the key is rolled (in the dashboard) while it serves.
// A merchant the file names is never changed: a key or password the
// developer replaced stays valid across restarts. Only a lost file makes
// a new key and password, since neither can be read back.
func (s *run) ensureDemoMerchant(ctx context.Context) error {
	path := filepath.Join(s.Config.DataDir, "demo.env")
	saved := config.ReadEnvFile(path)
	id, secret := saved["DEMO_MERCHANT_ID"], saved["DEMO_SECRET_KEY"]
	if id != "" && secret != "" {
		if _, err := s.Merchants.Merchant(ctx, id); err == nil {
			state := "reused"
			if p, err := s.Merchants.Authenticate(ctx, secret); err != nil || p.Scope.MerchantID != id {
				state = "reused; the secret key below was replaced outside this run: use the one the dashboard showed, or delete demo.env for a new one"
			}
			s.keepDemoFile(path, saved)
			s.printDemo(saved, path, state)
			return nil
		} else if !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	password := merchant.NewPassword()
	vals := map[string]string{"DEMO_EMAIL": demoEmail, "DEMO_PASSWORD": password}
	m, err := s.Merchants.MerchantByEmail(ctx, demoEmail)
	switch {
	case err == nil:
		// The database has the demo merchant but demo.env lost its keys: roll.
		scope := tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox}
		if vals["DEMO_SECRET_KEY"], err = s.Merchants.RollKey(ctx, scope, wiring.Operator(s.io.Getenv)); err != nil {
			return err
		}
		envr, err := s.Merchants.Environment(ctx, scope)
		if err != nil {
			return err
		}
		if err := s.Merchants.SetPassword(ctx, m.ID, password, wiring.Operator(s.io.Getenv)); err != nil {
			return err
		}
		vals["DEMO_MERCHANT_ID"], vals["DEMO_PUBLIC_KEY"] = m.ID, envr.PublicKey
	case errs.Is(err, errs.NotFound):
		created, err := s.Merchants.Create(ctx, demoName, demoEmail, password)
		if err != nil {
			return err
		}
		vals["DEMO_MERCHANT_ID"] = created.Merchant.ID
		vals["DEMO_SECRET_KEY"], vals["DEMO_PUBLIC_KEY"] = created.Sandbox.SecretKey, created.Sandbox.PublicKey
	default:
		return err
	}
	if err := writeDemoFile(path, vals); err != nil {
		return err
	}
	s.keepDemoFile(path, vals)
	s.printDemo(vals, path, "created")
	return nil
}

// keepDemoFile rewrites demo.env whenever the demo merchant's sandbox key
// is rolled, so the next run prints and reuses the key in use.
func (s *run) keepDemoFile(path string, vals map[string]string) {
	var mu sync.Mutex
	demo := tenant.Scope{MerchantID: vals["DEMO_MERCHANT_ID"], Env: tenant.Sandbox}
	s.Merchants.OnKeyRolled(func(scope tenant.Scope, secret string) {
		if scope != demo {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		vals["DEMO_SECRET_KEY"] = secret
		if err := writeDemoFile(path, vals); err != nil {
			s.Log.Error("keep the demo merchant's key file", slog.String("error", err.Error()))
		}
	})
}

// writeDemoFile writes the demo merchant's keys and sign-in to path. The
// keys are written again as SK and PK, the names the walkthrough (docs/walkthrough.md)
// reads, and exported, so that sourcing the file prepares a shell for it;
// the export line has no "=", which config.ReadEnvFile skips. Every value
// is base32 or an email, safe for a shell unquoted.
func writeDemoFile(path string, vals map[string]string) error {
	var b strings.Builder
	b.WriteString("# The demo merchant of 'make run' (sandbox). Development only.\n")
	b.WriteString("# . .data/demo.env exports SK and PK for docs/walkthrough.md.\n")
	for _, k := range []string{"DEMO_MERCHANT_ID", "DEMO_SECRET_KEY", "DEMO_PUBLIC_KEY", "DEMO_EMAIL", "DEMO_PASSWORD"} {
		fmt.Fprintf(&b, "%s=%s\n", k, vals[k])
	}
	fmt.Fprintf(&b, "SK=%s\nPK=%s\nexport SK PK\n", vals["DEMO_SECRET_KEY"], vals["DEMO_PUBLIC_KEY"])
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// printDemo prints the demo merchant's keys and sign-in; state says
// whether they were "created" or "reused".
func (s *run) printDemo(v map[string]string, path, state string) {
	base := s.Config.SandboxBaseURL.String()
	fmt.Fprintf(s.io.Stdout, `
Demo merchant (%s; also in %s)
  merchant id:        %s
  sandbox secret key: %s
  sandbox public key: %s
  dashboard:          %s/dashboard/sign-in
  dashboard sign-in:  %s / %s
  provider simulator: %s (merchant client %s / %s)
  rail simulator:     %s (its /sim/ routes take the control token printed at start)

Try it:
  curl -s %s/v2/customers -H "Authorization: Bearer %s" \
    -H "Content-Type: application/json" \
    -d '{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}'

Hosted verification page (after initiating micro-deposits; docs/walkthrough.md: "Hosted verification page"):
  %s/#/bank-account/%s/{user_id}/{funding_source_id}?successUrl=http://localhost:3000/done

`, state, path, v["DEMO_MERCHANT_ID"], v["DEMO_SECRET_KEY"], v["DEMO_PUBLIC_KEY"], base, v["DEMO_EMAIL"], v["DEMO_PASSWORD"],
		s.Config.PlaidBaseURL, config.SimMerchantClientID, config.SimMerchantSecret, cmp.Or(s.Config.InstantRailURL, "in process"),
		base, v["DEMO_SECRET_KEY"], s.Config.HostedBaseURL.String(), v["DEMO_PUBLIC_KEY"])
}
