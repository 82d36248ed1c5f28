// Package requestlog keeps the last 7 days of each environment's API
// requests for the dashboard: when, method, path, status, request id and
// latency; never a header or a body.
//
// Recording must cost the request path nothing measurable: no statement,
// no read, no wait. Record appends the entry to a bounded in-memory ring
// under a mutex held for a copy; when the ring is full (the database is
// slow or down) the OLDEST entry gives way and is counted (Dropped, served
// in /metrics), because the newest requests are the ones a person opens
// the log to see. Nothing on the request path reads the log back.
//
// Run drains the ring in the background every Interval, or as soon as a
// batch's worth is waiting, and hands each batch to the store in one call,
// which writes a row per merchant environment and second of arrivals
// (package postgres): a few bytes per request, not a row and an index
// entry.
// Every request id is made by the server (an incoming X-Request-Id is
// ignored), so an id never arrives twice. A batch that fails to write is
// logged and lost: the log is for people looking at recent traffic, not
// an audit trail. Flush writes what is buffered at once: the dashboard
// calls it before it reads, so a person sees their own requests, and Run
// calls it when the process stops. Purge deletes what is older than
// Retention and runs with the process's other retention sweeps.
//
// A page of the log starts after a Cursor, the arrival time and request
// id of the previous page's last entry, so a page is read from where it
// starts whatever the log holds; Entry.Cursor writes it for a link and
// Search reads it back.
package requestlog

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Retention is how long requests are kept.
const Retention = 7 * 24 * time.Hour

// Buffer is how many entries wait for the database at most; past it the
// oldest waiting entry is dropped for each new one.
const Buffer = 8192

// BatchSize is the most entries one COPY writes.
const BatchSize = 500

// Interval is how long an entry waits in the buffer at most while Run runs.
const Interval = 500 * time.Millisecond

// MaxPath is the longest path kept; longer ones are cut.
const MaxPath = 300

// Entry is one API request.
type Entry struct {
	Scope     tenant.Scope
	RequestID string        // req_…, made by the server, never repeated
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

// Cursor is where a page of the log starts: after the entry that arrived
// at At with RequestID, in the newest-first order of (At, RequestID).
// The zero Cursor starts at the newest entry.
type Cursor struct {
	At        time.Time
	RequestID string
}

// Before reports whether an entry that arrived at at with id comes after
// c in a newest-first list: c is zero or (at, id) < (c.At, c.RequestID).
func (c Cursor) Before(at time.Time, id string) bool {
	if c.At.IsZero() {
		return true
	}
	return at.Before(c.At) || (at.Equal(c.At) && id < c.RequestID)
}

// Cursor is the cursor of the page that follows e: its arrival in
// microseconds since 1970, a dot and its request id.
func (e Entry) Cursor() string {
	return strconv.FormatInt(e.At.UnixMicro(), 10) + "." + e.RequestID
}

// ParseCursor reads a cursor that Entry.Cursor wrote; ok is false for
// anything else.
func ParseCursor(s string) (c Cursor, ok bool) {
	micros, id, found := strings.Cut(s, ".")
	us, err := strconv.ParseInt(micros, 10, 64)
	if !found || err != nil || us <= 0 || !strings.HasPrefix(id, "req_") {
		return Cursor{}, false
	}
	return Cursor{At: time.UnixMicro(us).UTC(), RequestID: id}, true
}

// Matches reports whether e passes f.
func (f Filter) Matches(e Entry) bool {
	return (f.Method == "" || e.Method == f.Method) && (f.Class == 0 || e.Status/100 == f.Class) &&
		(f.RequestID == "" || e.RequestID == f.RequestID)
}

// Store writes and reads the log.
type Store interface {
	// InsertRequests writes entries, whose request ids are new.
	InsertRequests(ctx context.Context, entries []Entry) error
	// ListRequests returns up to limit requests of the scope, newest
	// first, that arrived since since, come after the cursor and match f.
	ListRequests(ctx context.Context, scope tenant.Scope, f Filter, since time.Time, after Cursor, limit int) ([]Entry, error)
	// DeleteRequestsBefore deletes requests older than t, at most limit
	// stored rows in one statement, and returns how many requests it
	// deleted and whether all such rows are gone.
	DeleteRequestsBefore(ctx context.Context, t time.Time, limit int) (deleted int64, done bool, err error)
}

// Log records and lists API requests.
type Log struct {
	store Store
	now   func() time.Time
	log   *slog.Logger

	mu   sync.Mutex
	ring []Entry // len Buffer; the waiting entries are ring[head], ring[head+1], … (mod Buffer); guarded by mu
	head int     // index of the oldest waiting entry; guarded by mu
	n    int     // how many entries wait; guarded by mu

	// writing lets one drain write at a time (Run's or Flush's), so
	// batches reach the database in the order they were recorded.
	writing sync.Mutex
	// full wakes Run when a batch's worth waits; it holds one token at most.
	full    chan struct{}
	dropped atomic.Int64
}

// New returns a Log writing to store.
func New(store Store, now func() time.Time, log *slog.Logger) *Log {
	return &Log{store: store, now: now, log: log, ring: make([]Entry, Buffer), full: make(chan struct{}, 1)}
}

// Record buffers e without waiting; when the buffer is full, the oldest
// waiting entry is dropped to make room.
func (l *Log) Record(e Entry) {
	if len(e.Path) > MaxPath {
		e.Path = e.Path[:MaxPath]
	}
	l.mu.Lock()
	if l.n == len(l.ring) {
		l.ring[l.head] = e
		l.head = (l.head + 1) % len(l.ring)
		l.mu.Unlock()
		l.dropped.Add(1)
		return
	}
	l.ring[(l.head+l.n)%len(l.ring)] = e
	l.n++
	batch := l.n == BatchSize
	l.mu.Unlock()
	if batch {
		select {
		case l.full <- struct{}{}:
		default:
		}
	}
}

// Dropped is how many entries a full buffer dropped since the start.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// take removes and returns up to max of the oldest waiting entries.
func (l *Log) take(max int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := min(max, l.n)
	out := make([]Entry, k)
	for i := range k {
		j := (l.head + i) % len(l.ring)
		out[i], l.ring[j] = l.ring[j], Entry{}
	}
	l.head = (l.head + k) % len(l.ring)
	l.n -= k
	return out
}

// Run writes buffered entries every Interval, or as soon as a batch's
// worth waits, until ctx ends; then it writes what is left and returns.
func (l *Log) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-l.full:
		case <-t.C:
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := l.Flush(final); err != nil {
				l.log.Warn("request log: entries were not written at shutdown", slog.Any("error", err))
			}
			cancel()
			return
		}
		if err := l.Flush(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("request log: a batch was not written", slog.Any("error", err))
		}
	}
}

// Flush writes the entries buffered when it starts (not those recorded
// while it writes, so it ends under any load), in batches of BatchSize.
// A batch that fails is not kept; Flush goes on with the next and returns
// the first error. When ctx ends it stops, leaving the rest buffered.
func (l *Log) Flush(ctx context.Context) error {
	l.writing.Lock()
	defer l.writing.Unlock()
	l.mu.Lock()
	left := l.n
	l.mu.Unlock()
	var first error
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("flush the request log, %d entries left: %w", left, err)
		}
		batch := l.take(min(left, BatchSize))
		if len(batch) == 0 {
			break // a full buffer dropped what was waiting
		}
		left -= len(batch)
		if err := l.store.InsertRequests(ctx, batch); err != nil && first == nil {
			first = fmt.Errorf("write a batch of %d requests to the request log: %w", len(batch), err)
		}
	}
	return first
}

// Search returns a page of the scope's requests of the last Retention that
// match f, newest first; p.StartingAfter is a cursor from Entry.Cursor. An
// unknown method, status class or cursor is invalid_request.
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
	var after Cursor
	if p.StartingAfter != "" {
		var ok bool
		if after, ok = ParseCursor(p.StartingAfter); !ok {
			return nil, false, paging.UnknownCursor()
		}
	}
	f.RequestID = strings.TrimSpace(f.RequestID)
	items, err := l.store.ListRequests(ctx, scope, f, l.now().Add(-Retention), after, p.Limit+1)
	if err != nil {
		err = fmt.Errorf("search the requests of merchant %s: %w", scope.MerchantID, err)
	}
	return paging.Result(items, err, p)
}

// Purge deletes requests older than Retention, in batches, and returns how
// many it deleted.
func (l *Log) Purge(ctx context.Context) (int64, error) {
	cutoff := l.now().Add(-Retention)
	var total int64
	for {
		n, done, err := l.store.DeleteRequestsBefore(ctx, cutoff, 5000)
		total += n
		if err != nil {
			return total, fmt.Errorf("purge requests before %s after %d deleted: %w", cutoff.Format(time.RFC3339), total, err)
		}
		if done {
			return total, nil
		}
	}
}
