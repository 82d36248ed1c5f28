package wiring

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/web/surface"
)

// writes records each write it receives.
type writes struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

func (w *writes) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(bytes.Join(w.calls, nil))
}

func TestLogBufferBatchesWholeLines(t *testing.T) {
	t.Parallel()
	out := &writes{}
	log, stop := NewLogger(out)
	// A warning is written at once, with what waited before it.
	log.Info("before")
	log.WarnContext(context.Background(), "trouble")
	if got := out.text(); !strings.Contains(got, `"msg":"before"`) || !strings.Contains(got, `"msg":"trouble"`) {
		t.Fatalf("after a warning: %q", got)
	}
	// Info lines are written in batches, whole, and within the interval.
	for i := range 3000 {
		log.Info("request", "n", i, "pad", strings.Repeat("x", 80))
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.text(), `"msg":"request"`) < 3000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(out.text(), `"msg":"request"`); n != 3000 {
		t.Fatalf("%d of 3000 lines written after 5 s", n)
	}
	out.mu.Lock()
	calls := len(out.calls)
	for i, c := range out.calls {
		if len(c) == 0 || c[len(c)-1] != '\n' {
			t.Errorf("write %d ends mid-line: …%q", i, c[max(0, len(c)-20):])
		}
	}
	out.mu.Unlock()
	if calls > 3000/10 {
		t.Errorf("%d writes for 3002 lines: not batched", calls)
	}
	// Close writes what is left.
	log.Info("last")
	stop()
	if !strings.Contains(out.text(), `"msg":"last"`) {
		t.Error("the last line was not written at close")
	}
}

// TestNewLoggerTakesTheAccessLogsLines: the service's logger hands the
// access log its buffered writer (so the line is made without a record),
// and a logger with attributes of its own does not.
func TestNewLoggerTakesTheAccessLogsLines(t *testing.T) {
	w := &writes{}
	log, flush := NewLogger(w)
	lh, ok := log.Handler().(surface.LineHandler)
	if !ok {
		t.Fatalf("NewLogger's handler %T is not a surface.LineHandler", log.Handler())
	}
	lines, ok := lh.Lines()
	if !ok {
		t.Fatal("NewLogger's handler takes no lines")
	}
	_, _ = lines.Write([]byte("{\"msg\":\"request\"}\n"))
	log.Info("after")
	flush()
	if got := w.text(); !strings.HasPrefix(got, "{\"msg\":\"request\"}\n{\"time\":") || !strings.Contains(got, `"msg":"after"`) {
		t.Errorf("written: %q", got)
	}
	if lh, ok := log.With("k", "v").Handler().(surface.LineHandler); ok {
		if _, ok := lh.Lines(); ok {
			t.Error("a logger with attributes of its own takes lines without them")
		}
	}
}
