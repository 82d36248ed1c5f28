package postgres

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/requestlog"
)

// A row of api_request_batches holds a scope's entries of one second in
// one bytea, body, in a format of this package's own, because nothing
// but this package reads it and it is what costs least to write: the
// server appends varints and strings, and PostgreSQL stores one value
// (no array to parse per element, no row or index entry per request).
// Pages are filtered here anyway (ListRequests), after decoding.
//
// body is the format byte (1), the paths used (a count, then each path),
// the number of entries, then per entry, in arrival order: its request id,
// its arrival in microseconds after the row's first_at, its method, the
// index of its path, its status and its latency in microseconds. Counts,
// numbers and indexes are unsigned varints; strings are a varint length
// and the bytes.

// batchFormat is body's first byte.
const batchFormat = 1

// requestBatch is one row of api_request_batches: a scope's entries, in
// arrival order, arriving within maxBatchSpan.
type requestBatch struct {
	scope           tenant.Scope
	firstUS, lastUS int64 // arrivals, microseconds since 1970
	entries         []requestlog.Entry
}

// batchesOf groups entries by scope and cuts each scope's entries, in
// arrival order, into rows that span at most maxBatchSpan and hold at most
// requestlog.BatchSize entries. The entries are copied once, grouped by
// scope into one slice, and a row's entries are a part of it; they arrive
// nearly in order, so a scope's are sorted only when they are not.
func batchesOf(entries []requestlog.Entry) []*requestBatch {
	next := map[tenant.Scope]int{} // a scope's count, then where its next entry goes
	var scopes []tenant.Scope
	for _, e := range entries {
		if _, ok := next[e.Scope]; !ok {
			scopes = append(scopes, e.Scope)
		}
		next[e.Scope]++
	}
	starts := make([]int, len(scopes)+1)
	for i, scope := range scopes {
		starts[i+1] = starts[i] + next[scope]
		next[scope] = starts[i]
	}
	grouped := make([]requestlog.Entry, len(entries))
	for _, e := range entries {
		grouped[next[e.Scope]] = e
		next[e.Scope]++
	}
	byArrival := func(a, b requestlog.Entry) int { return a.At.Compare(b.At) }
	var out []*requestBatch
	for i, scope := range scopes {
		list := grouped[starts[i]:starts[i+1]]
		if !slices.IsSortedFunc(list, byArrival) {
			slices.SortStableFunc(list, byArrival)
		}
		var cur *requestBatch
		first := 0
		for j, e := range list {
			at := e.At.UnixMicro()
			if cur == nil || at-cur.firstUS > maxBatchSpan.Microseconds() || j-first == requestlog.BatchSize {
				cur = &requestBatch{scope: scope, firstUS: at}
				out = append(out, cur)
				first = j
			}
			cur.lastUS = at
			cur.entries = list[first : j+1 : j+1]
		}
	}
	return out
}

// body encodes b's entries.
func (b *requestBatch) body() []byte {
	index := make(map[string]uint64)
	var paths []string
	for _, e := range b.entries {
		if _, ok := index[e.Path]; !ok {
			index[e.Path] = uint64(len(paths))
			paths = append(paths, e.Path)
		}
	}
	buf := make([]byte, 0, 16+48*len(b.entries))
	buf = append(buf, batchFormat)
	buf = binary.AppendUvarint(buf, uint64(len(paths)))
	for _, p := range paths {
		buf = appendString(buf, p)
	}
	buf = binary.AppendUvarint(buf, uint64(len(b.entries)))
	for _, e := range b.entries {
		buf = appendString(buf, e.RequestID)
		buf = binary.AppendUvarint(buf, uint64(e.At.UnixMicro()-b.firstUS))
		buf = appendString(buf, e.Method)
		buf = binary.AppendUvarint(buf, index[e.Path])
		buf = binary.AppendUvarint(buf, uint64(max(e.Status, 0)))
		buf = binary.AppendUvarint(buf, uint64(max(e.Latency.Microseconds(), 0)))
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// errBadBatch is a body that is not of this package's format.
var errBadBatch = errors.New("request log: a stored batch is not readable")

// decodeBatch returns the entries of a row of scope whose first arrival
// is first and whose body is body.
func decodeBatch(scope tenant.Scope, first time.Time, body []byte) ([]requestlog.Entry, error) {
	d := batchDecoder{buf: body}
	if len(body) == 0 || body[0] != batchFormat {
		return nil, errBadBatch
	}
	d.buf = body[1:]
	paths := make([]string, d.count())
	for i := range paths {
		paths[i] = d.string()
	}
	out := make([]requestlog.Entry, d.count())
	for i := range out {
		e := requestlog.Entry{Scope: scope, RequestID: d.string()}
		e.At = first.Add(time.Duration(d.uvarint()) * time.Microsecond)
		e.Method = d.string()
		if p := d.uvarint(); p < uint64(len(paths)) {
			e.Path = paths[p]
		} else {
			d.bad = true
		}
		e.Status = int(d.uvarint())
		e.Latency = time.Duration(d.uvarint()) * time.Microsecond
		out[i] = e
	}
	if d.bad || len(d.buf) != 0 {
		return nil, errBadBatch
	}
	return out, nil
}

// batchDecoder reads a body; bad is set at the first thing it cannot read,
// after which every read gives zero.
type batchDecoder struct {
	buf []byte
	bad bool
}

func (d *batchDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.bad, d.buf = true, nil
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count is a count of what follows, at most what the rest of the body can
// hold (one byte each at least).
func (d *batchDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.bad, d.buf = true, nil
		return 0
	}
	return int(n)
}

func (d *batchDecoder) string() string {
	n := d.count()
	s := string(d.buf[:n])
	d.buf = d.buf[n:]
	return s
}
