// Package api is the JSON API: /v2 (and the spec's unversioned
// /webhooks), with the operational endpoints /healthz, /readyz, /metrics
// and /v2/openapi.json. A request passes authentication, the per-key rate
// limit, the body reader and the idempotency record, then one handler that
// decodes, calls one domain service method and replies through kit.Reply.
package api

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/idempotency"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/tenant"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/web/kit"
)

// OpenAPI is the OpenAPI 3 document of the API, served at /v2/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// IdempotencyStore runs a POST at most once per key (postgres.DB).
type IdempotencyStore interface {
	Idempotent(ctx context.Context, scope tenant.Scope, key string, requestHash []byte, now time.Time,
		fn func(ctx context.Context) (idempotency.Response, bool)) (*idempotency.Response, error)
}

// Pinger checks that the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the API needs.
type Deps struct {
	Config      *config.Config
	DB          Pinger
	Idempotency IdempotencyStore
	Merchants   *merchant.Service
	Customers   *customer.Service
	Funding     *funding.Service
	Webhooks    *webhook.Service
	Payments    *payment.Service
}

// Surface is the API's handlers.
type Surface struct {
	*kit.Kit
	Deps
	limiter *kit.Limiter
}

// New returns the API on k.
func New(k *kit.Kit, d Deps) *Surface {
	return &Surface{Kit: k, Deps: d, limiter: kit.NewLimiter(d.Config.RateLimitSandbox, d.Config.RateLimitProduction)}
}

// Mount adds the API's routes to r.
func (s *Surface) Mount(r *gin.Engine) {
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	if s.Config.MetricsOnMainListener() {
		r.GET("/metrics", s.Metrics())
	}
	r.GET("/v2/openapi.json", s.openAPI)

	chain := []gin.HandlerFunc{s.authenticate, s.rateLimit, s.ReadBody, s.idempotency}
	// The spec names POST /webhooks without the /v2 prefix; both work.
	r.POST("/webhooks", append(chain, s.registerWebhook)...)
	g := r.Group("/v2", chain...)
	g.POST("/customers", s.createCustomer)
	g.GET("/customers", s.listCustomers)
	g.GET("/customers/:user_id", s.getCustomer)
	g.GET("/customers/:user_id/funding-sources", s.listCustomerSources)
	g.POST("/on-demand/funding-source", s.createOnDemand)
	g.POST("/funding-source", s.createForMicroDeposits)
	g.POST("/funding-source/processor/linking", s.linkProcessorToken)
	g.GET("/funding-source/:funding_source_id", s.getSource)
	g.POST("/funding-source/initiate/verification", s.initiateVerification)
	g.POST("/funding-source/verify", s.verifyMicroDeposits)
	g.POST("/accounts", s.checkAccount)
	g.POST("/accounts/delete", s.deleteAccount)
	g.GET("/sandbox/funding-source/:funding_source_id/micro-deposits", s.sandboxMicroDeposits)
	g.POST("/webhooks", s.registerWebhook)
	g.GET("/webhooks", s.getWebhook)
	g.DELETE("/webhooks", s.deleteWebhook)
	g.POST("/webhooks/secret/roll", s.rollWebhookSecret)
	g.POST("/webhooks/test", s.testWebhook)
	g.POST("/webhooks/enable", s.enableWebhook)
	g.GET("/events", s.listEvents)
	g.GET("/events/:id", s.getEvent)
	g.POST("/events/:id/redeliver", s.redeliverEvent)
	g.POST("/payments", s.createPayment)
	g.GET("/payments", s.listPayments)
	g.GET("/payments/:id", s.getPayment)
	g.POST("/subscriptions", s.createSubscription)
	g.GET("/subscriptions", s.listSubscriptions)
	g.GET("/subscriptions/:id", s.getSubscription)
	g.POST("/subscriptions/:id/cancel", s.cancelSubscription)
}

func (s *Surface) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *Surface) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	if err := s.DB.Ping(ctx); err != nil {
		c.Header("Retry-After", "5")
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "database": "unreachable"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "database": "ok"})
}

func (s *Surface) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", OpenAPI)
}
