package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/config"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestHSTSOnEveryAnswerInProduction: in production mode every answer
// carries Strict-Transport-Security (JSON, errors, redirects, 404s, static
// files), not only pages; in development none does.
func TestHSTSOnEveryAnswerInProduction(t *testing.T) {
	t.Parallel()
	html := map[string]string{"Accept": "text/html"}
	for _, mode := range []config.Mode{config.Development, config.Production} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			h := webtest.NewHarness(t, func(c *config.Config) { c.Mode = mode })
			key := h.Merchant("Acme").Sandbox.SecretKey
			once := map[string]string{"Idempotency-Key": "hsts-once"}
			th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Header: once,
				Body: `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`}))
			for _, c := range []struct {
				name   string
				req    th.Req
				status int
			}{
				{"JSON", th.Req{Method: http.MethodGet, Path: "/v2/customers", Key: key}, 200},
				{"JSON error", th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: `{"x":1}`}, 400},
				{"idempotency key reused", th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Header: once,
					Body: `{"first_name":"Grace","last_name":"Hopper","email":"grace@example.com"}`}, 409},
				{"no key", th.Req{Method: http.MethodGet, Path: "/v2/customers"}, 401},
				{"API 404", th.Req{Method: http.MethodGet, Path: "/v2/nothing-here", Key: key}, 404},
				{"page 404", th.Req{Method: http.MethodGet, Path: "/nothing-here", Header: html}, 404},
				{"405", th.Req{Method: http.MethodPut, Path: "/v2/customers", Key: key}, 405},
				{"page redirect", th.Req{Method: http.MethodGet, Path: "/dashboard", Header: html}, 303},
				{"trailing slash redirect", th.Req{Method: http.MethodGet, Path: "/dashboard/sign-in/", Header: html}, 301},
				{"health", th.Req{Method: http.MethodGet, Path: "/healthz"}, 200},
				{"static file", th.Req{Method: http.MethodGet, Path: "/static/js/hosted.js"}, 200},
				{"page", th.Req{Method: http.MethodGet, Path: "/", Header: html}, 200},
			} {
				r := h.Do(c.req)
				if r.Code != c.status {
					t.Errorf("%s: %s %s answered %d, want %d\n%s", c.name, c.req.Method, c.req.Path, r.Code, c.status, r.Body)
				}
				got := r.Header.Get("Strict-Transport-Security")
				if mode == config.Production && !strings.HasPrefix(got, "max-age=63072000") {
					t.Errorf("%s: Strict-Transport-Security = %q in production", c.name, got)
				}
				if mode != config.Production && got != "" {
					t.Errorf("%s: Strict-Transport-Security = %q in development", c.name, got)
				}
			}
		})
	}
}

// TestTrailingSlashRedirectsThroughTheMiddleware: an address that is a
// route but for a trailing slash is redirected to the route, query kept,
// with the headers every answer has (request id, no-store, HSTS in
// production); one that is no route with or without the slash is a 404.
func TestTrailingSlashRedirectsThroughTheMiddleware(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.Mode = config.Production })
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	for _, c := range []struct {
		method, path string
		status       int
		location     string
	}{
		{http.MethodGet, "/v2/customers/?limit=2", 301, "/v2/customers?limit=2"},
		{http.MethodGet, "/v2/customers/" + user + "/", 301, "/v2/customers/" + user},
		{http.MethodPost, "/v2/customers/", 307, "/v2/customers"},
		{http.MethodGet, "/dashboard/sign-in/", 301, "/dashboard/sign-in"},
		{http.MethodGet, "/v2/nothing/", 404, ""},
		{http.MethodGet, "//example.com/", 404, ""},
		{http.MethodGet, "/v2/customers//", 404, ""},
	} {
		// Straight to the engine: the harness holds every 2xx and 3xx of
		// the API to the OpenAPI document, which lists no redirects.
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		hd := w.Header()
		if w.Code != c.status || hd.Get("Location") != c.location {
			t.Errorf("%s %s: %d to %q, want %d to %q", c.method, c.path, w.Code, hd.Get("Location"), c.status, c.location)
		}
		if !strings.HasPrefix(hd.Get("X-Request-Id"), "req_") || hd.Get("Cache-Control") != "no-store" ||
			!strings.HasPrefix(hd.Get("Strict-Transport-Security"), "max-age=") {
			t.Errorf("%s %s: headers %v", c.method, c.path, hd)
		}
	}
}
