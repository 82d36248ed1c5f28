// Command fundsource-lab holds the tools that measure and break the
// service: the load bench (`make bench`), the resilience suite and the
// upgrade check (`make chaos`), which run the fundsource binary beside them
// as the server under test; and a local ACH network (achnet) for tests and
// demos. Kept apart so that the product's binary links none of them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/lab/achnet"
	"github.com/fundsource/fundsource/internal/lab/bench"
	"github.com/fundsource/fundsource/internal/lab/chaos"
	"github.com/fundsource/fundsource/internal/lab/formation"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/lab/upgrade"
)

const usage = `fundsource-lab: measure and break fundsource on this machine

Usage:
  fundsource-lab bench [--duration 5s] [--workers 32] [--runs 3] [--statements N] [--out bench/results.json] [--server BIN]
        measure the service against PostgreSQL's own limits (make bench);
        each load runs --runs times, the targets judged on the median run
  fundsource-lab bench --baseline REV [--rounds 3] [--duration 5s] [--workers 32] [--server BIN]
        creation and GET of this tree's server ÷ REV's (built from git), the
        two alternating on one PostgreSQL (make bench BASELINE=REV)
  fundsource-lab chaos [--duration 3s] [--server BIN] [--failover-only]
        kill -9, PostgreSQL restart, receiver down, three servers:
        count every creation and event, fail on any loss (make chaos);
        then failover and switchover on a pg_auto_failover formation
  fundsource-lab upgrade [--server BIN] [--repo DIR]
        build the commit before the newest migration and run its
        walkthrough on the newest schema: while the new binary migrates,
        after, and beside the new binary (make chaos)
  fundsource-lab formation [-v]
        a pg_auto_failover monitor and two synchronous nodes on loopback,
        until Ctrl-C; prints the DATABASE_URL to use
  fundsource-lab achnet --inbox DIR [--outbox DIR] [--rules FILE] [--date D] [--watch 5s]
        a local ACH network: answers the outbox's entries by rules on the
        account number with return and NOC files for 'fundsource ach
        import-returns' (fundsource-lab achnet --help)

bench and chaos run the fundsource binary beside this one (or --server) as
the server, on a durable private PostgreSQL in a temporary folder. (The bench
also runs 'fundsource-lab bare', the least server that answers a GET or a
creation, as a floor.)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], rig.IO{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr})
	switch {
	case err == nil:
	case errors.Is(err, rig.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "fundsource-lab:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdio rig.IO) error {
	if len(args) == 0 {
		fmt.Fprint(stdio.Stderr, usage)
		return fmt.Errorf("%w: no command", rig.ErrUsage)
	}
	switch args[0] {
	case "bench":
		config.TuneGC() // the load generator and the direct path run here: the same collector as the server's
		return bench.Run(ctx, args[1:], stdio)
	case "chaos":
		return chaos.Run(ctx, args[1:], stdio)
	case "upgrade":
		return upgrade.Run(ctx, args[1:], stdio)
	case "formation":
		return formation.Run(ctx, args[1:], stdio)
	case "achnet":
		return achnet.Run(ctx, args[1:], stdio)
	case "bare":
		config.TuneGC() // as the server's
		return bench.ServeBare(ctx, args[1:], stdio)
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Stdout, usage)
		return nil
	}
	fmt.Fprint(stdio.Stderr, usage)
	return fmt.Errorf("%w: unknown command %q", rig.ErrUsage, args[0])
}
