package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/gin-gonic/gin"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/config"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, th.WithRateLimit(2, 100))
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	for i := range 2 {
		if r := h.Get("/v2/customers", a.Sandbox.SecretKey); r.Code != 200 {
			t.Fatalf("request %d: %d", i, r.Code)
		}
	}
	r := h.Get("/v2/customers", a.Sandbox.SecretKey)
	th.WantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q, want whole seconds ≥ 1", r.Header.Get("Retry-After"))
	}
	// Another key has its own bucket.
	th.WantOK(t, h.Get("/v2/customers", b.Sandbox.SecretKey))
	// The bucket refills with time.
	h.Clock.Advance(time.Second)
	th.WantOK(t, h.Get("/v2/customers", a.Sandbox.SecretKey))
}

func TestPanicBecomes500Envelope(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	h.Engine.GET("/test-panic", func(*gin.Context) { panic("secret detail") })
	r := h.Do(th.Req{Method: http.MethodGet, Path: "/test-panic"})
	th.WantError(t, r, http.StatusInternalServerError, "internal_error")
	if strings.Contains(string(r.Body), "secret detail") {
		t.Errorf("500 body shows internal detail: %s", r.Body)
	}
	if !strings.Contains(h.Logs.String(), "secret detail") {
		t.Errorf("panic not logged")
	}
}

func TestDatabaseDownGives503(t *testing.T) {
	t.Parallel()
	down, err := postgres.OpenLazy("host=/nonexistent-fundsource port=1 user=postgres dbname=x sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	h := webtest.NewHarnessOn(t, down, "")
	r := h.Get("/v2/customers", "sk_test_"+strings.Repeat("C", 43))
	th.WantError(t, r, http.StatusServiceUnavailable, "service_unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	if r := h.Get("/readyz", ""); r.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d with the database down, want 503", r.Code)
	}
	if r := h.Get("/healthz", ""); r.Code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200 (the process is alive)", r.Code)
	}
}

func TestHealthReadinessMetricsAndUnknownRoutes(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	if r := h.Get("/healthz", ""); r.Code != 200 {
		t.Errorf("/healthz = %d", r.Code)
	}
	if r := h.Get("/readyz", ""); r.Code != 200 || r.JSON(t)["database"] != "ok" {
		t.Errorf("/readyz = %d %s", r.Code, r.Body)
	}
	th.WantOK(t, h.Post("/v2/customers", key, webtest.Ada))
	th.WantError(t, h.Get("/v2/nothing-here", key), http.StatusNotFound, "route_not_found")
	th.WantError(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/customers", Key: key}), http.StatusMethodNotAllowed, "method_not_allowed")

	m := string(h.Get("/metrics", "").Body)
	for _, want := range []string{
		`fundsource_http_requests_total{method="POST",route="/v2/customers",status="200"} 1`,
		`fundsource_http_request_duration_seconds_bucket{method="POST",route="/v2/customers"`,
		`route="unmatched",status="404"`,
		"fundsource_request_log_dropped_total 0",
		"fundsource_sanctions_entries 6", // the embedded sample
		"fundsource_sanctions_reload_failures_total 0",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	r := h.Get("/v2/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, route := range h.Engine.Routes() {
		path := route.Path
		if strings.HasPrefix(path, "/static/") || th.IsPage(path) {
			continue // assets and pages, not API
		}
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, ":") {
				path = strings.Replace(path, seg, "{"+seg[1:]+"}", 1)
			}
		}
		if _, ok := doc.Paths[path][strings.ToLower(route.Method)]; !ok {
			t.Errorf("%s %s is served but not in openapi.json", route.Method, path)
		}
	}
}

func TestBrowserNotFoundPageAndStaticAssets(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	r := h.Do(th.Req{Method: http.MethodGet, Path: "/no/such/page", Header: map[string]string{"Accept": "text/html,application/xhtml+xml"}})
	if r.Code != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("browser 404 = %d %s", r.Code, r.Header.Get("Content-Type"))
	}
	body := string(r.Body)
	for _, want := range []string{"<h1 id=\"message-heading\">Page not found</h1>", `href="/static/css/base.css"`, `lang="en"`} {
		if !strings.Contains(body, want) {
			t.Errorf("404 page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Errorf("404 page has inline script or style")
	}
	for h2, want := range map[string]string{
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
	} {
		if got := r.Header.Get(h2); got != want {
			t.Errorf("%s = %q, want %q", h2, got, want)
		}
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP = %q", csp)
	}
	// The API path stays JSON even for browsers.
	th.WantError(t, h.Do(th.Req{Method: http.MethodGet, Path: "/v2/nope", Header: map[string]string{"Accept": "text/html"}}),
		http.StatusNotFound, "route_not_found")

	css := h.Get("/static/css/base.css", "")
	if css.Code != 200 || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") || !strings.Contains(string(css.Body), "--accent") {
		t.Errorf("base.css = %d %s", css.Code, css.Header.Get("Content-Type"))
	}
	for _, p := range []string{"/static/", "/static/css/", "/static/css/missing.css"} {
		if r := h.Get(p, ""); r.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, r.Code)
		}
	}
}

// A client that goes away mid-request cuts the database work off; that is
// not a bug, and the log says so instead of reporting an internal error.
func TestClientGoneIsNotAnInternalError(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/v2/customers", strings.NewReader(webtest.Ada)).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	h.Engine.ServeHTTP(httptest.NewRecorder(), r)
	logs := h.Logs.String()
	if strings.Contains(logs, "internal error") || !strings.Contains(logs, "client went away") {
		t.Errorf("logs:\n%s", logs)
	}
	if n := h.Count("customers"); n != 0 {
		t.Errorf("customers = %d after a canceled request", n)
	}
}

// TestMetricsNotOnTheServiceListener: in production, and wherever
// METRICS_ADDR is set, the service's own listener does not serve /metrics.
func TestMetricsNotOnTheServiceListener(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]th.Option{
		"production":   func(c *config.Config) { c.Mode = config.Production },
		"METRICS_ADDR": func(c *config.Config) { c.MetricsAddr = "127.0.0.1:9464" },
	} {
		h := webtest.NewHarness(t, opt)
		if r := h.Get("/metrics", ""); r.Code != http.StatusNotFound || strings.Contains(string(r.Body), "fundsource_http") {
			t.Errorf("%s: /metrics = %d", name, r.Code)
		}
	}
}

// TestMalformedTextIsRefusedNotA500: NUL and invalid UTF-8 in path ids,
// cursors, query values and JSON strings get 400 invalid_request naming
// the parameter, on the API and on the unauthenticated hosted page.
func TestMalformedTextIsRefusedNotA500(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	for path, param := range map[string]string{
		"/v2/customers/%00":                                             "user_id",
		"/v2/customers/cus_%ff":                                         "user_id",
		"/v2/funding-source/fs_%00":                                     "funding_source_id",
		"/v2/customers?starting_after=%00":                              "starting_after",
		"/v2/customers?starting_after=%ff%fe":                           "starting_after",
		"/v2/payments?funding_source_id=%ff":                            "funding_source_id",
		"/v2/customers/" + user + "/funding-sources?starting_after=%00": "starting_after",
		"/v2/events/evt_%00":                                            "id",
	} {
		r := h.Get(path, key)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if got := r.ErrParam(t); got != param {
			t.Errorf("%s: param %q, want %q", path, got, param)
		}
	}
	for body, param := range map[string]string{
		`{"first_name":"A\u0000","last_name":"B","email":"a@example.com"}`:                          "first_name",
		"{\"first_name\":\"A\xff\",\"last_name\":\"B\",\"email\":\"a@example.com\"}":                "",
		`{"user_id":"cus_\u0000","routing_number":"021000021","account_number":"12345678"}`:         "user_id",
		`{"user_id":"` + user + `","routing_number":"021000021","account_number":"1234\u00005678"}`: "account_number",
	} {
		path := "/v2/customers"
		if strings.Contains(body, "routing_number") {
			path = "/v2/funding-source"
		}
		r := h.Post(path, key, body)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if got := r.ErrParam(t); got != param {
			t.Errorf("%q: param %q, want %q", body, got, param)
		}
	}
	for _, path := range []string{"/bank-account/pk_%00/cus_1/fs_1", "/bank-account/pk_1/cus_%ff/fs_1", "/bank-account/pk_1/cus_1/fs_1?successUrl=%00"} {
		if r := h.Do(th.Req{Method: http.MethodGet, Path: path, Header: map[string]string{"Accept": "text/html"}}); r.Code != http.StatusBadRequest ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want a 400 page", path, r.Code, r.Header.Get("Content-Type"))
		}
	}
}

// TestNoWritablePrimaryGives503 runs the service on two hosts that both
// answer read-only, as during a switchover before the standby is
// promoted: lib/pq finds no writable host, and requests answer 503
// service_unavailable with Retry-After (not 500), /readyz 503; once the
// host is writable, both answer at once.
func TestNoWritablePrimaryGives503(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	cfg, err := pq.NewConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	multi := fmt.Sprintf("host=%s,%s port=%d,%d user=%s password='%s' dbname=%s sslmode=disable",
		cfg.Host, cfg.Host, cfg.Port, cfg.Port, cfg.User, cfg.Password, cfg.Database)
	db, err := postgres.Open(context.Background(), multi)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := webtest.NewHarnessOn(t, db, url)
	key := h.Merchant("Acme").Sandbox.SecretKey
	th.WantOK(t, h.Post("/v2/customers", key, webtest.Ada))
	ctx := context.Background()
	admin, err := h.SQL().Connx(ctx) // opened first: stays a writable session
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	failover := func(setting string) {
		t.Helper()
		for _, stmt := range []string{
			`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I ` + setting + `', current_database()); END $$`,
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
		} {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
	}
	failover("SET default_transaction_read_only = on")
	for i := range 3 {
		r := h.Post("/v2/customers", key, webtest.Ada)
		th.WantError(t, r, http.StatusServiceUnavailable, "service_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("request %d: 503 without Retry-After", i)
		}
	}
	if r := h.Get("/readyz", ""); r.Code != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("/readyz = %d (Retry-After %q) with no writable primary, want 503 with Retry-After", r.Code, r.Header.Get("Retry-After"))
	}
	if strings.Contains(h.Logs.String(), `"internal error"`) {
		t.Errorf("an unwritable database was logged as an internal error:\n%s", h.Logs)
	}
	failover("RESET default_transaction_read_only")
	if r := h.Get("/readyz", ""); r.Code != http.StatusOK {
		t.Errorf("/readyz = %d once writable, want 200", r.Code)
	}
	th.WantOK(t, h.Post("/v2/customers", key, webtest.Ada))
}
