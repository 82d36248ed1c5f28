package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/web"
	"github.com/fundsource/fundsource/web/surface"
)

// slowClient sends a request's headers, then its body a byte a second,
// and records the answer's status line and when the connection ended.
type slowClient struct {
	status   string        // the answer's status line; "" when none came
	answered time.Duration // from the headers to the status line
	closed   time.Duration // from the headers to the server closing the connection
	err      error
}

// trickle is one slow client; it marks started once its headers are sent
// (or it failed to send them), and sent once it is done.
func trickle(ctx context.Context, addr, key string, res *slowClient, started, sent *sync.WaitGroup) {
	defer sent.Done()
	var once sync.Once
	begun := func() { once.Do(started.Done) }
	defer begun()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		res.err = err
		return
	}
	defer conn.Close()
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + key + "\r\n"
	}
	if _, err := fmt.Fprintf(conn, "POST /v2/customers HTTP/1.1\r\nHost: fundsource.test\r\n%sContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{", auth); err != nil {
		res.err = err
		return
	}
	begun()
	start := time.Now()
	go func() { // a byte a second until the server stops listening
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(surface.BodyReadTimeout + 20*time.Second))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil {
		res.err = fmt.Errorf("no answer after %s: %w", time.Since(start).Round(time.Millisecond), err)
		return
	}
	res.status, res.answered = strings.TrimSpace(line), time.Since(start)
	if _, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		res.err = fmt.Errorf("the connection stayed open: %w", err)
		return
	}
	res.closed = time.Since(start)
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "connection reset")
}

// TestSlowBodiesHoldNoConnections: hundreds of clients that send a body a
// byte a second, most without a key, do not stop a normal client from
// getting answers within a second. A client without a key gets its 401 at
// once, before any of its body is read, and its connection closes; a
// client with a key is cut off once BodyReadTimeout has passed.
func TestSlowBodiesHoldNoConnections(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := web.Server(ln.Addr().String(), h.Engine) // the production server's timeouts
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()
	normal := &http.Client{Timeout: 10 * time.Second}
	call := func(method, body string) (int, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(method, base+"/v2/customers", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := normal.Do(req)
		if err != nil {
			t.Fatalf("normal client: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	call(http.MethodGet, "") // warm the pool and the key cache

	const anonymous, keyed = 300, 50
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make([]slowClient, anonymous+keyed)
	var started, sent sync.WaitGroup
	for i := range results {
		started.Add(1)
		sent.Add(1)
		k := ""
		if i >= anonymous {
			k = key
		}
		go trickle(ctx, ln.Addr().String(), k, &results[i], &started, &sent)
	}
	started.Wait() // every slow client has connected and sent its headers
	for i := range 5 {
		for _, r := range []struct{ method, body string }{
			{http.MethodGet, ""},
			{http.MethodPost, fmt.Sprintf(`{"first_name":"Ada","last_name":"Lovelace","email":"ada%d@example.com"}`, i)},
		} {
			status, took := call(r.method, r.body)
			if status >= 300 || took > time.Second {
				t.Errorf("normal client %s among slow ones: %d after %s, want a success within 1 s", r.method, status, took)
			}
		}
	}
	sent.Wait()
	var maxA, maxK time.Duration
	for i, r := range results {
		if i < anonymous {
			maxA = max(maxA, r.closed)
		} else {
			maxK = max(maxK, r.closed)
		}
	}
	t.Logf("slowest close: without a key %s, with a key %s", maxA, maxK)
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("slow client %d (key %v): %v", i, i >= anonymous, r.err)
		case i < anonymous && (!strings.HasPrefix(r.status, "HTTP/1.1 401") || r.closed > 3*time.Second):
			t.Errorf("slow client %d without a key: %q after %s, closed after %s; want 401 and a closed connection within 3 s",
				i, r.status, r.answered, r.closed)
		case i >= anonymous && (!strings.HasPrefix(r.status, "HTTP/1.1 400") || r.closed > surface.BodyReadTimeout+3*time.Second):
			t.Errorf("slow client %d with a key: %q after %s, closed after %s; want 400 and a closed connection within %s",
				i, r.status, r.answered, r.closed, surface.BodyReadTimeout+3*time.Second)
		}
		if t.Failed() && i > 5 {
			break
		}
	}
}
