// Package harness runs the real Gin engine on a fresh PostgreSQL database
// for tests: requests go through httptest, and every response is checked
// against the conventions all answers share (X-Request-Id, no caching, no
// sniffing) and against the OpenAPI document. The HTTP tests (web and its
// surfaces, through internal/testing/webtest) and the end-to-end tests use
// it. Beside the engine it holds a webhook receiver that checks what it is
// sent (Receiver), and 'fundsource dev' run in the test process as 'make
// run' starts it (StartDev), for the tests of the dev runner and of the
// walkthrough (docs/walkthrough.md).
package harness

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"golang.org/x/crypto/bcrypt"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/adapter/vault"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/internal/wiring"
	"github.com/fundsource/fundsource/web/api"
	"github.com/fundsource/fundsource/web/surface"
)

// Clock is the settable test clock.
type Clock = fixture.Clock

// NewClock returns a clock at Monday 2026-11-02 15:04:05 UTC.
func NewClock() *Clock { return fixture.NewClock() }

// Harness is the real engine on a fresh database.
type Harness struct {
	T         testing.TB
	DB        *postgres.DB
	URL       string // the database's connection string ("" when unknown)
	Cfg       *config.Config
	Clock     *Clock
	Engine    *gin.Engine
	Svc       *wiring.Services
	Merchants *merchant.Service
	Funding   *funding.Service
	Webhooks  *webhook.Service
	Payments  *payment.Service
	// Consequences run what crosses funding and payments (removals,
	// sandbox returns and settlements).
	Consequences *consequence.Service
	Vault        *vault.Vault
	Logger       *slog.Logger
	Logs         *bytes.Buffer

	made    atomic.Int64 // customers made by Customer
	sqlOnce sync.Once
	sql     *sqlx.DB
}

// Option changes the test configuration.
type Option = fixture.Option

// WithRateLimit sets the rate limits per key of both environments.
func WithRateLimit(sandbox, production float64) Option {
	return func(c *config.Config) { c.RateLimitSandbox, c.RateLimitProduction = sandbox, production }
}

// WithHosts sets the hosts of the sandbox's and production's base URLs.
func WithHosts(sandbox, production string) Option {
	return func(c *config.Config) {
		c.SandboxBaseURL.Host, c.ProductionBaseURL.Host = sandbox, production
	}
}

// WithPrivateTargets sets the operator's development flag for webhooks.
func WithPrivateTargets(allow bool) Option {
	return func(c *config.Config) { c.WebhookAllowPrivateTargets = allow }
}

// WithRail points the service at an instant rail (INSTANT_RAIL_URL), which
// then serves sandbox keys too.
func WithRail(url string) Option {
	return func(c *config.Config) { c.InstantRailURL = url }
}

// Config is the configuration tests run with (see fixture.Config).
func Config(t testing.TB, opts ...Option) *config.Config {
	t.Helper()
	return fixture.Config(t, opts...)
}

// New returns the engine on a fresh migrated database.
func New(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	url := pgtest.URL(t)
	return NewOn(t, pgtest.Open(t, url), url, opts...)
}

// NewOn returns the engine on db, whose connection string is url ("" when
// the test has none: then SQL, Count, Events and DumpDatabase fail).
func NewOn(t testing.TB, db *postgres.DB, url string, opts ...Option) *Harness {
	t.Helper()
	h := &Harness{T: t, DB: db, URL: url, Cfg: Config(t, opts...), Clock: NewClock(), Logs: &bytes.Buffer{}}
	// The service's JSON handler, so the access log's lines are made as a
	// server makes them.
	h.Logger = slog.New(surface.NewJSONHandler(h.Logs))
	svc, err := wiring.Build(h.Cfg, wiring.Deps{DB: db, Log: h.Logger, Now: h.Clock.Now, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	h.Svc, h.Merchants, h.Funding, h.Webhooks, h.Payments, h.Vault = svc, svc.Merchants, svc.Funding, svc.Webhooks, svc.Payments, svc.Vault
	h.Consequences = svc.Consequences
	// As in a server whose key notifications are connected: every test then
	// shows that key changes take effect at once despite the cache.
	keys := merchant.NewKeyCache(30*time.Second, h.Clock.Now)
	keys.Live(func() bool { return true })
	h.Merchants.UseKeyCache(keys)
	h.Engine = svc.Handler()
	return h
}

// SQL returns the test's own connection pool on the harness's database,
// for rows no API shows; opened once, closed when the test ends.
func (h *Harness) SQL() *sqlx.DB {
	h.T.Helper()
	if h.URL == "" {
		h.T.Fatal("harness: this database has no connection string for a test pool")
	}
	h.sqlOnce.Do(func() { h.sql = pgtest.Pool(h.T, h.URL) })
	return h.sql
}

// Dispatcher returns a webhook dispatcher on the harness's database and
// clock, with the client the flag of the configuration calls for.
func (h *Harness) Dispatcher(opts webhook.DispatcherOptions) *webhook.Dispatcher {
	return h.Svc.Dispatcher(opts)
}

// Deliver sends every due delivery and returns how many were sent.
func (h *Harness) Deliver() int {
	h.T.Helper()
	n, err := h.Dispatcher(webhook.DispatcherOptions{}).DeliverDue(context.Background())
	if err != nil {
		h.T.Fatalf("deliver: %v", err)
	}
	return n
}

// Merchant creates a merchant and returns it with its sandbox keys.
func (h *Harness) Merchant(name string) merchant.Created {
	h.T.Helper()
	email := strings.ToLower(strings.ReplaceAll(name, " ", ".")) + "@example.com"
	m, err := h.Merchants.Create(context.Background(), name, email, "correct horse battery")
	if err != nil {
		h.T.Fatalf("create merchant: %v", err)
	}
	return m
}

// Production activates production for m, and its originator as an
// operator does once it has reviewed the merchant (setting the company id
// the bank assigned, then activating it), and returns its production
// keys.
func (h *Harness) Production(m merchant.Created) merchant.Keys {
	h.T.Helper()
	k := h.ProductionPending(m)
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	id := fixture.BankCompanyID
	if _, err := h.Svc.Originators.Set(context.Background(), scope, originator.Change{CompanyID: &id}, audit.Operator("test")); err != nil {
		h.T.Fatalf("set the originator's company id: %v", err)
	}
	if _, err := h.Svc.Originators.Activate(context.Background(), scope, audit.Operator("test")); err != nil {
		h.T.Fatalf("activate originator: %v", err)
	}
	return k
}

// ProductionPending activates production for m and returns its
// production keys; its originator stays pending_review.
func (h *Harness) ProductionPending(m merchant.Created) merchant.Keys {
	h.T.Helper()
	k, err := h.Merchants.ActivateProduction(context.Background(), m.Merchant.ID, audit.Operator("test"))
	if err != nil {
		h.T.Fatalf("activate production: %v", err)
	}
	return k
}

type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// ErrCode is error.code of an error envelope ("" for a success).
func (r *Response) ErrCode(t testing.TB) string {
	t.Helper()
	m := r.JSON(t)
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// ErrParam is error.param of an error envelope.
func (r *Response) ErrParam(t testing.TB) string {
	t.Helper()
	e, _ := r.JSON(t)["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

// Req is one request for Do.
type Req struct {
	Method, Path, Key, Body string
	Header                  map[string]string
	Host                    string
	Remote                  string // client address, "ip:port"
	NoContentType           bool
}

// Do sends a request through the engine, checks the conventions every
// response must meet, and validates the response against the OpenAPI document.
func (h *Harness) Do(r Req) *Response {
	h.T.Helper()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	hr := httptest.NewRequest(r.Method, r.Path, body)
	if r.Host != "" {
		hr.Host = r.Host
	}
	if r.Remote != "" {
		hr.RemoteAddr = r.Remote
	}
	if r.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	if r.Method == http.MethodPost && !r.NoContentType {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.Engine.ServeHTTP(w, hr)
	res := &Response{Code: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	if id := res.Header.Get("X-Request-Id"); !strings.HasPrefix(id, "req_") {
		h.T.Errorf("%s %s: X-Request-Id = %q, want req_…", r.Method, r.Path, id)
	}
	// No answer may be cached or sniffed (static files and a merchant's
	// brand files excepted: they may be cached, never sniffed).
	cacheable := strings.HasPrefix(r.Path, "/static/") || strings.HasPrefix(r.Path, "/brand/") || r.Path == "/favicon.ico"
	if res.Header.Get("X-Content-Type-Options") != "nosniff" || (res.Header.Get("Cache-Control") != "no-store" && !cacheable) {
		h.T.Errorf("%s %s: Cache-Control %q, X-Content-Type-Options %q", r.Method, r.Path,
			res.Header.Get("Cache-Control"), res.Header.Get("X-Content-Type-Options"))
	}
	CheckOpenAPI(h.T, hr, res)
	return res
}

// Concurrently sends n requests made by do at once (released together) and
// returns their responses in order.
func Concurrently(n int, do func(i int) *Response) []*Response {
	results := make([]*Response, n)
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

func (h *Harness) Post(path, key, body string) *Response {
	h.T.Helper()
	return h.Do(Req{Method: http.MethodPost, Path: path, Key: key, Body: body})
}

func (h *Harness) Get(path, key string) *Response {
	h.T.Helper()
	return h.Do(Req{Method: http.MethodGet, Path: path, Key: key})
}

// WantError checks status and error code of an error response.
func WantError(t testing.TB, r *Response, status int, code string) {
	t.Helper()
	if r.Code != status || r.ErrCode(t) != code {
		t.Fatalf("got %d %q, want %d %q\n%s", r.Code, r.ErrCode(t), status, code, r.Body)
	}
	if r.JSON(t)["success"] != false {
		t.Errorf("error envelope without \"success\": false: %s", r.Body)
	}
}

func WantOK(t testing.TB, r *Response) map[string]any {
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

func LoadSpec() (*openapi3.T, routers.Router, error) {
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

// CheckOpenAPI validates a response against the document: documented routes
// through kin-openapi, and every error envelope against ErrorResponse.
func CheckOpenAPI(t testing.TB, hr *http.Request, res *Response) {
	t.Helper()
	doc, router, err := LoadSpec()
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
		if res.Code < 400 && !strings.HasPrefix(hr.URL.Path, "/static/") && !IsPage(hr.URL.Path) {
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

// IsPage reports whether path is one of the HTML routes (the hosted page,
// its brand files and the dashboard), which are not part of the API document.
func IsPage(path string) bool {
	return path == "/" || path == "/favicon.ico" || strings.HasPrefix(path, "/bank-account/") || path == "/dashboard" ||
		strings.HasPrefix(path, "/dashboard/") || strings.HasPrefix(path, "/brand/")
}

// Count returns the number of rows of a table (test-only SQL).
func (h *Harness) Count(table string) int {
	h.T.Helper()
	var n int
	if err := h.SQL().Get(&n, "SELECT count(*) FROM "+table); err != nil {
		h.T.Fatal(err)
	}
	return n
}

// Customer creates a customer with the key and returns its user_id.
func (h *Harness) Customer(key string) string {
	h.T.Helper()
	// Numbered by the table's rows, or by the harness when the database
	// has no connection string for a test pool.
	n := int(h.made.Add(1)) - 1
	if h.URL != "" {
		n = h.Count("customers")
	}
	body := fmt.Sprintf(`{"first_name":"C%d","last_name":"L","email":"c%d@example.com"}`, n, n)
	return WantOK(h.T, h.Post("/v2/customers", key, body))["user_id"].(string)
}

// Source creates an Unverified micro-deposit source and returns its id.
func (h *Harness) Source(key, customerID, account string) string {
	h.T.Helper()
	return WantOK(h.T, h.Post("/v2/funding-source", key, SourceBody(customerID, "021000021", account)))["funding_source_id"].(string)
}

func SourceBody(customerID, routing, account string) string {
	return fmt.Sprintf(`{"user_id":%q,"routing_number":%q,"account_number":%q}`, customerID, routing, account)
}

type eventRow struct {
	ID   string `db:"id"`
	Type string `db:"type"`
	Data string `db:"data"`
}

// Events returns the event rows of a type, oldest first, data as JSON maps.
func (h *Harness) Events(typ string) []map[string]any {
	h.T.Helper()
	var rows []eventRow
	if err := h.SQL().Select(&rows, `SELECT id, type, data::text AS data FROM events WHERE type = $1 ORDER BY created_at, id`, typ); err != nil {
		h.T.Fatal(err)
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r.Data), &out[i]); err != nil {
			h.T.Fatal(err)
		}
	}
	return out
}

// DumpDatabase returns every row of every table as text, for scans that
// prove a secret is not stored in clear. It fails the test when the dump
// misses rows it must contain, so a broken scan cannot pass.
func (h *Harness) DumpDatabase() string {
	h.T.Helper()
	var tables []string
	if err := h.SQL().Select(&tables, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`); err != nil {
		h.T.Fatal(err)
	}
	var dump strings.Builder
	for _, tbl := range tables {
		var rows []string
		if err := h.SQL().Select(&rows, fmt.Sprintf(`SELECT t::text FROM %q t`, tbl)); err != nil {
			h.T.Fatal(err)
		}
		dump.WriteString(strings.Join(rows, "\n"))
	}
	if !strings.Contains(dump.String(), "customer.created") {
		h.T.Fatal("database dump does not contain the rows it should (scan is broken)")
	}
	return dump.String()
}

// HoldsNoTransaction runs send, a request that waits on a silent network
// peer, and polls PostgreSQL until it answers: no session may sit idle in
// a transaction for more than 300 ms meanwhile (a transaction held across
// the wait would). It fails t, naming what, when one does or when send
// answered before a single poll; it returns send's response.
func (h *Harness) HoldsNoTransaction(t testing.TB, what string, send func() *Response) *Response {
	t.Helper()
	done := make(chan *Response, 1)
	go func() { done <- send() }()
	polls, idleMax := 0, 0
	for {
		select {
		case resp := <-done:
			if polls == 0 || idleMax != 0 {
				t.Fatalf("%s: %d polls while it waited saw up to %d sessions idle in a transaction, want some polls and none",
					what, polls, idleMax)
			}
			return resp
		default:
			var idle int
			if err := h.SQL().Get(&idle, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND state LIKE 'idle in transaction%'
				  AND state_change < now() - interval '300 milliseconds'`); err != nil {
				t.Fatal(err)
			}
			polls, idleMax = polls+1, max(idleMax, idle)
		}
	}
}
