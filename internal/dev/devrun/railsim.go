package devrun

import (
	"context"
	"flag"
	"fmt"
	"net"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/web"
)

const railSimUsage = `Usage:
  fundsource rail-sim [--listen 127.0.0.1:8091] [--control-token TOKEN]

Answers pacs.008 credits POSTed to / with pacs.002 reports. Account numbers
9900000003, 9900000004 and 9900000006 are rejected with AC03, AC04 and AC06;
9900000099 gets no answer; any other is accepted. With --control-token,
POST /sim/down and /sim/up take the rail down and back and GET /sim/credits
lists what arrived, for requests with "Authorization: Bearer TOKEN";
without it (or without the header) they are 404.
`

// RailSim is 'fundsource rail-sim': the instant-rail simulator on a port
// of its own.
func RailSim(ctx context.Context, args []string, io IO) error {
	fs := flag.NewFlagSet("fundsource rail-sim", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	listen := fs.String("listen", "127.0.0.1:8091", "address to listen on")
	token := fs.String("control-token", "", "bearer token of the /sim/ routes (none: they are off)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprint(io.Stderr, railSimUsage)
		return fmt.Errorf("%w: bad rail-sim arguments", ErrUsage)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(io.Stderr, "rail simulator on http://%s/\n", ln.Addr())
	return serveRailSim(ctx, ln, railsim.New().WithControlToken(*token))
}

// serveRailSim serves sim on ln until ctx ends.
func serveRailSim(ctx context.Context, ln net.Listener, sim *railsim.Sim) error {
	return web.ServeUntil(ctx, ln, sim.Handler())
}
