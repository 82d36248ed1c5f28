package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

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
