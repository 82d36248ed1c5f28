package surface

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
)

// TestAccessLineIsSlogsLine: the access log's own line is byte for byte
// the line slog.NewJSONHandler(w, nil) writes for the same record, over
// latencies of every size, times in several zones, with and without a
// principal, an error code and an unmatched path; lines it cannot make
// so (strings to escape, a year past 9999) go through slog.
func TestAccessLineIsSlogsLine(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	times := []time.Time{
		time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC),
		time.Date(2026, 11, 2, 15, 4, 5, 123456789, time.UTC),
		time.Date(2026, 3, 8, 2, 30, 0, 100, ny),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", 5*3600+1800)),
		time.Now(), // with a monotonic reading
	}
	latencies := []time.Duration{0, time.Microsecond, 999 * time.Nanosecond, 52 * time.Microsecond, time.Millisecond,
		1234567 * time.Microsecond, 10 * time.Second, 100 * time.Hour, 1e12*time.Microsecond - 1, 1e12 * time.Microsecond,
		1<<63 - 1, -time.Millisecond}
	for range 200 {
		latencies = append(latencies, time.Duration(rand.Int64N(int64(time.Hour))),
			time.Duration(rand.Int64N(int64(time.Second))), time.Duration(rand.Int64N(1<<62)))
	}
	for us := range int64(3000) {
		latencies = append(latencies, time.Duration(us)*time.Microsecond)
	}
	cases := []access{
		{requestID: "req_abcdefghijklmnopqrstuvwxyz", method: "GET", route: "/v2/funding-source/:funding_source_id", status: 200},
		{requestID: "req_abc", method: "POST", route: "/v2/customers", status: 401, errorCode: "unauthorized"},
		{requestID: "req_abc", method: "GET", route: "/v2/customers", status: 200, principal: true,
			merchantID: "mer_x", environment: "sandbox"},
		{requestID: "req_abc", method: "GET", route: "/v2/customers", status: 404, principal: true, errorCode: "not_found"},
		{requestID: "req_abc", method: "DELETE", route: "unmatched", status: 404, errorCode: "route_not_found",
			unmatched: true, path: "/v2/no-such-thing/%C3%A9"},
		{requestID: "", method: "GET", route: "unmatched", status: 404, unmatched: true},
	}
	slogOnly := []access{
		{requestID: "req_abc", method: "GET", route: "unmatched", status: 404, unmatched: true, path: "/caf\u00e9"},
		{requestID: "req_abc", method: "GE\"T", route: "/x", status: 200},
		{requestID: "req_abc", method: "GET", route: "/x\\y", status: 200},
		{requestID: "req_abc\n", method: "GET", route: "/x", status: 200},
		{requestID: "req_abc", method: "GET", route: "/x", status: 200, principal: true, merchantID: "mer_\u2028"},
	}
	check := func(a access, at time.Time, wantOwn bool) {
		t.Helper()
		var want bytes.Buffer
		if err := slog.NewJSONHandler(&want, nil).Handle(context.Background(), a.record(at)); err != nil {
			t.Fatal(err)
		}
		line, ok := a.appendLine(nil, at)
		if ok != wantOwn {
			t.Fatalf("%+v at %v: own line %v, want %v", a, at, ok, wantOwn)
		}
		if ok && string(line) != want.String() {
			t.Fatalf("%+v at %v:\n own  %s slog %s", a, at, line, want.String())
		}
		var got bytes.Buffer
		logAccess(context.Background(), NewJSONHandler(&got), &a, at)
		if got.String() != want.String() {
			t.Fatalf("%+v at %v: logAccess wrote\n%s want\n%s", a, at, got.String(), want.String())
		}
	}
	for _, a := range cases {
		for _, at := range times {
			for _, d := range latencies {
				a.latency = d
				check(a, at, true)
			}
		}
	}
	for _, a := range slogOnly {
		check(a, times[1], false)
	}
	check(cases[0], time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false)
}

// TestObserveWritesOneLinePerRequest: through the middleware, each
// request's line names its fields, on a JSONHandler and on any other
// handler alike.
func TestObserveWritesOneLinePerRequest(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"JSONHandler": func(b *bytes.Buffer) slog.Handler { return NewJSONHandler(b) },
		"slog":        func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"with attrs": func(b *bytes.Buffer) slog.Handler {
			return NewJSONHandler(b).WithAttrs([]slog.Attr{slog.String("service", "fundsource")})
		},
	} {
		var logs bytes.Buffer
		k := New(slog.New(h(&logs)), time.Now, false, nil)
		r := gin.New()
		r.Use(k.WithRequestID, k.Observe)
		r.GET("/v2/things/:id", func(c *gin.Context) {
			SetPrincipal(c, merchant.Principal{Scope: tenant.Scope{MerchantID: "mer_1", Env: tenant.Sandbox}})
			c.Status(http.StatusNoContent)
		})
		for range 3 {
			r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v2/things/1", nil))
		}
		lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines:\n%s", name, len(lines), logs.String())
		}
		for _, l := range lines {
			for _, want := range []string{`"level":"INFO","msg":"request",`, `"request_id":"req_`, `"method":"GET","route":"/v2/things/:id","status":204,"latency_ms":`,
				`"merchant_id":"mer_1","environment":"sandbox"`} {
				if !strings.Contains(l, want) {
					t.Errorf("%s: line %s lacks %s", name, l, want)
				}
			}
			if name == "with attrs" && !strings.Contains(l, `"service":"fundsource"`) {
				t.Errorf("%s: line %s lacks the handler's own attribute", name, l)
			}
		}
	}
}
