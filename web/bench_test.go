package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// BenchmarkCreateCustomer measures POST /v2/customers with an Idempotency-Key
// through the engine on the throwaway PostgreSQL (fsync off: this measures
// the service's own overhead, not the disk).
func BenchmarkCreateCustomer(b *testing.B) {
	h := newHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	benchmarkKeyedPost(b, h, key, "/v2/customers", func(i int64) string {
		return fmt.Sprintf(`{"first_name":"A","last_name":"B","email":"c%d@example.com"}`, i)
	})
}

// BenchmarkCreateFundingSource measures POST /v2/funding-source with an
// Idempotency-Key: one statement per creation.
func BenchmarkCreateFundingSource(b *testing.B) {
	h := newHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	user := h.Customer(key)
	benchmarkKeyedPost(b, h, key, "/v2/funding-source", func(i int64) string {
		return th.SourceBody(user, "021000021", fmt.Sprintf("7%011d", i))
	})
}

// benchmarkKeyedPost sends POSTs to path with the i-th body and a new
// Idempotency-Key each, in parallel, and requires 200.
func benchmarkKeyedPost(b *testing.B, h *harness, key, path string, body func(i int64) string) {
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

// BenchmarkGetCustomer measures GET /v2/customers/{id}.
func BenchmarkGetCustomer(b *testing.B) {
	h := newHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	id := th.WantOK(h.T, h.Post("/v2/customers", key, ada))["user_id"].(string)
	benchmarkGet(b, h, key, "/v2/customers/"+id)
}

// BenchmarkGetFundingSource measures GET /v2/funding-source/{id}.
func BenchmarkGetFundingSource(b *testing.B) {
	h := newHarness(b)
	key := h.Merchant("Bench").Sandbox.SecretKey
	benchmarkGet(b, h, key, "/v2/funding-source/"+h.Source(key, h.Customer(key), "123456789"))
}

// benchmarkGet sends GETs of path in parallel and requires 200.
func benchmarkGet(b *testing.B, h *harness, key, path string) {
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
	s := newHostedSetup(b)
	if _, err := s.h.Funding.InitiateVerification(context.Background(), s.scope, s.src); err != nil {
		b.Fatal(err)
	}
	path := s.path(okQuery())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			w := httptest.NewRecorder()
			s.h.Engine.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}
