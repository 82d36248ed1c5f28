package requestlog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

// newLog is a Log on a fresh database, with its clock and a raw pool on
// the same database for looking at what it stored.
func newLog(t *testing.T) (*requestlog.Log, *fixture.Clock, *sqlx.DB) {
	t.Helper()
	url := pgtest.URL(t)
	clock := fixture.NewClock()
	return requestlog.New(pgtest.Open(t, url).Requests(), clock.Now, fixture.Discard()), clock, pgtest.Pool(t, url)
}

func entry(scope tenant.Scope, n int, at time.Time, method string, status int) requestlog.Entry {
	return requestlog.Entry{Scope: scope, RequestID: fmt.Sprintf("req_%04d", n), At: at, Method: method,
		Path: "/v2/customers", Status: status, Latency: time.Duration(n) * time.Millisecond}
}

func TestRecordFlushSearchAndPurge(t *testing.T) {
	t.Parallel()
	l, clock, _ := newLog(t)
	acme := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	other := tenant.Scope{MerchantID: "mer_other", Env: tenant.Sandbox}
	now := clock.Now()
	l.Record(entry(acme, 1, now.Add(-8*24*time.Hour), "GET", 200)) // past retention
	l.Record(entry(acme, 2, now.Add(-3*time.Second), "GET", 200))
	l.Record(entry(acme, 3, now.Add(-2*time.Second), "POST", 400))
	l.Record(entry(acme, 4, now.Add(-time.Second), "POST", 201))
	l.Record(entry(other, 5, now, "GET", 500))
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	page := paging.Page{Limit: 10}
	for _, c := range []struct {
		name string
		f    requestlog.Filter
		want []string
	}{
		{"the last 7 days, newest first", requestlog.Filter{}, []string{"req_0004", "req_0003", "req_0002"}},
		{"POST", requestlog.Filter{Method: "POST"}, []string{"req_0004", "req_0003"}},
		{"4xx", requestlog.Filter{Class: 4}, []string{"req_0003"}},
		{"by id", requestlog.Filter{RequestID: " req_0002 "}, []string{"req_0002"}},
		{"another merchant's id", requestlog.Filter{RequestID: "req_0005"}, nil},
	} {
		got, _, err := l.Search(ctx, acme, c.f, page)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.RequestID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.name, ids, c.want)
		}
	}
	got, _, _ := l.Search(ctx, acme, requestlog.Filter{RequestID: "req_0003"}, page)
	if len(got) != 1 || got[0].Latency != 3*time.Millisecond || got[0].Path != "/v2/customers" || got[0].Status != 400 || !got[0].At.Equal(now.Add(-2*time.Second)) {
		t.Errorf("entry read back: %+v", got)
	}
	for _, bad := range []requestlog.Filter{{Method: "PATCH"}, {Class: 3}} {
		if _, _, err := l.Search(ctx, acme, bad, page); errs.CodeOf(err) != errs.InvalidRequest {
			t.Errorf("filter %+v: %v, want invalid_request", bad, err)
		}
	}
	if n, err := l.Purge(ctx); err != nil || n != 1 {
		t.Errorf("purge = %d, %v; want the one request past retention", n, err)
	}
}

// TestAFullBufferDropsTheOldestAndNeverWaits: past Buffer entries each
// new one pushes out the oldest waiting one, counted in Dropped, and
// Record returns at once; a flush writes the newest Buffer entries.
func TestAFullBufferDropsTheOldestAndNeverWaits(t *testing.T) {
	t.Parallel()
	l, clock, raw := newLog(t)
	scope := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	start := time.Now()
	for i := range requestlog.Buffer + 10 {
		l.Record(entry(scope, i, clock.Now().Add(time.Duration(i)*time.Microsecond), "GET", 200))
	}
	if d := l.Dropped(); d != 10 {
		t.Errorf("dropped = %d, want the 10 past the buffer", d)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("recording %d entries took %v: Record must not wait", requestlog.Buffer+10, el)
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.Get(&n, `SELECT coalesce(sum(entries), 0) FROM api_request_batches`); err != nil || n != requestlog.Buffer {
		t.Errorf("written: %d, %v; want %d", n, err, requestlog.Buffer)
	}
	page := paging.Page{Limit: 1}
	for _, c := range []struct {
		id   string
		kept bool
	}{
		{"req_0000", false}, {"req_0009", false}, {"req_0010", true},
		{fmt.Sprintf("req_%04d", requestlog.Buffer+9), true},
	} {
		got, _, err := l.Search(ctx, scope, requestlog.Filter{RequestID: c.id}, page)
		if err != nil || (len(got) == 1) != c.kept {
			t.Errorf("%s: %d found, %v; kept %v", c.id, len(got), err, c.kept)
		}
	}
	newest, _, _ := l.Search(ctx, scope, requestlog.Filter{}, page)
	if len(newest) != 1 || newest[0].RequestID != fmt.Sprintf("req_%04d", requestlog.Buffer+9) {
		t.Errorf("newest = %+v", newest)
	}
	// The buffer is empty again: a second flush writes nothing more.
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := raw.Get(&n, `SELECT coalesce(sum(entries), 0) FROM api_request_batches`); err != nil || n != requestlog.Buffer {
		t.Errorf("after a second flush: %d, %v", n, err)
	}
}

// TestFlushWritesInBatchesAndKeepsOrder: more than a batch is written by
// several statements, every entry once, in the order recorded.
func TestFlushWritesInBatchesAndKeepsOrder(t *testing.T) {
	t.Parallel()
	l, clock, raw := newLog(t)
	scope := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	total := 2*requestlog.BatchSize + 7
	for i := range total {
		l.Record(entry(scope, i, clock.Now().Add(time.Duration(i)*time.Millisecond), "GET", 200))
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := raw.Get(&stored, `SELECT coalesce(sum(entries), 0) FROM api_request_batches`); err != nil || stored != total {
		t.Errorf("stored %d entries, %v; want %d", stored, err, total)
	}
	all, _, err := l.Search(ctx, scope, requestlog.Filter{}, paging.Page{Limit: total + 1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range slices.Backward(all) {
		ids = append(ids, e.RequestID)
	}
	if len(ids) != total || ids[0] != "req_0000" || ids[total-1] != fmt.Sprintf("req_%04d", total-1) {
		t.Errorf("written %d entries, first %v", len(ids), ids[:min(3, len(ids))])
	}
	if l.Dropped() != 0 {
		t.Errorf("dropped %d", l.Dropped())
	}
}

func TestRunWritesInTheBackgroundAndFlushesOnStop(t *testing.T) {
	t.Parallel()
	l, clock, _ := newLog(t)
	scope := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); l.Run(runCtx) }()
	l.Record(entry(scope, 1, clock.Now(), "GET", 200))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _, _ := l.Search(ctx, scope, requestlog.Filter{}, paging.Page{Limit: 10})
		if len(got) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run never wrote the entry")
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.Record(entry(scope, 2, clock.Now(), "GET", 200))
	stop()
	<-done
	if got, _, _ := l.Search(ctx, scope, requestlog.Filter{}, paging.Page{Limit: 10}); len(got) != 2 {
		t.Errorf("after stop: %d entries, want 2 (Run writes what is left)", len(got))
	}
}

// BenchmarkRecord is what the request path pays per request: a copy into
// the ring under its mutex (a drop of the oldest once the buffer is full,
// as here after the first Buffer entries, which costs the same).
func BenchmarkRecord(b *testing.B) {
	l := requestlog.New(nil, time.Now, fixture.Discard())
	e := entry(tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}, 1, time.Now(), "GET", 200)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Record(e)
		}
	})
}

// TestPagesWalkTheWholeLogInOrder: entries written by many flushes, for
// interleaved scopes, with arrivals out of order, equal arrival times and
// spans longer than a stored row's, together with rows of the older
// api_requests table, come back page by page through cursors exactly
// once each, newest first, with and without a filter.
func TestPagesWalkTheWholeLogInOrder(t *testing.T) {
	t.Parallel()
	l, clock, raw := newLog(t)
	acme := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	other := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Production}
	now := clock.Now().Truncate(time.Microsecond)
	var want []requestlog.Entry
	n := 0
	for flush := range 12 {
		for i := range 60 {
			// Arrivals step back and forth in 130 ms steps: each flush spans
			// several seconds and the next flush overlaps it in time; every
			// tenth entry shares its arrival with the one before.
			at := now.Add(-time.Hour + time.Duration(flush*40+(i*7)%60)*130*time.Millisecond)
			if i%10 == 9 {
				at = want[len(want)-1].At
			}
			status := 200
			if n%37 == 0 {
				status = 500
			}
			e := entry(acme, n, at, "GET", status)
			want = append(want, e)
			l.Record(e)
			l.Record(entry(other, 10000+n, at, "GET", 200))
			n++
		}
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Rows an older server wrote, arriving among the others.
	for i := range 15 {
		e := entry(acme, 20000+i, now.Add(-time.Hour+time.Duration(i)*time.Second), "POST", 201)
		if _, err := raw.Exec(`INSERT INTO api_requests (merchant_id, environment, id, created_at, method, path, status, latency_us)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, e.Scope.MerchantID, e.Scope.Env, e.RequestID, e.At, e.Method, e.Path, e.Status, e.Latency.Microseconds()); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	var rows int
	if err := raw.Get(&rows, `SELECT count(*) FROM api_request_batches WHERE merchant_id = 'mer_acme' AND environment = 'sandbox'`); err != nil {
		t.Fatal(err)
	}
	if rows < 12*3 {
		t.Errorf("%d stored rows for 12 flushes spanning several seconds each: rows span more than a second", rows)
	}
	slices.SortFunc(want, func(a, b requestlog.Entry) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(b.RequestID, a.RequestID)
	})
	for _, c := range []struct {
		name  string
		f     requestlog.Filter
		limit int
	}{{"all", requestlog.Filter{}, 7}, {"all, one a page", requestlog.Filter{}, 1}, {"5xx", requestlog.Filter{Class: 5}, 3}, {"POST", requestlog.Filter{Method: "POST"}, 4}} {
		var expect, got []string
		for _, e := range want {
			if c.f.Matches(e) {
				expect = append(expect, e.RequestID)
			}
		}
		p := paging.Page{Limit: c.limit}
		for range len(want) + 2 {
			page, more, err := l.Search(ctx, acme, c.f, p)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, e := range page {
				got = append(got, e.RequestID)
			}
			if !more {
				break
			}
			p.StartingAfter = page[len(page)-1].Cursor()
		}
		if !slices.Equal(got, expect) {
			t.Errorf("%s: pages gave %d entries, want %d\n got %v\nwant %v", c.name, len(got), len(expect), got, expect)
		}
	}
	for _, bad := range []string{"req_0001", "x.req_1", "-5.req_1", "1700000000000000.evt_1"} {
		if _, _, err := l.Search(ctx, acme, requestlog.Filter{}, paging.Page{Limit: 5, StartingAfter: bad}); errs.CodeOf(err) != errs.InvalidRequest {
			t.Errorf("cursor %q: %v, want invalid_request", bad, err)
		}
	}
}

// TestARowThatStartsEarlyStillGivesItsNewestEntry: the newest entry sits
// in the row that starts earliest, behind more rows than a first read
// takes; the page still starts with it.
func TestARowThatStartsEarlyStillGivesItsNewestEntry(t *testing.T) {
	t.Parallel()
	l, clock, _ := newLog(t)
	scope := tenant.Scope{MerchantID: "mer_acme", Env: tenant.Sandbox}
	start := clock.Now().Add(-time.Minute).Truncate(time.Microsecond)
	l.Record(entry(scope, 1, start, "GET", 200))
	l.Record(entry(scope, 2, start.Add(900*time.Millisecond), "GET", 200)) // the newest
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // rows of one entry each, starting after the first row
		l.Record(entry(scope, 100+i, start.Add(time.Duration(10+i*40)*time.Millisecond), "GET", 200))
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := l.Search(ctx, scope, requestlog.Filter{}, paging.Page{Limit: 1})
	if err != nil || !more || len(got) != 1 || got[0].RequestID != "req_0002" {
		t.Fatalf("newest = %+v, %v, %v; want req_0002", got, more, err)
	}
	next, _, err := l.Search(ctx, scope, requestlog.Filter{}, paging.Page{Limit: 2, StartingAfter: got[0].Cursor()})
	if err != nil || len(next) != 2 || next[0].RequestID != "req_0119" || next[1].RequestID != "req_0118" {
		t.Errorf("the page after it = %+v, %v", next, err)
	}
}
