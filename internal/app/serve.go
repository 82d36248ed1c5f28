package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/internal/webhook"
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
		Funding:     e.funding,
		Webhooks:    e.webhooks,
		Payments:    e.payments,
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
	jobs, stopJobs := context.WithCancel(context.Background())
	defer stopJobs()
	if e.cfg.APIKeyCacheTTL > 0 {
		cache := merchant.NewKeyCache(e.cfg.APIKeyCacheTTL, e.now)
		sub := postgres.Subscribe(jobs, e.dbURL, postgres.KeyChannel, e.log, cache.Clear)
		cache.Live(sub.Connected)
		e.merchants.UseKeyCache(cache)
	}
	srv := web.Server(ln.Addr().String(), e.handler())
	done := make(chan struct{})
	go func() { defer close(done); e.runJobs(jobs) }()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if e.cfg.PprofAddr != "" {
		stopProfiler := e.serveProfiler()
		defer stopProfiler()
	}
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

// serveProfiler serves net/http/pprof on PPROF_ADDR (its own listener and
// mux, never the service's) and returns how to stop it.
func (e *env) serveProfiler() func() {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: e.cfg.PprofAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Warn("profiler stopped", slog.Any("error", err))
		}
	}()
	e.log.Info("profiler listening", slog.String("addr", e.cfg.PprofAddr))
	return func() { _ = srv.Close() }
}

// dispatcher returns the webhook dispatcher of this process.
func (e *env) dispatcher() *webhook.Dispatcher {
	return webhook.NewDispatcher(e.db, e.vault, webhook.NewClient(e.cfg.WebhookAllowPrivateTargets), e.now,
		webhook.DispatcherOptions{Workers: e.cfg.WebhookWorkers, PerEndpoint: e.cfg.WebhookPerEndpoint, Poll: e.cfg.WebhookPollInterval, Logger: e.log})
}

// runJobs runs the background work of this process until ctx ends:
// delivering webhooks (woken by PostgreSQL notifications, polling besides),
// expiring micro-deposit verifications every minute, sweeping idempotency
// keys and events past their retention every hour. Every process runs them;
// rows are claimed with SKIP LOCKED or deleted idempotently, so processes
// never do the same work twice. It returns when the deliveries in flight
// have been recorded.
func (e *env) runJobs(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		e.dispatcher().Run(ctx, postgres.Listen(ctx, e.dbURL, postgres.DeliveryChannel, e.log))
	})
	wg.Go(func() {
		e.every(ctx, time.Hour, "event retention", e.webhooks.PurgeEvents)
	})
	wg.Go(func() {
		e.every(ctx, time.Minute, "micro-deposit expiry", counted(e.funding.ExpireDue))
	})
	wg.Go(func() {
		e.every(ctx, time.Second, "sandbox payment settlement", counted(e.payments.SettleDue))
	})
	wg.Go(func() {
		e.every(ctx, time.Minute, "subscription debits", counted(e.payments.RunDue))
	})
	if e.originator != nil {
		wg.Go(func() {
			e.every(ctx, time.Minute, "ACH origination", func(ctx context.Context) (int64, error) {
				files, err := e.originator.Run(ctx)
				return int64(len(files)), err
			})
		})
	} else if e.cfg.Mode == config.Production {
		e.log.Warn("ACH origination is off: set ACH_ODFI_ROUTING and the other ACH_ variables to send production micro-deposits and payments")
	}
	e.every(ctx, time.Hour, "idempotency sweep", func(ctx context.Context) (int64, error) {
		return e.db.DeleteExpiredIdempotencyKeys(ctx, e.now())
	})
	wg.Wait()
}

// counted adapts a job that counts in int.
func counted(job func(context.Context) (int, error)) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		n, err := job(ctx)
		return int64(n), err
	}
}

// every runs job now and then every interval until ctx ends, logging what
// it did and its failures.
func (e *env) every(ctx context.Context, interval time.Duration, name string, job func(context.Context) (int64, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := job(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Warn(name+" failed", slog.Any("error", err))
		} else if n > 0 {
			e.log.Info(name, slog.Int64("count", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
