package wiring

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

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/web"
)

// Serve listens on LISTEN_ADDR until ctx ends, then shuts down gracefully:
// in-flight requests get up to 20 s, background jobs stop. dbURL is the
// database the services were opened on: the key cache's subscription and
// the dispatcher's wake-ups listen there. 'serve' and 'dev' both run it, so
// what 'make run' serves is what production serves.
func (s *Services) Serve(ctx context.Context, dbURL string) error {
	ln, err := net.Listen("tcp", s.Config.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Config.ListenAddr, err)
	}
	return s.serveOn(ctx, ln, dbURL)
}

func (s *Services) serveOn(ctx context.Context, ln net.Listener, dbURL string) error {
	jobs, stopJobs := context.WithCancel(context.Background())
	defer stopJobs()
	if s.Config.APIKeyCacheTTL > 0 {
		cache := merchant.NewKeyCache(s.Config.APIKeyCacheTTL, s.Now)
		sub := postgres.Subscribe(jobs, dbURL, postgres.KeyChannel, s.Log, cache.Clear)
		cache.Live(sub.Connected)
		s.Merchants.UseKeyCache(cache)
	}
	capped := web.CapConnections(ln, s.Config.MaxConnections)
	s.Metrics.GaugeFunc("fundsource_http_connections_open", "Connections the main listener holds open.", capped.Open)
	s.Metrics.CounterFunc("fundsource_http_connections_refused_total",
		"Connections closed at accept, over MAX_CONNECTIONS.", capped.Refused)
	ln = capped
	srv := web.Server(ln.Addr().String(), s.Handler())
	done := make(chan struct{})
	go func() { defer close(done); s.runJobs(jobs, dbURL) }()

	// The operator's listeners first: once the service answers, they do.
	if s.Config.PprofAddr != "" {
		stop := s.serveAside("profiler", s.Config.PprofAddr, profiler())
		defer stop()
	}
	if s.Config.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.Metrics.Handler())
		stop := s.serveAside("metrics", s.Config.MetricsAddr, mux)
		defer stop()
	} else if s.Config.Mode == config.Production {
		s.Log.Warn("/metrics is not served: set METRICS_ADDR to a private address to serve it")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.Log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("mode", string(s.Config.Mode)))

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
		s.Log.Info("shutting down")
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

// profiler is net/http/pprof's handlers on a mux of their own.
func profiler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// serveAside serves an operator's handler (the profiler, the metrics) on
// a listener of its own, never the service's, and returns how to stop it.
// It binds before it returns, so the listener is there by the time the
// service's own answers (serveOn starts it after these).
func (s *Services) serveAside(name, addr string, h http.Handler) func() {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Log.Warn(name+" stopped", slog.Any("error", err))
		return func() {}
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Log.Warn(name+" stopped", slog.Any("error", err))
		}
	}()
	s.Log.Info(name+" listening", slog.String("addr", addr))
	return func() { _ = srv.Close() }
}

// runJobs runs the background work of this process until ctx ends:
// delivering webhooks (woken by PostgreSQL notifications, polling besides),
// expiring micro-deposit verifications every minute, running the sandbox
// test clocks' advances (checked every second), reloading the SDN
// list when its files changed (checked every minute), building ACH files
// at their windows (checked every minute), writing the API
// request log, sweeping idempotency keys, events and logged requests past
// their retention every hour. Every process runs them;
// rows are claimed with SKIP LOCKED or deleted idempotently, so processes
// never do the same work twice. It returns when the deliveries in flight
// have been recorded.
func (s *Services) runJobs(ctx context.Context, dbURL string) {
	var wg sync.WaitGroup
	wg.Go(func() {
		s.Dispatcher(webhook.DispatcherOptions{}).Run(ctx, postgres.Listen(ctx, dbURL, postgres.DeliveryChannel, s.Log))
	})
	wg.Go(func() {
		s.every(ctx, time.Hour, "event retention", s.Webhooks.PurgeEvents)
	})
	wg.Go(func() { s.Requests.Run(ctx) })
	wg.Go(func() {
		cp := s.Audit.Checkpointer(s.Config.AuditCheckpointFile, s.Now)
		s.every(ctx, audit.CheckpointInterval, "audit checkpoints", counted(cp.Write))
		// The heads of the last minute, before the process ends.
		if _, err := cp.Write(context.WithoutCancel(ctx)); err != nil {
			s.Log.Warn("audit checkpoints failed", slog.Any("error", err))
		}
	})
	wg.Go(func() {
		s.every(ctx, time.Hour, "API request log retention", s.Requests.Purge)
	})
	wg.Go(func() {
		limits := merchant.SessionLimits{IdleTimeout: s.Config.DashboardIdleTimeout, MaxAge: s.Config.DashboardSessionMaxAge}
		s.every(ctx, time.Hour, "dashboard session sweep", func(ctx context.Context) (int64, error) {
			return s.Merchants.PurgeSessions(ctx, limits)
		})
	})
	wg.Go(func() {
		s.every(ctx, time.Minute, "micro-deposit expiry", counted(s.Funding.ExpireDue))
	})
	wg.Go(func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		s.Sanctions.Watch(ctx, t.C, s.reportSanctions)
	})
	wg.Go(func() {
		s.every(ctx, time.Second, "sandbox payment settlement", counted(s.Consequences.SettleDue))
	})
	wg.Go(func() {
		s.every(ctx, time.Minute, "subscription debits", counted(s.Payments.RunDue))
	})
	wg.Go(func() {
		// Instant credits without an answer are asked again, and released
		// ones sent, each under its lease (consequence.ResolveInstant).
		s.every(ctx, time.Second, "instant credit status", counted(s.Consequences.ResolveInstant))
	})
	wg.Go(func() {
		// A test clock's advance runs to its target in one claim; a
		// process that stops mid-way leaves it to the next claim
		// (advance.Runner).
		s.every(ctx, time.Second, "test clock advances", counted(s.Advances.RunDue))
	})
	if s.Originator != nil {
		wg.Go(func() {
			// Each minute asks whether a window is due; a window is built
			// once across processes (ach.Originator.RunWindow).
			s.every(ctx, time.Minute, "ACH origination", func(ctx context.Context) (int64, error) {
				files, err := s.Originator.Tick(ctx)
				return int64(len(files)), err
			})
		})
		// The bank's answers: returns, notifications of change, statements.
		wg.Go(func() {
			s.every(ctx, time.Minute, "ACH inbound files", counted(s.Originator.Poll))
		})
	} else if s.Config.Mode == config.Production {
		s.Log.Warn("ACH origination is off: set ACH_ODFI_ROUTING and the other ACH_ variables to send production micro-deposits and payments")
	}
	s.every(ctx, time.Hour, "idempotency sweep", func(ctx context.Context) (int64, error) {
		return s.DB.DeleteExpiredIdempotencyKeys(ctx, s.Now())
	})
	wg.Wait()
}

// reportSanctions logs what a reload of the SDN list did.
func (s *Services) reportSanctions(changed bool, err error) {
	switch {
	case err != nil:
		s.Log.Warn("sanctions list reload refused; the list in use stays", slog.Any("error", err))
	case changed:
		st := s.Sanctions.Status()
		s.Log.Info("sanctions list reloaded", slog.Int("entries", st.Entries), slog.Int("aliases", st.Aliases),
			slog.String("sdn_sha256", st.SDNSHA256))
	}
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
func (s *Services) every(ctx context.Context, interval time.Duration, name string, job func(context.Context) (int64, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := job(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn(name+" failed", slog.Any("error", err))
		} else if n > 0 {
			s.Log.Info(name, slog.Int64("count", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
