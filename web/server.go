// Package web is the HTTP face of the service: the Gin engine, middleware,
// the /v2 API handlers, operational endpoints, and the one error → status
// table. Handlers decode, call one domain service method, and encode.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/sessions"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hosted"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/internal/tenant"
	"github.com/fundsource/fundsource/internal/webhook"
)

// IdempotencyStore runs a POST at most once per key (postgres.DB).
type IdempotencyStore interface {
	Idempotent(ctx context.Context, scope tenant.Scope, key string, requestHash []byte, now time.Time,
		fn func(ctx context.Context) (postgres.Response, bool)) (*postgres.Response, error)
}

// Pinger checks that the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the HTTP layer needs.
type Deps struct {
	Config      *config.Config
	Logger      *slog.Logger
	Now         func() time.Time
	DB          Pinger
	Idempotency IdempotencyStore
	Merchants   *merchant.Service
	Customers   *customer.Service
	Funding     *funding.Service
	Webhooks    *webhook.Service
	Payments    *payment.Service
}

type server struct {
	cfg       *config.Config
	log       *slog.Logger
	now       func() time.Time
	db        Pinger
	idem      IdempotencyStore
	merchants *merchant.Service
	customers *customer.Service
	funding   *funding.Service
	webhooks  *webhook.Service
	payments  *payment.Service
	limiter   *limiter
	metrics   *metrics

	hosted        *hosted.Service
	hostedLimiter *pairLimiter
	crossOrigin   *http.CrossOriginProtection

	sessions      *sessions.CookieStore
	signInLimiter *pairLimiter
}

// New returns the Gin engine with every route and middleware.
func New(d Deps) *gin.Engine {
	s := &server{
		cfg: d.Config, log: d.Logger, now: d.Now, db: d.DB, idem: d.Idempotency,
		merchants: d.Merchants, customers: d.Customers, funding: d.Funding, webhooks: d.Webhooks, payments: d.Payments,
		limiter: newLimiter(d.Config.RateLimitSandbox, d.Config.RateLimitProduction),
		metrics: newMetrics(),

		hosted:        hosted.NewService(d.Merchants, d.Funding, d.Now),
		hostedLimiter: newPairLimiter(hostedWindow, d.Config.HostedSubmitsPerIP, d.Config.HostedSubmitsPerSource),
		crossOrigin:   http.NewCrossOriginProtection(),

		sessions:      newSessionStore(d.Config),
		signInLimiter: newPairLimiter(signInWindow, d.Config.SignInAttemptsPerIP, d.Config.SignInAttemptsPerEmail),
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// The client IP (hosted-page limits, logs) comes from X-Forwarded-For
	// only through the configured proxies; with none, from the peer.
	if err := r.SetTrustedProxies(d.Config.TrustedProxies); err != nil {
		panic(err) // config.Load checked every entry
	}
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	r.Use(s.withRequestID, s.observe, s.recoverPanic)
	r.NoRoute(s.notFound)
	r.NoMethod(func(c *gin.Context) {
		s.fail(c, errs.Newf(errs.MethodNotAllowed, "%s is not allowed on %s.", c.Request.Method, c.Request.URL.Path))
	})

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})))
	r.GET("/v2/openapi.json", s.openAPI)
	r.GET("/static/*filepath", s.staticFiles())
	s.hostedRoutes(r)
	s.dashboardRoutes(r)

	chain := []gin.HandlerFunc{s.authenticate, s.rateLimit, s.readBody, s.idempotency}
	// The spec names POST /webhooks without the /v2 prefix; both work.
	r.POST("/webhooks", append(chain, s.registerWebhook)...)
	api := r.Group("/v2", chain...)
	api.POST("/customers", s.createCustomer)
	api.GET("/customers", s.listCustomers)
	api.GET("/customers/:user_id", s.getCustomer)
	api.GET("/customers/:user_id/funding-sources", s.listCustomerSources)
	api.POST("/on-demand/funding-source", s.createOnDemand)
	api.POST("/funding-source", s.createForMicroDeposits)
	api.POST("/funding-source/processor/linking", s.linkProcessorToken)
	api.GET("/funding-source/:funding_source_id", s.getSource)
	api.POST("/funding-source/initiate/verification", s.initiateVerification)
	api.POST("/funding-source/verify", s.verifyMicroDeposits)
	api.POST("/accounts", s.checkAccount)
	api.POST("/accounts/delete", s.deleteAccount)
	api.GET("/sandbox/funding-source/:funding_source_id/micro-deposits", s.sandboxMicroDeposits)
	api.POST("/webhooks", s.registerWebhook)
	api.GET("/webhooks", s.getWebhook)
	api.DELETE("/webhooks", s.deleteWebhook)
	api.POST("/webhooks/secret/roll", s.rollWebhookSecret)
	api.POST("/webhooks/test", s.testWebhook)
	api.GET("/events", s.listEvents)
	api.GET("/events/:id", s.getEvent)
	api.POST("/events/:id/redeliver", s.redeliverEvent)
	api.POST("/payments", s.createPayment)
	api.GET("/payments", s.listPayments)
	api.GET("/payments/:id", s.getPayment)
	api.POST("/subscriptions", s.createSubscription)
	api.GET("/subscriptions", s.listSubscriptions)
	api.GET("/subscriptions/:id", s.getSubscription)
	api.POST("/subscriptions/:id/cancel", s.cancelSubscription)
	return r
}

// Server wraps the engine in an http.Server with timeouts.
func Server(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

func (s *server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		c.Header("Retry-After", "5")
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "database": "unreachable"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "database": "ok"})
}

// ServeUntil serves h on ln until ctx ends: the development helpers (the
// provider simulator, the webhook receiver) and the lab's receivers.
func ServeUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
