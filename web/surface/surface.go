// Package surface is what the three surfaces of the service (web/api,
// web/dashboard, web/hosted) share: request ids, the access log and
// metrics, panic recovery, the one error path, security headers and page
// rendering, cross-origin protection, rate limiting and strict JSON.
//
// Classify is the one function that turns any error into what an answer
// needs: status, code, message, Retry-After (5 s for a 503; the wait,
// rounded up to whole seconds, for a 429) and log level (internal errors
// at error level with the request id, other 5xx at warning, 4xx only in
// the access log). The surfaces only render that outcome: the API as the
// JSON envelope, the dashboard and the hosted page as their error pages.
//
// Rate limiting is a token bucket per key in each process
// (golang.org/x/time/rate, time injected so tests do not sleep). With N
// processes behind a load balancer a key can get up to N times its rate; a
// shared limiter would cost a database round trip on every request.
// Per-IP limits count an IPv6 client by its /64 (ClientNetwork).
//
// Slow bodies: a request's body must arrive within BodyReadTimeout of its
// headers, far below the server's 30 s ReadTimeout, and an answer sent
// before the body is read (no key, a limit, a 404) goes out at once and
// closes the connection (GuardBody). The API authenticates and applies the
// key's limit before it reads a body, so a client without a key holds a
// connection for no longer than its headers take.
//
// Strict JSON: DisallowUnknownFields, exactly one value, a 64 KiB cap, each
// key once and exactly as its field is named (no duplicate keys, no
// case-folded matches, at any depth), and text that is not valid UTF-8 or
// holds NUL refused as invalid_request.
//
// In production mode every answer carries Strict-Transport-Security.
//
// Pages are rendered into a buffer before anything is written, so a render
// error still becomes a proper 500 page, and carry a CSP without inline
// script or style, nosniff, no-referrer and no-store. Cross-site form posts
// are refused by Go's http.CrossOriginProtection: no token plumbing.
package surface

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
)

// Shared carries what the shared pieces need.
type Shared struct {
	Log        *slog.Logger
	Now        func() time.Time
	Production bool // production mode: HSTS on every answer

	metrics     *Metrics
	crossOrigin *http.CrossOriginProtection
}

// New returns a Shared recording into m (a registry of its own when nil).
func New(log *slog.Logger, now func() time.Time, production bool, m *Metrics) *Shared {
	if m == nil {
		m = NewMetrics()
	}
	return &Shared{Log: log, Now: now, Production: production, metrics: m, crossOrigin: http.NewCrossOriginProtection()}
}

// Keys of values kept on the gin context.
const (
	ctxRequestID = "fundsource.request_id"
	ctxPrincipal = "fundsource.principal"
	ctxBody      = "fundsource.body"
	ctxErrorCode = "fundsource.error_code"
)

// RequestID is the request's req_ id.
func RequestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// SetPrincipal records the authenticated merchant and environment of an
// API request (the access log names them).
func SetPrincipal(c *gin.Context, p merchant.Principal) { c.Set(ctxPrincipal, p) }

// Principal is the authenticated merchant and environment of an API request.
func Principal(c *gin.Context) merchant.Principal {
	p, _ := c.Get(ctxPrincipal)
	return p.(merchant.Principal)
}

// Actor is who makes an API request, for the audit log: its key, from the
// client's address.
func Actor(c *gin.Context) audit.Actor { return audit.APIKey(Principal(c).KeyID, c.ClientIP()) }

// Scope is the merchant and environment of an API request.
func Scope(c *gin.Context) tenant.Scope { return Principal(c).Scope }

// Authenticated is the merchant and environment of a request, and whether
// it was authenticated.
func Authenticated(c *gin.Context) (tenant.Scope, bool) {
	p, ok := c.Get(ctxPrincipal)
	if !ok {
		return tenant.Scope{}, false
	}
	return p.(merchant.Principal).Scope, true
}
