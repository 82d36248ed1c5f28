package web_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/web/api"
	"github.com/fundsource/fundsource/web/dashboard"
	"github.com/fundsource/fundsource/web/hosted"
	"github.com/fundsource/fundsource/web/surface"
)

// TestEveryErrorCodeThroughEverySurface sends every error code, and an
// error without one, through the error answer of each surface: the status
// and Retry-After come from the one error path whatever the surface, the
// code reaches the access log, and an internal error shows no detail.
func TestEveryErrorCodeThroughEverySurface(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	cfg := th.Config(t)
	var logs bytes.Buffer
	k := surface.New(slog.New(surface.NewJSONHandler(&logs)), th.NewClock().Now, false, nil)
	surfaces := []struct {
		name string
		fail func(*gin.Context, error)
		html bool
	}{
		{"api", api.New(k, api.Deps{Config: cfg}).Fail, false},
		{"dashboard", dashboard.New(k, dashboard.Deps{Config: cfg}).Fail, true},
		{"hosted", hosted.New(k, nil, 1, 1).Fail, true},
	}
	type errCase struct {
		name       string
		err        error
		status     int
		code       errs.Code
		retryAfter string
	}
	var cases []errCase
	for _, code := range surface.Codes() {
		c := errCase{name: string(code), err: errs.New(code, "The message of "+string(code)+"."), status: surface.StatusOf(code), code: code}
		switch code {
		case errs.RateLimited:
			c.err, c.retryAfter = surface.RateLimited("The message of rate_limited.", 1500*time.Millisecond), "2"
		case errs.ServiceUnavailable:
			c.retryAfter = "5"
		}
		cases = append(cases, c)
	}
	cases = append(cases, errCase{name: "no code", err: errors.New("secret detail of a bug"), status: 500, code: errs.Internal})
	if len(cases) < 40 {
		t.Fatalf("only %d codes in the table", len(cases)-1)
	}
	for _, tc := range cases {
		for _, s := range surfaces {
			r := gin.New()
			r.Use(k.WithRequestID, k.Observe)
			r.GET("/fail", func(c *gin.Context) { s.fail(c, tc.err) })
			logs.Reset()
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/fail", nil))
			where := s.name + " " + tc.name
			if w.Code != tc.status {
				t.Errorf("%s: status %d, want %d", where, w.Code, tc.status)
			}
			if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("%s: Retry-After %q, want %q", where, got, tc.retryAfter)
			}
			if !strings.Contains(logs.String(), `"error_code":"`+string(tc.code)+`"`) && !(s.name == "dashboard" && tc.status == 404) {
				t.Errorf("%s: the access log lacks the code:\n%s", where, logs.String())
			}
			body := w.Body.String()
			if strings.Contains(body, "secret detail") {
				t.Errorf("%s: the answer shows an internal detail:\n%s", where, body)
			}
			if tc.code == errs.Internal && !strings.Contains(logs.String(), `"level":"ERROR"`) {
				t.Errorf("%s: an internal error is not logged at error level:\n%s", where, logs.String())
			}
			ct := w.Header().Get("Content-Type")
			if s.html {
				if !strings.HasPrefix(ct, "text/html") || w.Header().Get("Content-Security-Policy") == "" {
					t.Errorf("%s: Content-Type %q, CSP %q: want a page", where, ct, w.Header().Get("Content-Security-Policy"))
				}
				continue
			}
			var env struct {
				Success bool `json:"success"`
				Error   struct {
					Code      string `json:"code"`
					Message   string `json:"message"`
					RequestID string `json:"request_id"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Success || env.Error.Code != string(tc.code) ||
				!strings.HasPrefix(env.Error.RequestID, "req_") {
				t.Errorf("%s: envelope %s (%v)", where, body, err)
			}
		}
	}
}
