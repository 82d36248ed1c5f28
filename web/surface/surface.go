// Package surface is what the three surfaces of the service (web/api,
// web/dashboard, web/hosted) share: request ids, the access log and
// metrics, panic recovery, the one error path, security headers and page
// rendering, cross-origin protection, rate limiting and strict JSON.
package surface

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
)

// Shared carries what the shared pieces need.
type Shared struct {
	Log        *slog.Logger
	Now        func() time.Time
	Production bool // production mode: HSTS on pages

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

// Scope is the merchant and environment of an API request.
func Scope(c *gin.Context) tenant.Scope { return Principal(c).Scope }
