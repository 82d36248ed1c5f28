package surface

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// LineHandler is a slog.Handler that writes JSON lines exactly as
// slog.NewJSONHandler(w, nil) does and lets a caller hand it a line made
// in that same format: the access log writes its line itself, without a
// record, attribute values or the reflection slog's JSON handler uses for
// a float.
type LineHandler interface {
	slog.Handler
	// Lines is where a whole line goes in one write; ok is false when the
	// handler's lines are not slog.NewJSONHandler(w, nil)'s (it adds
	// attributes or groups of its own).
	Lines() (w io.Writer, ok bool)
}

// JSONHandler is slog.NewJSONHandler(w, nil) as a LineHandler. Its own
// lines and those handed to Lines are written one at a time.
type JSONHandler struct {
	*slog.JSONHandler
	w *lockedWriter
}

// NewJSONHandler returns the JSON handler on w.
func NewJSONHandler(w io.Writer) *JSONHandler {
	lw := &lockedWriter{w: w}
	return &JSONHandler{JSONHandler: slog.NewJSONHandler(lw, nil), w: lw}
}

// Lines is the handler's writer.
func (h *JSONHandler) Lines() (io.Writer, bool) { return h.w, true }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// access is what the access log line of a request says.
type access struct {
	requestID, method, route string
	status                   int
	latency                  time.Duration
	principal                bool // authenticated: merchantID and environment are named
	merchantID, environment  string
	errorCode                string
	unmatched                bool // no route: path is named
	path                     string
}

// latencyMS is the latency in milliseconds to the microsecond.
func (a *access) latencyMS() float64 { return float64(a.latency.Microseconds()) / 1000 }

// record is the line as a slog record at t: what goes to any handler.
func (a *access) record(t time.Time) slog.Record {
	// The attributes in an array of their own (they are at most eight),
	// and the record made without the caller's program counter, which
	// Logger.LogAttrs looks up on every call for a source the handler
	// does not print.
	var buf [8]slog.Attr
	attrs := append(buf[:0],
		slog.String("request_id", a.requestID),
		slog.String("method", a.method),
		slog.String("route", a.route),
		slog.Int("status", a.status),
		slog.Float64("latency_ms", a.latencyMS()),
	)
	if a.principal {
		attrs = append(attrs, slog.String("merchant_id", a.merchantID), slog.String("environment", a.environment))
	}
	if a.errorCode != "" {
		attrs = append(attrs, slog.String("error_code", a.errorCode))
	}
	if a.unmatched {
		attrs = append(attrs, slog.String("path", a.path))
	}
	r := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	r.AddAttrs(attrs...)
	return r
}

// appendLine appends the line slog.NewJSONHandler(w, nil) writes for
// a.record(t). ok is false, and b unchanged, when the line holds what
// only slog's own encoding writes as slog does (a string to escape, a
// year outside 0-9999, a latency written in exponent form).
func (a *access) appendLine(b []byte, t time.Time) (_ []byte, ok bool) {
	ms := a.latencyMS()
	if y := t.Year(); y < 0 || y >= 10000 || math.Abs(ms) >= 1e21 || (ms != 0 && math.Abs(ms) < 1e-6) {
		return b, false
	}
	for _, s := range [...]string{a.requestID, a.method, a.route, a.merchantID, a.environment, a.errorCode, a.path} {
		if !plainJSON(s) {
			return b, false
		}
	}
	b = append(b, `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":"`...)
	b = append(b, a.requestID...)
	b = append(b, `","method":"`...)
	b = append(b, a.method...)
	b = append(b, `","route":"`...)
	b = append(b, a.route...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(a.status), 10)
	b = append(b, `,"latency_ms":`...)
	b = appendMillis(b, a.latency.Microseconds(), ms)
	if a.principal {
		b = append(b, `,"merchant_id":"`...)
		b = append(b, a.merchantID...)
		b = append(b, `","environment":"`...)
		b = append(b, a.environment...)
		b = append(b, '"')
	}
	if a.errorCode != "" {
		b = append(b, `,"error_code":"`...)
		b = append(b, a.errorCode...)
		b = append(b, '"')
	}
	if a.unmatched {
		b = append(b, `,"path":"`...)
		b = append(b, a.path...)
		b = append(b, '"')
	}
	return append(b, "}\n"...), true
}

// appendMillis appends ms, which is us/1000, as encoding/json writes a
// float64 below 1e21 (slog calls it): the shortest decimal that reads back
// as ms. Below 1e12 µs that is us/1000 in decimal without trailing zeros,
// as no other decimal with at most three places lies within ms's rounding.
func appendMillis(b []byte, us int64, ms float64) []byte {
	if us < 0 || us >= 1e12 {
		return strconv.AppendFloat(b, ms, 'f', -1, 64)
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	return append(append(b, '.'), digits[:n]...)
}

// plainJSON reports whether s is written into a JSON string as it is:
// printable ASCII without a quote or a backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// lines are the access log's line buffers, reused.
var lines = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// logAccess writes a's line at t to h: made here in one buffer and
// written at once when h takes lines, else through h as a record.
func logAccess(ctx context.Context, h slog.Handler, a *access, t time.Time) {
	if lh, ok := h.(LineHandler); ok {
		if w, ok := lh.Lines(); ok {
			bp := lines.Get().(*[]byte)
			if line, ok := a.appendLine((*bp)[:0], t); ok {
				_, _ = w.Write(line)
				if cap(line) <= 4<<10 {
					*bp = line
					lines.Put(bp)
				}
				return
			}
			lines.Put(bp)
		}
	}
	_ = h.Handle(ctx, a.record(t))
}
