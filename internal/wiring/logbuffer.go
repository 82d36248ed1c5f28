package wiring

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/fundsource/fundsource/web/surface"
)

// logFlushEvery is the longest a log line waits in the buffer.
const logFlushEvery = 100 * time.Millisecond

// logBuffer collects the server's log lines and writes them out in batches:
// every logFlushEvery, when 64 KiB are waiting, and at once after a warning
// or an error (see NewLogger). Under load the access log was one write(2)
// per request, about a twentieth of the server's CPU. A line is never split
// between two writes, so lines stay whole beside other writers of the
// stream.
type logBuffer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
}

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.stop:
				b.Flush()
				return
			}
		}
	}()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) > b.w.Available() && b.w.Buffered() > 0 {
		if err := b.w.Flush(); err != nil {
			return 0, err
		}
	}
	return b.w.Write(p)
}

// Flush writes out what is waiting.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.w.Flush()
}

// Close flushes and stops the periodic flush.
func (b *logBuffer) Close() {
	b.close.Do(func() {
		close(b.stop)
		<-b.done
	})
}

// NewLogger is the service's JSON logger on w, buffered; call the returned
// function to flush and stop when the service ends. Every process of the
// product logs through it ('serve', 'dev', the operator commands).
func NewLogger(w io.Writer) (*slog.Logger, func()) {
	b := newLogBuffer(w)
	return slog.New(flushingHandler{surface.NewJSONHandler(b), b}), b.Close
}

// flushingHandler writes a warning or an error out at once: those are
// the lines an operator needs even if the process dies next.
type flushingHandler struct {
	slog.Handler
	b *logBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.b.Flush()
	}
	return err
}

// Lines are the JSON handler's, for the access log's lines (written at
// info level, so never flushed at once).
func (h flushingHandler) Lines() (io.Writer, bool) {
	if lh, ok := h.Handler.(surface.LineHandler); ok {
		return lh.Lines()
	}
	return nil, false
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.b}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.b}
}
