// Package loadgen runs an operation from many workers for a while and
// reports throughput and latency percentiles, for `fundsource bench`.
package loadgen

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one measured load.
type Result struct {
	Name    string        `json:"name"`
	Workers int           `json:"workers"`
	Ops     int           `json:"ops"`    // operations that succeeded
	Errors  int           `json:"errors"` // operations that failed
	Seconds float64       `json:"seconds"`
	PerSec  float64       `json:"per_second"` // successful operations per second
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	// FirstError describes the first failure, "" when none.
	FirstError string `json:"first_error,omitempty"`

	latencies []time.Duration // sorted, for Merge
}

// Merge combines runs of the same operation (one load measured in several
// parts) into one result, with percentiles over all their latencies.
func Merge(parts ...Result) Result {
	var r Result
	for _, p := range parts {
		if r.Name == "" {
			r.Name, r.Workers = p.Name, p.Workers
		}
		r.Ops += p.Ops
		r.Errors += p.Errors
		r.Seconds += p.Seconds
		r.latencies = append(r.latencies, p.latencies...)
		if r.FirstError == "" {
			r.FirstError = p.FirstError
		}
	}
	slices.Sort(r.latencies)
	if r.Seconds > 0 {
		r.PerSec = float64(r.Ops) / r.Seconds
	}
	r.P50, r.P99 = Percentile(r.latencies, 0.50), Percentile(r.latencies, 0.99)
	return r
}

// Run calls op from workers goroutines until d has passed (or ctx ends).
// seq numbers every call across workers, from 0.
func Run(ctx context.Context, name string, workers int, d time.Duration, op func(ctx context.Context, seq int64) error) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		next     atomic.Int64
		mu       sync.Mutex
		all      []time.Duration
		errCount int
		firstErr string
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			var lat []time.Duration
			fails := 0
			var first string
			for ctx.Err() == nil {
				t0 := time.Now()
				err := op(ctx, next.Add(1)-1)
				if ctx.Err() != nil {
					break // cut off by the end of the run: not counted
				}
				if err != nil {
					fails++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			errCount += fails
			if firstErr == "" {
				firstErr = first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	slices.Sort(all)
	return Result{Name: name, Workers: workers, Ops: len(all), Errors: errCount, Seconds: secs,
		PerSec: float64(len(all)) / secs, P50: Percentile(all, 0.50), P99: Percentile(all, 0.99), FirstError: firstErr,
		latencies: all}
}

// Sequence calls op n times, one after another (i from 0), and reports
// their latencies as one worker's load.
func Sequence(ctx context.Context, name string, n int, op func(ctx context.Context, i int) error) Result {
	var all []time.Duration
	errCount, firstErr := 0, ""
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		if err := op(ctx, i); err != nil {
			errCount++
			if firstErr == "" {
				firstErr = err.Error()
			}
			continue
		}
		all = append(all, time.Since(t0))
	}
	secs := time.Since(start).Seconds()
	slices.Sort(all)
	return Result{Name: name, Workers: 1, Ops: len(all), Errors: errCount, Seconds: secs,
		PerSec: float64(len(all)) / secs, P50: Percentile(all, 0.50), P99: Percentile(all, 0.99), FirstError: firstErr,
		latencies: all}
}

// Percentile of sorted latencies (nearest rank); 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
