package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// BenchmarkGetFundingSource measures one authenticated GET
// /v2/funding-source/{id} at a time through the engine the tests use, on
// the throwaway PostgreSQL, with the request log draining in the
// background as a server's does: the whole middleware chain (request id,
// access log and metrics, authentication from the key cache, request log)
// and the handler's one statement and encoding. On a shared machine the
// time per request follows the neighbours' load; cpu-ns/op, the processor
// time of this process (not PostgreSQL's) per request, follows far less.
// Run it with -cpuprofile to see the middleware's share beside the
// database round trip.
func BenchmarkGetFundingSource(b *testing.B) {
	h := webtest.NewHarness(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Svc.Requests.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	key := h.Merchant("Bench").Sandbox.SecretKey
	path := "/v2/funding-source/" + h.Source(key, h.Customer(key), "123456789")
	get := func() {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	get() // the key is in the cache, the statement prepared
	loopGets(b, h, get)
}

// loopGets runs get b.N times and reports, beside ns/op and allocs/op,
// the processor time this process spent per get.
func loopGets(b *testing.B, h *webtest.Harness, get func()) {
	b.ReportAllocs()
	i, cpu0 := 0, processCPU(b)
	for b.Loop() {
		get()
		// The access log goes to the harness's buffer: emptied now and then,
		// it costs a copy per line as a server's buffered log does.
		if i++; i%1024 == 0 {
			h.Logs.Reset()
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the processor time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkLoopbackGET compares, over a loopback connection kept alive,
// the service's GET of a funding source (service) with the least a Go
// server does for the same answer (bare: the store's statement and
// json.Marshal, as the lab's bare server does), on one database. Server
// and client share this process, so the difference of their cpu-ns/op
// is what the service costs beyond the bare answer, outside PostgreSQL;
// a real connection also shows what httptest's recorder hides (headers
// written, cold caches between the goroutines of a request).
func BenchmarkLoopbackGET(b *testing.B) {
	h := webtest.NewHarness(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Svc.Requests.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	m := h.Merchant("Bench")
	key := m.Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "123456789")
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src, err := h.Svc.DB.SourceAnswer(r.Context(), scope, strings.TrimPrefix(r.URL.Path, "/v2/funding-source/"))
		var body []byte
		if err == nil {
			body, err = json.Marshal(src)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"service", h.Engine}, {"bare", bare}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			client := srv.Client()
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/v2/funding-source/"+id, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			get := func() {
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			get()
			loopGets(b, h, get)
		})
	}
}
