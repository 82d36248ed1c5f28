package postgres

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
)

// TestABatchBodyReadsBackWhatWasWritten: entries of two scopes, out of
// arrival order and more than a second apart, are cut into rows of one
// scope and second each, in arrival order, and each row's body decodes
// to its entries exactly.
func TestABatchBodyReadsBackWhatWasWritten(t *testing.T) {
	a := tenant.Scope{MerchantID: "mer_a", Env: tenant.Sandbox}
	b := tenant.Scope{MerchantID: "mer_a", Env: tenant.Production}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	e := func(s tenant.Scope, id string, at time.Duration, method, path string, status int, latency time.Duration) requestlog.Entry {
		return requestlog.Entry{Scope: s, RequestID: id, At: t0.Add(at), Method: method, Path: path, Status: status, Latency: latency}
	}
	in := []requestlog.Entry{
		e(a, "req_2", 300*time.Millisecond, "POST", "/v2/customers", 201, 12*time.Millisecond),
		e(b, "req_p", 0, "GET", "/v2/funding-source/fs_1", 404, 0),
		e(a, "req_1", 0, "GET", "/v2/customers", 200, 345*time.Microsecond),
		e(a, "req_3", time.Second, "DELETE", "/v2/funding-source/fs_é?", 500, 31*time.Second),
		e(a, "req_4", 1500*time.Millisecond, "GET", "/v2/customers", 200, time.Microsecond),
	}
	rows := batchesOf(in)
	var got [][]string
	for _, r := range rows {
		entries, err := decodeBatch(r.scope, time.UnixMicro(r.firstUS).UTC(), r.body())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(entries, r.entries) {
			t.Errorf("row of %v decoded to\n%+v\nwant\n%+v", r.scope, entries, r.entries)
		}
		var ids []string
		for _, x := range entries {
			ids = append(ids, x.RequestID)
		}
		got = append(got, ids)
		if span := r.lastUS - r.firstUS; span > maxBatchSpan.Microseconds() {
			t.Errorf("a row spans %d µs", span)
		}
	}
	if want := [][]string{{"req_1", "req_2", "req_3"}, {"req_4"}, {"req_p"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// TestABrokenBatchBodyIsAnErrorNotAPanic: every cut of a good body, a
// wrong format byte, bytes after the end and a path index past the paths
// are refused.
func TestABrokenBatchBodyIsAnErrorNotAPanic(t *testing.T) {
	s := tenant.Scope{MerchantID: "mer_a", Env: tenant.Sandbox}
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := batchesOf([]requestlog.Entry{
		{Scope: s, RequestID: "req_1", At: now, Method: "GET", Path: "/a", Status: 200},
		{Scope: s, RequestID: "req_2", At: now, Method: "GET", Path: "/b", Status: 200},
	})[0]
	body := row.body()
	for n := range len(body) {
		if _, err := decodeBatch(s, now, body[:n]); err == nil {
			t.Errorf("the first %d of %d bytes decoded", n, len(body))
		}
	}
	wrongFormat := append([]byte{batchFormat + 1}, body[1:]...)
	trailing := append(append([]byte{}, body...), 0)
	badPath := append([]byte{}, body...)
	// The second entry's path index sits before its status (200: two
	// bytes of varint) and latency (0: one byte).
	badPath[len(badPath)-4] = 9
	for name, b := range map[string][]byte{"wrong format": wrongFormat, "trailing byte": trailing, "path index past the paths": badPath} {
		if _, err := decodeBatch(s, now, b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestBatchesAreTheScopesEntriesInArrivalOrder: over random flushes
// (several scopes interleaved, arrivals mostly in order, some late, some
// equal, past BatchSize and across seconds), the rows are each scope's
// entries, scopes in order of first appearance, stably sorted by arrival
// and cut at maxBatchSpan and BatchSize: what grouping them by appending
// and sorting every scope's entries makes.
func TestBatchesAreTheScopesEntriesInArrivalOrder(t *testing.T) {
	scopes := []tenant.Scope{{MerchantID: "mer_a", Env: tenant.Sandbox}, {MerchantID: "mer_a", Env: tenant.Production},
		{MerchantID: "mer_b", Env: tenant.Sandbox}}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	want := func(entries []requestlog.Entry) []*requestBatch {
		byScope := map[tenant.Scope][]requestlog.Entry{}
		var order []tenant.Scope
		for _, e := range entries {
			if _, ok := byScope[e.Scope]; !ok {
				order = append(order, e.Scope)
			}
			byScope[e.Scope] = append(byScope[e.Scope], e)
		}
		var out []*requestBatch
		for _, scope := range order {
			list := byScope[scope]
			slices.SortStableFunc(list, func(a, b requestlog.Entry) int { return a.At.Compare(b.At) })
			var cur *requestBatch
			for _, e := range list {
				at := e.At.UnixMicro()
				if cur == nil || at-cur.firstUS > maxBatchSpan.Microseconds() || len(cur.entries) == requestlog.BatchSize {
					cur = &requestBatch{scope: scope, firstUS: at}
					out = append(out, cur)
				}
				cur.lastUS = at
				cur.entries = append(cur.entries, e)
			}
		}
		return out
	}
	for round := range 200 {
		n := rand.IntN(1200)
		in := make([]requestlog.Entry, n)
		at := t0
		for i := range in {
			step := time.Duration(rand.Int64N(int64(5 * time.Millisecond)))
			switch rand.IntN(10) {
			case 0:
				step = -time.Duration(rand.Int64N(int64(50 * time.Millisecond))) // late
			case 1:
				step = 0
			}
			at = at.Add(step)
			in[i] = requestlog.Entry{Scope: scopes[rand.IntN(1+round%len(scopes))], RequestID: fmt.Sprintf("req_%d", i), At: at}
		}
		if got, want := batchesOf(slices.Clone(in)), want(slices.Clone(in)); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d, %d entries: %d rows, want %d", round, n, len(got), len(want))
		}
	}
}
