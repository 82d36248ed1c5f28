package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// BenchmarkCreateCustomer measures POST /v2/customers with an Idempotency-Key
// through the engine on the throwaway PostgreSQL (fsync off: this measures
// the service's own overhead, not the disk).
func BenchmarkCreateCustomer(b *testing.B) {
	h := webtest.NewHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	benchmarkKeyedPost(b, h, key, "/v2/customers", func(i int64) string {
		return fmt.Sprintf(`{"first_name":"A","last_name":"B","email":"c%d@example.com"}`, i)
	})
}

// BenchmarkCreateFundingSource measures POST /v2/funding-source with an
// Idempotency-Key: one statement per creation.
func BenchmarkCreateFundingSource(b *testing.B) {
	h := webtest.NewHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	user := h.Customer(key)
	benchmarkKeyedPost(b, h, key, "/v2/funding-source", func(i int64) string {
		return th.SourceBody(user, "021000021", fmt.Sprintf("7%011d", i))
	})
}

// benchmarkKeyedPost sends POSTs to path with the i-th body and a new
// Idempotency-Key each, in parallel, and requires 200.
func benchmarkKeyedPost(b *testing.B, h *webtest.Harness, key, path string, body func(i int64) string) {
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body(i)))
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", i))
			w := httptest.NewRecorder()
			h.Engine.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkGetCustomer measures GET /v2/customers/{id}. (A funding
// source's GET has its own benchmarks in web/api, beside the bare answer.)
func BenchmarkGetCustomer(b *testing.B) {
	h := webtest.NewHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	id := th.WantOK(h.T, h.Post("/v2/customers", key, webtest.Ada))["user_id"].(string)
	benchmarkGet(b, h, key, "/v2/customers/"+id)
}

// benchmarkGet sends GETs of path in parallel and requires 200.
func benchmarkGet(b *testing.B, h *webtest.Harness, key, path string) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			w := httptest.NewRecorder()
			h.Engine.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkHostedPage measures the hosted page's GET of a source whose
// micro-deposits are on their way, with a successUrl and a cancelUrl.
func BenchmarkHostedPage(b *testing.B) {
	s := webtest.NewHostedSetup(b)
	if _, err := s.H.Funding.InitiateVerification(context.Background(), s.Scope, s.Src); err != nil {
		b.Fatal(err)
	}
	path := s.Path(webtest.OkQuery())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			w := httptest.NewRecorder()
			s.H.Engine.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkInstantVerification measures one instant verification from
// initiation to Verified through the API (initiate, read the sandbox code,
// verify), against the rail simulator over HTTP, and reports the p50 and
// p99 of the whole in milliseconds.
func BenchmarkInstantVerification(b *testing.B) {
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	defer rail.Close()
	h := webtest.NewHarness(b, th.WithRail(rail.URL))
	key := h.Merchant("Bench").Sandbox.SecretKey
	user := h.Customer(key)
	post := func(path, body string) map[string]any {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%s: status %d: %s", path, w.Code, w.Body)
		}
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return out
	}
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = post("/v2/funding-source", th.SourceBody(user, "110000000", fmt.Sprintf("8%011d", i)))["funding_source_id"].(string)
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		post("/v2/funding-source/initiate/verification", `{"funding_source_id":"`+ids[i]+`","method":"instant"}`)
		r := httptest.NewRequest(http.MethodGet, "/v2/sandbox/funding-source/"+ids[i]+"/micro-deposits", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		var sb struct{ Code string }
		_ = json.Unmarshal(w.Body.Bytes(), &sb)
		if got := post("/v2/funding-source/verify", th.CodeBody(ids[i], sb.Code)); got["status"] != "Verified" {
			b.Fatalf("not verified: %v", got)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
