// Package app implements the product's commands: serve (the HTTP server
// and the background jobs), migrate, merchant, ach, audit and sanctions
// (operator commands). Each gets its services from internal/wiring, and
// logs through wiring.NewLogger; headers and bodies are never logged. The
// development commands (dev, which 'make run' runs, provider-sim,
// rail-sim and webhook-receiver) are internal/dev/devrun's: the command
// line names them here and hands them over.
package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/dev/devrun"
	"github.com/fundsource/fundsource/internal/wiring"
)

// ErrUsage marks a command-line mistake; main exits with status 2. It is
// the development commands' error too, so one check covers every command.
var ErrUsage = devrun.ErrUsage

const usage = `fundsource: bank funding sources, verification and webhooks

Usage:
  fundsource serve                 serve the API (DATABASE_URL, LISTEN_ADDR, …)
  fundsource migrate [--json]      apply database migrations
  fundsource dev                   what 'make run' runs: private PostgreSQL, migrate, demo merchant, serve
  fundsource merchant create --name N --email E [--password P] [--json]
  fundsource merchant activate-production MERCHANT_ID [--json]
  fundsource merchant roll-key MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant grant-on-demand MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant enable-third-party-verification MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant allow-redirect-origin|remove-redirect-origin MERCHANT_ID --env E ORIGIN [--json]
  fundsource merchant redirect-origins MERCHANT_ID --env sandbox|production [--json]
  fundsource audit verify [--merchant MERCHANT_ID] [--json]
                                   check the audit log's hash chains; exit 1 at the first bad event
  fundsource originator show|set|activate|suspend MERCHANT_ID --env sandbox|production [--json]
                                   a merchant environment's ACH originator: company, status, limits (audited)
  fundsource review list|release|reject [PAY_ID] [--note TEXT] [--json]
                                   held payments: list them, release one (pending) or reject it (canceled)
  fundsource review clear-screening CUSTOMER_ID --note TEXT [--json]
                                   clear a sanctions potential match; its held payments go on
  fundsource review attest --year YYYY --by NAME [--note TEXT] [--json]
                                   record the annual review of fraud monitoring
  fundsource sanctions status [--json]
                                   the SDN list OFAC_SDN_FILE and OFAC_ALT_FILE hold: entries, aliases, loaded_at, SHA-256
  fundsource ach originate [--json]
                                   build waiting production entries into a file and deliver it now
  fundsource ach import-returns FILE [--json]
                                   apply an ACH return file
  fundsource ach files [--json]    the files sent and received, with their status
  fundsource ach files show NAME [--raw | --json]
                                   one file sent; --raw prints the bytes the bank was sent
  fundsource ach reconcile FILE [--json]
                                   apply the bank's camt.053 statement
  fundsource ach reconciliation --date YYYY-MM-DD [--json]
                                   the statement's lines and the expected settlements, matched or not
  fundsource ach unmatched [--all] [--json]
                                   the bank's answers (returns, NOCs) that matched no single entry
  fundsource ach match ANSWER_ID PAYMENT_ID --note TEXT [--json]
                                   apply an unmatched answer to a payment's entry (audited)
  fundsource ach dismiss ANSWER_ID --note TEXT [--json]
                                   apply an unmatched answer to nothing
  fundsource provider-sim [--listen 127.0.0.1:8090] [--client ID:SECRET …] [--processor-client ID] [--plaid-sandbox-numbers]
                                   the bank-linking provider simulator (Plaid-shaped API)
  fundsource rail-sim [--listen 127.0.0.1:8091]
                                   the instant-rail simulator (ISO 20022 pacs.008 in, pacs.002 out)
  fundsource webhook-receiver --secret whsec_… [--listen 127.0.0.1:9000]
                                   a development endpoint that verifies and prints deliveries

Configuration comes from environment variables; see README.md. The load
bench and the resilience suite are in the second binary, fundsource-lab.
`

// IO is where a command reads its environment and writes its output.
type IO struct {
	Getenv func(string) string
	Stdout io.Writer // command results (JSON with --json)
	Stderr io.Writer // logs and messages
}

// Run executes one fundsource command. It returns ErrUsage (wrapped) for bad
// arguments after printing the usage.
func Run(ctx context.Context, args []string, io IO) error {
	if len(args) == 0 {
		fmt.Fprint(io.Stderr, usage)
		return fmt.Errorf("%w: no command", ErrUsage)
	}
	switch args[0] {
	case "serve":
		config.TuneGC()
		return withService(ctx, io, func(s *service) error { return s.Serve(ctx, s.dbURL) })
	case "migrate":
		asJSON, err := onlyJSONFlag(args[1:])
		if err != nil {
			fmt.Fprintf(io.Stderr, "fundsource migrate: %v\n\n%s", err, usage)
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return withService(ctx, io, func(*service) error {
			if asJSON {
				return json.NewEncoder(io.Stdout).Encode(map[string]bool{"migrated": true})
			}
			fmt.Fprintln(io.Stderr, "migrations applied")
			return nil
		})
	case "dev":
		config.TuneGC()
		return devrun.Run(ctx, devrun.IO(io))
	case "merchant":
		return runMerchant(ctx, args[1:], io)
	case "ach":
		return runACH(ctx, args[1:], io)
	case "originator":
		return runOriginator(ctx, args[1:], io)
	case "audit":
		return runAudit(ctx, args[1:], io)
	case "review":
		return runReview(ctx, args[1:], io)
	case "sanctions":
		return runSanctions(ctx, args[1:], io)
	case "provider-sim":
		return devrun.ProviderSim(ctx, args[1:], devrun.IO(io))
	case "rail-sim":
		return devrun.RailSim(ctx, args[1:], devrun.IO(io))
	case "webhook-receiver":
		return devrun.Receiver(ctx, args[1:], devrun.IO(io))
	case "help", "-h", "--help":
		fmt.Fprint(io.Stdout, usage)
		return nil
	}
	fmt.Fprint(io.Stderr, usage)
	return fmt.Errorf("%w: unknown command %q", ErrUsage, args[0])
}

// onlyJSONFlag parses the arguments of a command whose only flag is --json.
func onlyJSONFlag(args []string) (bool, error) {
	fs := flag.NewFlagSet("fundsource", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if fs.NArg() != 0 {
		return false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return *asJSON, nil
}

// service is the wired service of one command, with where the command
// reads and writes.
type service struct {
	*wiring.Services
	io    IO
	dbURL string
}

// withService loads the configuration, opens and migrates the database,
// builds the services and runs fn. In development without DATABASE_URL it
// uses the private cluster of 'make run', which must be running.
func withService(ctx context.Context, io IO, fn func(*service) error) error {
	cfg, err := config.Load(io.Getenv)
	if err != nil {
		return err
	}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		if dbURL, err = devrun.Cluster(cfg.DataDir).URL(); err != nil {
			return err
		}
	}
	return withDatabase(ctx, cfg, dbURL, io, fn)
}

func withDatabase(ctx context.Context, cfg *config.Config, dbURL string, io IO, fn func(*service) error) error {
	log, flush := wiring.NewLogger(io.Stderr)
	defer flush()
	svc, closeDB, err := wiring.Open(ctx, cfg, dbURL, log)
	if err != nil {
		return err
	}
	defer closeDB()
	return fn(&service{Services: svc, io: io, dbURL: dbURL})
}
