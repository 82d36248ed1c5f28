package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"
	"golang.org/x/crypto/bcrypt"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/vault"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/internal/wiring"
	"github.com/fundsource/fundsource/web/api"
)

func TestMain(m *testing.M) { pgtest.Main(m, stopBrowser) }

// clock is a settable test clock (UTC, microsecond precision).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is the real engine on a fresh database.
type harness struct {
	t         testing.TB
	db        *postgres.DB
	cfg       *config.Config
	clock     *clock
	engine    *gin.Engine
	svc       *wiring.Services
	merchants *merchant.Service
	funding   *funding.Service
	webhooks  *webhook.Service
	payments  *payment.Service
	vault     *vault.Vault
	logger    *slog.Logger
	logs      *bytes.Buffer
}

type option func(*config.Config)

func withRateLimit(sandbox, production float64) option {
	return func(c *config.Config) { c.RateLimitSandbox, c.RateLimitProduction = sandbox, production }
}

func withHosts(sandbox, production string) option {
	return func(c *config.Config) {
		c.SandboxBaseURL.Host, c.ProductionBaseURL.Host = sandbox, production
	}
}

func testConfig(t testing.TB, opts ...option) *config.Config {
	t.Helper()
	cfg, err := config.Load(func(name string) string {
		switch name {
		case "DATA_DIR":
			return t.TempDir()
		case "RATE_LIMIT_SANDBOX", "RATE_LIMIT_PRODUCTION":
			return "0"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

func newHarness(t testing.TB, opts ...option) *harness {
	t.Helper()
	return newHarnessOn(t, pgtest.DB(t), opts...)
}

func newHarnessOn(t testing.TB, db *postgres.DB, opts ...option) *harness {
	h := &harness{t: t, db: db, cfg: testConfig(t, opts...), clock: newClock(), logs: &bytes.Buffer{}}
	h.logger = slog.New(slog.NewJSONHandler(&lockedWriter{w: h.logs}, nil))
	svc, err := wiring.Build(h.cfg, wiring.Deps{DB: db, Log: h.logger, Now: h.clock.Now, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	h.svc, h.merchants, h.funding, h.webhooks, h.payments, h.vault = svc, svc.Merchants, svc.Funding, svc.Webhooks, svc.Payments, svc.Vault
	// As in a server whose key notifications are connected: every test then
	// shows that key changes take effect at once despite the cache.
	keys := merchant.NewKeyCache(30*time.Second, h.clock.Now)
	keys.Live(func() bool { return true })
	h.merchants.UseKeyCache(keys)
	h.engine = svc.Handler()
	return h
}

// withPrivateTargets sets the operator's development flag for webhooks.
func withPrivateTargets(allow bool) option {
	return func(c *config.Config) { c.WebhookAllowPrivateTargets = allow }
}

// dispatcher returns a webhook dispatcher on the harness's database and
// clock, with the client the flag of the configuration calls for.
func (h *harness) dispatcher(opts webhook.DispatcherOptions) *webhook.Dispatcher {
	return h.svc.Dispatcher(opts)
}

// deliver sends every due delivery and returns how many were sent.
func (h *harness) deliver() int {
	h.t.Helper()
	n, err := h.dispatcher(webhook.DispatcherOptions{}).DeliverDue(context.Background())
	if err != nil {
		h.t.Fatalf("deliver: %v", err)
	}
	return n
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// merchant creates a merchant and returns it with its sandbox keys.
func (h *harness) merchant(name string) merchant.Created {
	h.t.Helper()
	email := strings.ToLower(strings.ReplaceAll(name, " ", ".")) + "@example.com"
	m, err := h.merchants.Create(context.Background(), name, email, "correct horse battery")
	if err != nil {
		h.t.Fatalf("create merchant: %v", err)
	}
	return m
}

// production activates production for m and returns its production keys.
func (h *harness) production(m merchant.Created) merchant.Keys {
	h.t.Helper()
	k, err := h.merchants.ActivateProduction(context.Background(), m.Merchant.ID)
	if err != nil {
		h.t.Fatalf("activate production: %v", err)
	}
	return k
}

type response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// ErrCode is error.code of an error envelope ("" for a success).
func (r *response) ErrCode(t testing.TB) string {
	t.Helper()
	m := r.JSON(t)
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// ErrParam is error.param of an error envelope.
func (r *response) ErrParam(t testing.TB) string {
	t.Helper()
	e, _ := r.JSON(t)["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

type req struct {
	method, path, key, body string
	header                  map[string]string
	host                    string
	remote                  string // client address, "ip:port"
	noContentType           bool
}

// do sends a request through the engine, checks the conventions every
// response must meet, and validates the response against the OpenAPI document.
func (h *harness) do(r req) *response {
	h.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if r.host != "" {
		hr.Host = r.host
	}
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.method == http.MethodPost && !r.noContentType {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.engine.ServeHTTP(w, hr)
	res := &response{Code: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	if id := res.Header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
		h.t.Errorf("%s %s: X-Request-Id = %q, want req_…", r.method, r.path, id)
	}
	// No answer may be cached or sniffed (static files excepted: they may
	// be cached, never sniffed).
	if res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		(res.Header.Get("Cache-Control") != "no-store" && !strings.HasPrefix(r.path, "/static/") && r.path != "/favicon.ico") {
		h.t.Errorf("%s %s: Cache-Control %q, X-Content-Type-Options %q", r.method, r.path,
			res.Header.Get("Cache-Control"), res.Header.Get("X-Content-Type-Options"))
	}
	checkOpenAPI(h.t, hr, res)
	return res
}

// concurrently sends n requests made by do at once (released together) and
// returns their responses in order.
func concurrently(n int, do func(i int) *response) []*response {
	results := make([]*response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = do(i)
		})
	}
	close(start)
	wg.Wait()
	return results
}

func (h *harness) post(path, key, body string) *response {
	h.t.Helper()
	return h.do(req{method: http.MethodPost, path: path, key: key, body: body})
}

func (h *harness) get(path, key string) *response {
	h.t.Helper()
	return h.do(req{method: http.MethodGet, path: path, key: key})
}

// wantError checks status and error code of an error response.
func wantError(t testing.TB, r *response, status int, code string) {
	t.Helper()
	if r.Code != status || r.ErrCode(t) != code {
		t.Fatalf("got %d %q, want %d %q\n%s", r.Code, r.ErrCode(t), status, code, r.Body)
	}
	if r.JSON(t)["success"] != false {
		t.Errorf("error envelope without \"success\": false: %s", r.Body)
	}
}

func wantOK(t testing.TB, r *response) map[string]any {
	t.Helper()
	if r.Code != http.StatusOK {
		t.Fatalf("got %d, want 200\n%s", r.Code, r.Body)
	}
	m := r.JSON(t)
	if m["success"] != true {
		t.Fatalf("success = %v, want true: %s", m["success"], r.Body)
	}
	return m
}

var (
	specOnce   sync.Once
	spec       *openapi3.T
	specRouter routers.Router
	specErr    error
)

func loadSpec() (*openapi3.T, routers.Router, error) {
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		spec, specErr = loader.LoadFromData(api.OpenAPI)
		if specErr != nil {
			return
		}
		if specErr = spec.Validate(context.Background()); specErr != nil {
			return
		}
		// Match requests on any host: tests do not use the document's server.
		routed := *spec
		routed.Servers = nil
		specRouter, specErr = gorillamux.NewRouter(&routed)
	})
	return spec, specRouter, specErr
}

// checkOpenAPI validates a response against the document: documented routes
// through kin-openapi, and every error envelope against ErrorResponse.
func checkOpenAPI(t testing.TB, hr *http.Request, res *response) {
	t.Helper()
	doc, router, err := loadSpec()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	route, params, routeErr := router.FindRoute(hr)
	isJSON := strings.HasPrefix(res.Header.Get("Content-Type"), "application/json")
	if res.Code >= 400 && strings.HasPrefix(hr.URL.Path, "/v2/") && !isJSON {
		t.Errorf("%s %s: API error with Content-Type %q", hr.Method, hr.URL.Path, res.Header.Get("Content-Type"))
	}
	if res.Code >= 400 && isJSON && (routeErr != nil || strings.HasPrefix(hr.URL.Path, "/v2/")) {
		var v any
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatalf("%s %s: error body is not JSON: %s", hr.Method, hr.URL.Path, res.Body)
		}
		if err := doc.Components.Schemas["ErrorResponse"].Value.VisitJSON(v); err != nil {
			t.Errorf("%s %s: error body does not match ErrorResponse: %v\n%s", hr.Method, hr.URL.Path, err, res.Body)
		}
	}
	if routeErr != nil {
		if res.Code < 400 && !strings.HasPrefix(hr.URL.Path, "/static/") && !isPage(hr.URL.Path) {
			t.Errorf("%s %s answered %d but is not in openapi.json", hr.Method, hr.URL.Path, res.Code)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 res.Code,
		Header:                 res.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(res.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: response does not match openapi.json: %v\n%s", hr.Method, hr.URL.Path, err, res.Body)
	}
}

// isPage reports whether path is one of the HTML routes (the hosted page
// and the dashboard), which are not part of the API document.
func isPage(path string) bool {
	return path == "/" || path == "/favicon.ico" || strings.HasPrefix(path, "/bank-account/") || path == "/dashboard" ||
		strings.HasPrefix(path, "/dashboard/")
}

// count returns the number of rows of a table (test-only SQL).
func (h *harness) count(table string) int {
	h.t.Helper()
	var n int
	if err := h.db.SQL().Get(&n, "SELECT count(*) FROM "+table); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// customer creates a customer with the key and returns its user_id.
func (h *harness) customer(key string) string {
	h.t.Helper()
	n := h.count("customers")
	body := fmt.Sprintf(`{"first_name":"C%d","last_name":"L","email":"c%d@example.com"}`, n, n)
	return wantOK(h.t, h.post("/v2/customers", key, body))["user_id"].(string)
}

// source creates an Unverified micro-deposit source and returns its id.
func (h *harness) source(key, customerID, account string) string {
	h.t.Helper()
	return wantOK(h.t, h.post("/v2/funding-source", key, sourceBody(customerID, "021000021", account)))["funding_source_id"].(string)
}

func sourceBody(customerID, routing, account string) string {
	return fmt.Sprintf(`{"user_id":%q,"routing_number":%q,"account_number":%q}`, customerID, routing, account)
}

type eventRow struct {
	ID   string `db:"id"`
	Type string `db:"type"`
	Data string `db:"data"`
}

// events returns the event rows of a type, oldest first, data as JSON maps.
func (h *harness) events(typ string) []map[string]any {
	h.t.Helper()
	var rows []eventRow
	if err := h.db.SQL().Select(&rows, `SELECT id, type, data::text AS data FROM events WHERE type = $1 ORDER BY created_at, id`, typ); err != nil {
		h.t.Fatal(err)
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r.Data), &out[i]); err != nil {
			h.t.Fatal(err)
		}
	}
	return out
}

// dumpDatabase returns every row of every table as text, for scans that
// prove a secret is not stored in clear. It fails the test when the dump
// misses rows it must contain, so a broken scan cannot pass.
func (h *harness) dumpDatabase() string {
	h.t.Helper()
	var tables []string
	if err := h.db.SQL().Select(&tables, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`); err != nil {
		h.t.Fatal(err)
	}
	var dump strings.Builder
	for _, tbl := range tables {
		var rows []string
		if err := h.db.SQL().Select(&rows, fmt.Sprintf(`SELECT t::text FROM %q t`, tbl)); err != nil {
			h.t.Fatal(err)
		}
		dump.WriteString(strings.Join(rows, "\n"))
	}
	if !strings.Contains(dump.String(), "customer.created") {
		h.t.Fatal("database dump does not contain the rows it should (scan is broken)")
	}
	return dump.String()
}
