// Package api is the JSON API: /v2 (and the spec's unversioned
// /webhooks), with the operational endpoints /healthz, /readyz, /metrics
// and /v2/openapi.json. A request passes authentication, the per-key rate
// limit, the body reader and the idempotency record, then one handler that
// decodes, calls one domain service method and replies through surface.Reply.
package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/evidence"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/web/surface"
)

// OpenAPI is the OpenAPI 3 document of the API, served at /v2/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Services are the domain services a handler calls, all on one executor:
// the pool, or the transaction of an idempotent request.
type Services struct {
	Merchants *merchant.Service
	Customers *customer.Service
	Funding   *funding.Service
	Webhooks  *webhook.Service
	Payments  *payment.Service
	// Consequences are the requests whose effects cross domains (a
	// removal, a sandbox return).
	Consequences *consequence.Service
	// TestClocks are the sandbox's test clocks; nil: none (no request
	// looks for one).
	TestClocks *testclock.Service
}

// IdempotencyStore runs a POST at most once per key: it takes the claim on
// the key in a new transaction, runs fn on the services bound to that
// transaction, and stores fn's kept response in it.
type IdempotencyStore interface {
	Idempotent(ctx context.Context, req idempotency.Request, fn func(tx Services) (idempotency.Response, bool)) (*idempotency.Response, error)
	// Replace stores resp as the answer of req, committed already (a 5xx
	// forgets the key).
	Replace(ctx context.Context, req idempotency.Request, resp idempotency.Response) error
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
	// Services are on the pool: requests without an Idempotency-Key, and
	// authentication, use them.
	Services Services
	// Audit is the security log.
	Audit *audit.Service
	// Evidence gathers a disputed payment's evidence.
	Evidence *evidence.Service
	// Requests records each authenticated request for the dashboard's
	// request log; nil records nothing.
	Requests Recorder
	// Originators answer GET /v2/originator; nil answers 404.
	Originators *originator.Service
}

// Recorder takes the log entry of a request without waiting.
type Recorder interface {
	Record(requestlog.Entry)
}

// Surface is the API's handlers.
type Surface struct {
	*surface.Shared
	Deps
	limiter *surface.Limiter
	openAPI []byte // OpenAPI with this deployment's servers
}

// New returns the API on k.
func New(k *surface.Shared, d Deps) *Surface {
	return &Surface{Shared: k, Deps: d, limiter: surface.NewLimiter(d.Config.RateLimitSandbox, d.Config.RateLimitProduction),
		openAPI: withServers(OpenAPI, d.Config)}
}

// withServers is the document with the configured base addresses as its
// servers: the sandbox's, and the production one when it differs.
func withServers(doc []byte, cfg *config.Config) []byte {
	if cfg == nil || cfg.SandboxBaseURL == nil {
		return doc
	}
	var d map[string]json.RawMessage
	if json.Unmarshal(doc, &d) != nil {
		return doc
	}
	type server struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	sandbox, production := strings.TrimSuffix(cfg.SandboxBaseURL.String(), "/"), strings.TrimSuffix(cfg.ProductionBaseURL.String(), "/")
	servers := []server{{sandbox, "sandbox (sk_test_ keys)"}}
	if production != sandbox {
		servers = append(servers, server{production, "production (sk_live_ keys)"})
	} else {
		servers[0].Description = "sandbox and production (the key decides)"
	}
	d["servers"], _ = json.Marshal(servers)
	out, err := json.Marshal(d)
	if err != nil {
		return doc
	}
	return out
}

// Mount adds the API's routes to r.
func (s *Surface) Mount(r *gin.Engine) {
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	if s.Config.MetricsOnMainListener() {
		r.GET("/metrics", s.Metrics())
	}
	r.GET("/v2/openapi.json", s.serveOpenAPI)

	before := []gin.HandlerFunc{s.record, s.authenticate, s.rateLimit, s.knownQuery, s.ReadBody, s.onClock}
	// The two account-number creations take their Idempotency-Key
	// themselves (createSource); every other POST runs once per key (once).
	r.POST("/v2/on-demand/funding-source", append(before, s.createOnDemand)...)
	r.POST("/v2/funding-source", append(before, s.createForMicroDeposits)...)
	// The spec names POST /webhooks, /accounts and /accounts/delete without
	// the /v2 prefix; both spellings work.
	r.POST("/webhooks", append(before, s.once(s.registerWebhook))...)
	r.POST("/accounts", append(before, s.once(s.checkAccount))...)
	r.POST("/accounts/delete", append(before, s.once(s.deleteAccount))...)
	g := r.Group("/v2", before...)
	g.POST("/customers", s.once(s.createCustomer))
	g.GET("/customers", s.run(s.listCustomers))
	g.GET("/customers/:user_id", s.run(s.getCustomer))
	g.GET("/customers/:user_id/funding-sources", s.run(s.listCustomerSources))
	g.POST("/funding-source/processor/linking", onceAfter(s, s.askProvider, s.linkProcessorToken))
	g.GET("/funding-source/:funding_source_id", s.run(s.getSource))
	g.POST("/funding-source/initiate/verification", s.onceSend(s.initiateVerification))
	g.POST("/funding-source/verify", s.once(s.verifyMicroDeposits))
	g.POST("/accounts", s.once(s.checkAccount))
	g.POST("/accounts/delete", s.once(s.deleteAccount))
	sb := g.Group("/sandbox", s.sandboxOnly)
	sb.GET("/funding-source/:funding_source_id/micro-deposits", s.run(s.sandboxMicroDeposits))
	sb.POST("/funding-source/:funding_source_id/micro-deposits/return", s.once(s.simulateDepositReturn))
	sb.POST("/funding-source/:funding_source_id/micro-deposits/expire", s.once(s.simulateDepositExpiry))
	sb.POST("/funding-source/:funding_source_id/notification-of-change", s.once(s.simulateChange))
	sb.POST("/payments/:id/return", s.once(s.simulatePaymentReturn))
	sb.POST("/subscriptions/:id/advance", s.once(s.advanceSubscription))
	sb.POST("/test-clocks", s.once(s.createTestClock))
	sb.GET("/test-clocks", s.run(s.listTestClocks))
	sb.GET("/test-clocks/:id", s.run(s.getTestClock))
	sb.POST("/test-clocks/:id/advance", s.once(s.advanceTestClock))
	sb.DELETE("/test-clocks/:id", s.run(s.deleteTestClock))
	g.POST("/webhooks", s.once(s.registerWebhook))
	g.GET("/webhooks", s.run(s.getWebhook))
	g.DELETE("/webhooks", s.run(s.deleteWebhook))
	g.POST("/webhooks/secret/roll", s.once(s.rollWebhookSecret))
	g.POST("/webhooks/test", s.once(s.testWebhook))
	g.POST("/webhooks/enable", s.once(s.enableWebhook))
	g.GET("/events", s.run(s.listEvents))
	g.GET("/events/:id", s.run(s.getEvent))
	g.POST("/events/:id/redeliver", s.once(s.redeliverEvent))
	g.POST("/payments", s.onceSend(s.createPayment))
	g.GET("/payments", s.run(s.listPayments))
	g.GET("/payments/:id", s.run(s.getPayment))
	g.GET("/payments/:id/evidence", s.run(s.paymentEvidence))
	g.GET("/balances", s.clockQuery, s.run(s.balances))
	g.POST("/payments/:id/cancel", s.once(s.cancelPayment))
	g.POST("/payments/:id/retry", s.once(s.retryPayment))
	g.POST("/payments/:id/reverse", s.once(s.reversePayment))
	g.POST("/payments/:id/refund", s.onceSend(s.refundPayment))
	g.POST("/payments/:id", s.once(s.updatePayment))
	g.GET("/balance-transactions", s.clockQuery, s.run(s.listBalanceTransactions))
	g.GET("/reports/settlements", s.clockQuery, s.run(s.settlementsReport))
	g.POST("/customers/:user_id", s.once(s.updateCustomer))
	g.POST("/funding-source/:funding_source_id", s.once(s.updateSource))
	g.POST("/funding-source/:funding_source_id/unblock", s.once(s.unblockSource))
	g.POST("/subscriptions", s.once(s.createSubscription))
	g.GET("/subscriptions", s.run(s.listSubscriptions))
	g.GET("/subscriptions/:id", s.run(s.getSubscription))
	g.POST("/subscriptions/:id/cancel", s.once(s.cancelSubscription))
	g.POST("/subscriptions/:id", s.once(s.updateSubscription))
	g.GET("/mandates", s.run(s.listMandates))
	g.GET("/mandates/:id", s.run(s.getMandate))
	g.POST("/mandates/:id/revoke", s.once(s.revokeMandate))
	g.GET("/compliance/return-rates", s.run(s.returnRates))
	g.GET("/compliance/monitoring", s.run(s.monitoring))
	g.GET("/audit-events", s.run(s.listAuditEvents))
	g.GET("/originator", s.run(s.getOriginator))
}

// record hands the request's method, path, status and latency to the
// request log once it is answered; requests that did not authenticate
// belong to no merchant and are not recorded.
func (s *Surface) record(c *gin.Context) {
	if s.Requests == nil {
		c.Next()
		return
	}
	at, start := s.Now(), time.Now()
	c.Next()
	scope, ok := surface.Authenticated(c)
	if !ok {
		return
	}
	s.Requests.Record(requestlog.Entry{Scope: scope, RequestID: surface.RequestID(c), At: at.UTC(),
		Method: c.Request.Method, Path: c.Request.URL.Path, Status: c.Writer.Status(), Latency: time.Since(start)})
}

// queryParams are the query parameters of the API routes that take any;
// every other route takes none.
var queryParams = map[string][]string{
	"GET /v2/customers":                          {"limit", "starting_after"},
	"GET /v2/customers/:user_id/funding-sources": {"limit", "starting_after", "removed"},
	"GET /v2/events":                             {"limit", "starting_after", "type"},
	"GET /v2/payments":                           {"limit", "starting_after", "funding_source_id", "rail", "method", "metadata[]"},
	"GET /v2/balances":                           {"test_clock"},
	"GET /v2/balance-transactions":               {"limit", "starting_after", "test_clock"},
	"GET /v2/reports/settlements":                {"date", "test_clock"},
	"GET /v2/subscriptions":                      {"limit", "starting_after", "funding_source_id"},
	"GET /v2/mandates":                           {"limit", "starting_after", "funding_source_id"},
	"GET /v2/audit-events":                       {"limit", "starting_after"},
	"GET /v2/sandbox/test-clocks":                {"limit", "starting_after"},
}

// knownQuery refuses a query parameter the route does not take, as an
// unknown JSON field is refused: a misspelt filter must not silently
// return everything.
func (s *Surface) knownQuery(c *gin.Context) {
	if c.Request.URL.RawQuery == "" { // most requests: nothing to parse
		c.Next()
		return
	}
	allowed := queryParams[c.Request.Method+" "+c.FullPath()]
	for _, name := range slices.Sorted(maps.Keys(c.Request.URL.Query())) {
		// "metadata[]" allows every metadata[KEY].
		if !slices.Contains(allowed, name) && !(metadataKey(name) && slices.Contains(allowed, "metadata[]")) {
			s.Fail(c, errs.Invalid(name, fmt.Sprintf("Unknown query parameter %q.", name)))
			return
		}
	}
	c.Next()
}

// metadataKey reports whether a query parameter is metadata[KEY].
func metadataKey(name string) bool {
	return strings.HasPrefix(name, "metadata[") && strings.HasSuffix(name, "]") && len(name) > len("metadata[]")
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

func (s *Surface) serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", s.openAPI)
}
