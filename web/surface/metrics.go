package surface

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus series served at /metrics: on the main
// listener, or on METRICS_ADDR alone (Handler).
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// series are the children of requests and latency by route, method
	// and status, looked up once: a lookup by label values hashes and
	// checks every value, on every request. The map is replaced, never
	// changed, so a request reads it without a lock; adding (a new route,
	// method or status) copies it under mu.
	series atomic.Pointer[map[seriesKey]*requestSeries]
	mu     sync.Mutex
}

// maxSeries bounds series: past it (methods nobody serves, each a series
// of its own) a request looks its children up by label values instead.
const maxSeries = 4096

type seriesKey struct {
	route, method string
	status        int
}

type requestSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics returns the series with their own registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fundsource_http_requests_total",
			Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fundsource_http_request_duration_seconds",
			Help:    "HTTP request latency by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	m.series.Store(&map[seriesKey]*requestSeries{})
	m.registry.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the series in Prometheus's format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	k := seriesKey{route: route, method: method, status: status}
	rs, ok := (*m.series.Load())[k]
	if !ok {
		rs = m.children(k)
	}
	rs.requests.Inc()
	rs.latency.Observe(d.Seconds())
}

// children are the series of k, kept for the next request while there
// are fewer than maxSeries.
func (m *Metrics) children(k seriesKey) *requestSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if rs, ok := old[k]; ok {
		return rs
	}
	rs := &requestSeries{requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		latency: m.latency.WithLabelValues(k.route, k.method)}
	if len(old) >= maxSeries {
		return rs
	}
	next := make(map[seriesKey]*requestSeries, len(old)+1)
	maps.Copy(next, old)
	next[k] = rs
	m.series.Store(&next)
	return rs
}

// CounterFunc serves a counter named name whose value f reads when
// /metrics is scraped: a count kept elsewhere (the request log's drops)
// costs its owner nothing per increment here. A name registered before
// keeps its first function.
func (m *Metrics) CounterFunc(name, help string, f func() int64) {
	_ = m.registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
		func() float64 { return float64(f()) }))
}

// GaugeFunc serves a gauge named name whose value f reads when /metrics
// is scraped. A name registered before keeps its first function.
func (m *Metrics) GaugeFunc(name, help string, f func() int64) {
	_ = m.registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
		func() float64 { return float64(f()) }))
}
