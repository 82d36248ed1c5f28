// Command fundsource is the funding-source service: API server, migrations,
// operator commands and the local development runner. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fundsource/fundsource/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := app.Run(ctx, os.Args[1:], app.IO{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr})
	switch {
	case err == nil:
	case errors.Is(err, app.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "fundsource:", err)
		os.Exit(1)
	}
}
