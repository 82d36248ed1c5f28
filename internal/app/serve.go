package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/fundsource/fundsource/web"
)

// handler builds the HTTP handler of the service.
func (e *env) handler() http.Handler {
	return web.New(web.Deps{
		Config:      e.cfg,
		Logger:      e.log,
		Now:         e.now,
		DB:          e.db,
		Idempotency: e.db,
		Merchants:   e.merchants,
		Customers:   e.customers,
	})
}

// serve listens on LISTEN_ADDR until ctx ends, then shuts down gracefully:
// in-flight requests get up to 20 s, background jobs stop.
func (e *env) serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", e.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", e.cfg.ListenAddr, err)
	}
	return e.serveOn(ctx, ln)
}

func (e *env) serveOn(ctx context.Context, ln net.Listener) error {
	srv := web.Server(ln.Addr().String(), e.handler())
	jobs, stopJobs := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.runJobs(jobs) }()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	e.log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("mode", string(e.cfg.Mode)))

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
		e.log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		serveErr = srv.Shutdown(sctx)
		cancel()
	}
	stopJobs()
	<-done
	if errors.Is(serveErr, http.ErrServerClosed) {
		return nil
	}
	return serveErr
}

// runJobs runs the periodic maintenance of this process until ctx ends.
func (e *env) runJobs(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := e.db.DeleteExpiredIdempotencyKeys(ctx, e.now())
		if err != nil && ctx.Err() == nil {
			e.log.Warn("idempotency sweep failed", slog.Any("error", err))
		} else if n > 0 {
			e.log.Info("idempotency sweep", slog.Int64("deleted", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
