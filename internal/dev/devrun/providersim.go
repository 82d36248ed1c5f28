package devrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/dev/providersim"
	"github.com/fundsource/fundsource/web"
)

const providerSimUsage = `Usage:
  fundsource provider-sim [--listen 127.0.0.1:8090] [--client ID:SECRET …] [--processor-client ID] [--plaid-sandbox-numbers]

--plaid-sandbox-numbers gives every Item Plaid's fixed sandbox account and
routing numbers, as Plaid's own sandbox does (two customers linking "Plaid
Checking" then hold the same account). Without --client, the development clients are accepted: demo-merchant:demo-merchant-secret
(a merchant) and fundsource-service:fundsource-service-secret (the processor "service").
`

// clientFlags collects repeated --client ID:SECRET flags.
type clientFlags map[string]string

func (c clientFlags) String() string { return fmt.Sprint(len(c), " clients") }

func (c clientFlags) Set(v string) error {
	id, secret, ok := strings.Cut(v, ":")
	if !ok || id == "" || secret == "" {
		return errors.New("want ID:SECRET")
	}
	c[id] = secret
	return nil
}

// devSimConfig is the simulator of 'make run': the service's client from the
// configuration and the demo merchant's.
func devSimConfig(cfg *config.Config) providersim.Config {
	return providersim.Config{
		Clients: map[string]string{
			cfg.PlaidClientID:          cfg.PlaidSecret,
			config.SimMerchantClientID: config.SimMerchantSecret,
		},
		ProcessorClientID: cfg.PlaidClientID,
	}
}

// ProviderSim is 'fundsource provider-sim': the bank-linking provider
// simulator on a port of its own.
func ProviderSim(ctx context.Context, args []string, io IO) error {
	fs := flag.NewFlagSet("fundsource provider-sim", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	listen := fs.String("listen", "127.0.0.1:8090", "address to listen on")
	clients := clientFlags{}
	fs.Var(clients, "client", "a client as ID:SECRET (repeatable)")
	processor := fs.String("processor-client", config.SimServiceClientID, "the client id of the processor \"service\"")
	sandboxNumbers := fs.Bool("plaid-sandbox-numbers", false, "give every Item Plaid's fixed sandbox numbers")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprint(io.Stderr, providerSimUsage)
		return fmt.Errorf("%w: bad provider-sim arguments", ErrUsage)
	}
	if len(clients) == 0 {
		clients[config.SimServiceClientID] = config.SimServiceSecret
		clients[config.SimMerchantClientID] = config.SimMerchantSecret
	}
	if _, ok := clients[*processor]; !ok {
		fmt.Fprint(io.Stderr, providerSimUsage)
		return fmt.Errorf("%w: --processor-client %q is not one of the clients", ErrUsage, *processor)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(io.Stderr, "provider simulator on http://%s/\n", ln.Addr())
	return serveSim(ctx, ln, providersim.Config{Clients: clients, ProcessorClientID: *processor, SandboxNumbers: *sandboxNumbers})
}

// serveSim serves the simulator on ln until ctx ends.
func serveSim(ctx context.Context, ln net.Listener, cfg providersim.Config) error {
	return web.ServeUntil(ctx, ln, providersim.New(cfg).Handler())
}
