package surface

import (
	"net/http"
	"strconv"
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
	m.registry.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the series in Prometheus's format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
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
