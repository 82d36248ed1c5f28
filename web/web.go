// Package web is the HTTP face of the service. New mounts its three
// surfaces on one Gin engine behind the shared middleware of web/surface:
//
//   - web/api: the JSON /v2 API, /webhooks and the operational endpoints;
//   - web/dashboard: the merchant dashboard;
//   - web/hosted: the hosted verification page.
//
// Each surface owns only its handlers and view glue; every error reaches
// the client through web/surface's one error path.
package web

import (
	"cmp"
	"context"
	"errors"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/evidence"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/overview"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/static"
	"github.com/fundsource/fundsource/templates/components"
	"github.com/fundsource/fundsource/web/api"
	"github.com/fundsource/fundsource/web/dashboard"
	"github.com/fundsource/fundsource/web/hosted"
	"github.com/fundsource/fundsource/web/surface"
)

// Deps are what the HTTP layer needs.
type Deps struct {
	Config      *config.Config
	Logger      *slog.Logger
	Now         func() time.Time
	DB          api.Pinger
	Idempotency api.IdempotencyStore
	Merchants   *merchant.Service
	Customers   *customer.Service
	Funding     *funding.Service
	Webhooks    *webhook.Service
	Payments    *payment.Service
	// Consequences are the requests whose effects cross domains.
	Consequences *consequence.Service
	// TestClocks are the sandbox's test clocks; nil: none.
	TestClocks *testclock.Service
	// Metrics record the requests; nil gives the engine its own.
	Metrics *surface.Metrics
	// Requests is the API request log; nil records and shows none.
	Requests *requestlog.Log
	// Overview is the dashboard Home's charts; nil shows none.
	Overview *overview.Service
	// Audit is the security log.
	Audit *audit.Service
	// Answers are the bank's answers kept unmatched, shown to the
	// merchant their batch names (dashboard); nil shows none.
	Answers dashboard.Answers
	// Originators are the merchant environments as ACH originators; nil
	// answers GET /v2/originator with 404 and shows none in Settings.
	Originators *originator.Service
}

// New returns the Gin engine with every surface, route and middleware.
func New(d Deps) *gin.Engine {
	if d.Metrics == nil {
		d.Metrics = surface.NewMetrics()
	}
	if d.Requests != nil {
		d.Metrics.CounterFunc("fundsource_request_log_dropped_total",
			"API request log entries dropped (the oldest waiting) because its buffer was full.", d.Requests.Dropped)
	}
	k := surface.New(d.Logger, d.Now, d.Config.Mode == config.Production, d.Metrics)
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// The client IP (hosted-page limits, logs) comes from X-Forwarded-For
	// only through the configured proxies; with none, from the peer.
	if err := r.SetTrustedProxies(d.Config.TrustedProxies); err != nil {
		panic(err) // config.Load checked every entry
	}
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	// Gin's own trailing-slash redirect answers before any middleware, so
	// without request id, no-store or HSTS; notFound redirects instead.
	r.RedirectTrailingSlash = false
	r.Use(k.GuardBody, k.WithRequestID, k.StrictTransport, k.NoStore, k.Observe, k.Recover)
	r.NoRoute(withoutTrailingSlash(r), notFound(k))
	r.NoMethod(func(c *gin.Context) {
		k.Fail(c, errs.Newf(errs.MethodNotAllowed, "%s is not allowed on %s.", c.Request.Method, c.Request.URL.Path))
	})
	r.Use(cleanInput(k))
	r.GET("/static/*filepath", staticFiles(k))
	// Browsers ask for /favicon.ico on every page, the hosted one included.
	r.GET("/favicon.ico", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=86400")
		http.ServeFileFS(c.Writer, c.Request, static.FS, "img/favicon.ico")
	})

	// A disputed payment's evidence reads the services above; the API and
	// the dashboard share one.
	ev := evidence.NewService(d.Payments, d.Funding, d.Customers, d.Audit)
	ad := api.Deps{Config: d.Config, DB: d.DB, Idempotency: d.Idempotency, Services: api.Services{Merchants: d.Merchants,
		Customers: d.Customers, Funding: d.Funding, Webhooks: d.Webhooks, Payments: d.Payments, Consequences: d.Consequences,
		TestClocks: d.TestClocks}, Audit: d.Audit, Evidence: ev, Originators: d.Originators}
	if d.Requests != nil {
		ad.Requests = d.Requests
	}
	api.New(k, ad).Mount(r)
	hosted.New(k, hostedlink.NewService(d.Merchants, d.Funding, d.Now),
		d.Config.HostedSubmitsPerIP, d.Config.HostedSubmitsPerSource).Mount(r)
	dashboard.New(k, dashboard.Deps{Config: d.Config, Merchants: d.Merchants, Customers: d.Customers,
		Funding: d.Funding, Payments: d.Payments, Consequences: d.Consequences, Webhooks: d.Webhooks, Requests: d.Requests, Overview: d.Overview, Audit: d.Audit,
		Evidence: ev, Originators: d.Originators, Answers: d.Answers, TestClocks: d.TestClocks}).Mount(r)
	return r
}

// cleanInput refuses a request whose path segments or query (names and
// values) are not valid UTF-8 or hold NUL: no id, cursor or search text
// can, and PostgreSQL refuses such text. The API answers 400
// invalid_request naming the parameter; pages show a 400 page.
func cleanInput(k *surface.Shared) gin.HandlerFunc {
	return func(c *gin.Context) {
		bad := ""
		for _, p := range c.Params {
			if !surface.CleanText(p.Value) {
				bad = p.Key
			}
		}
		if c.Request.URL.RawQuery != "" { // most requests have none to parse
			for name, values := range c.Request.URL.Query() {
				if !surface.CleanText(name) || slices.ContainsFunc(values, func(v string) bool { return !surface.CleanText(v) }) {
					bad = cmp.Or(strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), ""), "query")
				}
			}
		}
		if bad == "" {
			c.Next()
			return
		}
		err := errs.Invalid(bad, bad+" must be valid UTF-8 text without NUL characters.")
		if isAPI(c.Request.URL.Path) {
			k.Fail(c, err)
			return
		}
		o := k.Resolve(c, err)
		k.Page(c, o.Status, components.MessagePage("This address is not valid",
			"Part of this address is not valid text. Check the link you followed."))
		c.Abort()
	}
}

// isAPI reports whether path is the JSON API's (or its unversioned
// /webhooks) rather than a page's.
func isAPI(path string) bool {
	return strings.HasPrefix(path, "/v2/") || path == "/webhooks"
}

// notFound answers an unknown address: the JSON envelope for the API and
// for clients that do not ask for HTML, a page for browsers.
func notFound(k *surface.Shared) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !strings.HasPrefix(c.Request.URL.Path, "/v2/") && strings.Contains(c.GetHeader("Accept"), "text/html") {
			k.Resolve(c, errs.New(errs.RouteNotFound, "No such page."))
			k.Page(c, http.StatusNotFound, components.NotFoundPage())
			return
		}
		k.Fail(c, errs.Newf(errs.RouteNotFound, "No route %s %s.", c.Request.Method, c.Request.URL.Path))
	}
}

// withoutTrailingSlash redirects an address that is a route but for a
// trailing slash to the route (301 for GET, 307 otherwise), as Gin would,
// but through the engine's middleware like every other answer.
func withoutTrailingSlash(r *gin.Engine) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := c.Request.URL.Path
		to := strings.TrimSuffix(p, "/")
		if to == p || to == "" || strings.HasPrefix(p, "//") || !hasRoute(r.Routes(), c.Request.Method, to) {
			c.Next()
			return
		}
		code := http.StatusMovedPermanently
		if c.Request.Method != http.MethodGet {
			code = http.StatusTemporaryRedirect
		}
		c.Redirect(code, (&url.URL{Path: to, RawQuery: c.Request.URL.RawQuery}).String())
		c.Abort()
	}
}

// hasRoute reports whether one of routes serves method on path.
func hasRoute(routes gin.RoutesInfo, method, path string) bool {
	segs := strings.Split(path, "/")
	return slices.ContainsFunc(routes, func(ri gin.RouteInfo) bool {
		if ri.Method != method {
			return false
		}
		pat := strings.Split(ri.Path, "/")
		for i, p := range pat {
			switch {
			case strings.HasPrefix(p, "*"):
				return i < len(segs)
			case i >= len(segs):
				return false
			case strings.HasPrefix(p, ":"):
				if segs[i] == "" {
					return false
				}
			case p != segs[i]:
				return false
			}
		}
		return len(pat) == len(segs)
	})
}

// staticFiles serves the embedded assets; they change only with a release.
// Missing files and directories get the usual 404 (no listings).
func staticFiles(k *surface.Shared) gin.HandlerFunc {
	missing := notFound(k)
	return func(c *gin.Context) {
		name := strings.TrimPrefix(c.Param("filepath"), "/")
		if st, err := iofs.Stat(static.FS, name); err != nil || st.IsDir() {
			missing(c)
			return
		}
		c.Header("Cache-Control", "public, max-age=3600")
		c.Header("X-Content-Type-Options", "nosniff")
		http.ServeFileFS(c.Writer, c.Request, static.FS, name)
	}
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
