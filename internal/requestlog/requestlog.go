// Package requestlog keeps the last 7 days of each environment's API
// requests for the dashboard: when, method, path, status, request id and
// latency; never a header or a body.
//
// Recording must cost the request path nothing measurable, so Record only
// puts the entry into a bounded buffer without waiting: when the buffer is
// full (the database is slow or down), the entry is dropped and counted,
// and the API answers as if nothing happened. Run drains the buffer in
// batches, one multi-row INSERT per batch, on one background connection.
// The log is for people looking at recent traffic, not an audit trail, so
// losing entries under overload is the right trade. Flush writes what is
// buffered at once: the dashboard calls it before it reads, so a person
// sees their own requests. Purge deletes what is older than Retention and
// runs with the process's other retention sweeps.
package requestlog

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Retention is how long requests are kept.
const Retention = 7 * 24 * time.Hour

// Buffer is how many entries wait for the database at most; more are dropped.
const Buffer = 8192

// BatchSize is the most entries one INSERT writes.
const BatchSize = 500

// Interval is how long an entry waits in the buffer at most while Run runs.
const Interval = 500 * time.Millisecond

// MaxPath is the longest path kept; longer ones are cut.
const MaxPath = 300

// Entry is one API request.
type Entry struct {
	Scope     tenant.Scope
	RequestID string        // req_…
	At        time.Time     // when it arrived, UTC
	Method    string        // GET, POST, …
	Path      string        // without the query
	Status    int           // the HTTP status answered
	Latency   time.Duration // from arrival to the answer
}

// Filter narrows a list of requests; an empty field matches everything.
type Filter struct {
	Method    string
	Class     int    // 2, 4 or 5: the status's hundreds
	RequestID string // one request
}

// Store writes and reads the log.
type Store interface {
	// InsertRequests writes entries; a request id already written is skipped.
	InsertRequests(ctx context.Context, entries []Entry) error
	// ListRequests returns up to p.Limit+1 requests of the scope since
	// since that match f, newest first.
	ListRequests(ctx context.Context, scope tenant.Scope, f Filter, since time.Time, p paging.Page) ([]Entry, error)
	// DeleteRequestsBefore deletes up to limit requests older than t.
	DeleteRequestsBefore(ctx context.Context, t time.Time, limit int) (int64, error)
}

// Log records and lists API requests.
type Log struct {
	store   Store
	now     func() time.Time
	log     *slog.Logger
	queue   chan Entry
	dropped atomic.Int64
}

// New returns a Log writing to store.
func New(store Store, now func() time.Time, log *slog.Logger) *Log {
	return &Log{store: store, now: now, log: log, queue: make(chan Entry, Buffer)}
}

// Record queues e without waiting; a full buffer drops it.
func (l *Log) Record(e Entry) {
	if len(e.Path) > MaxPath {
		e.Path = e.Path[:MaxPath]
	}
	select {
	case l.queue <- e:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is how many entries a full buffer dropped since the start.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Run writes queued entries every Interval, or as soon as a batch is full,
// until ctx ends; then it writes what is left and returns.
func (l *Log) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	batch := make([]Entry, 0, BatchSize)
	write := func(ctx context.Context) {
		if len(batch) == 0 {
			return
		}
		if err := l.store.InsertRequests(ctx, batch); err != nil {
			l.log.Warn("request log: a batch was not written", slog.Int("entries", len(batch)), slog.Any("error", err))
		}
		batch = batch[:0]
	}
	for {
		select {
		case e := <-l.queue:
			if batch = append(batch, e); len(batch) == BatchSize {
				write(ctx)
			}
		case <-t.C:
			write(ctx)
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			write(final)
			_ = l.Flush(final)
			cancel()
			return
		}
	}
}

// Flush writes every entry queued now.
func (l *Log) Flush(ctx context.Context) error {
	for {
		batch := make([]Entry, 0, BatchSize)
	drain:
		for len(batch) < BatchSize {
			select {
			case e := <-l.queue:
				batch = append(batch, e)
			default:
				break drain
			}
		}
		if len(batch) == 0 {
			return nil
		}
		if err := l.store.InsertRequests(ctx, batch); err != nil {
			return err
		}
	}
}

// Search returns a page of the scope's requests of the last Retention that
// match f, newest first. An unknown method or status class is invalid_request.
func (l *Log) Search(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Entry, bool, error) {
	switch f.Method {
	case "", "GET", "POST", "DELETE":
	default:
		return nil, false, errs.Invalid("method", "method must be GET, POST or DELETE")
	}
	switch f.Class {
	case 0, 2, 4, 5:
	default:
		return nil, false, errs.Invalid("status", "status must be 2xx, 4xx or 5xx")
	}
	f.RequestID = strings.TrimSpace(f.RequestID)
	items, err := l.store.ListRequests(ctx, scope, f, l.now().Add(-Retention), p)
	return paging.Result(items, err, p)
}

// Purge deletes requests older than Retention, in batches, and returns how
// many it deleted.
func (l *Log) Purge(ctx context.Context) (int64, error) {
	cutoff := l.now().Add(-Retention)
	var total int64
	for {
		n, err := l.store.DeleteRequestsBefore(ctx, cutoff, 5000)
		total += n
		if err != nil || n < 5000 {
			return total, err
		}
	}
}
