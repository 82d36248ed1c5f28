package web_test

import (
	"bufio"
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
)

// overCapWait is how long a client waits for an answer or a close: long
// enough that only a server that never closes it reaches the deadline.
const overCapWait = 30 * time.Second

// TestConnectionCapRefusesTheExcessAtAccept: of 2,000 clients that each
// send one keep-alive request and then sit idle, 100 (the cap) are
// answered and held; the server closes the others at once, unanswered.
// While the cap is full a normal client is refused too; once the idle
// clients leave, it is served again.
func TestConnectionCapRefusesTheExcessAtAccept(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const limit, clients = 100, 2000
	ln := web.CapConnections(raw, limit)
	srv := web.Server(raw.Addr().String(), h.Engine) // the production server's timeouts
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := raw.Addr().String()

	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range clients {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	type outcome struct {
		answered bool
		err      error         // neither answered nor closed: still open, unanswered
		after    time.Duration // until the answer or the close
	}
	results := make([]outcome, clients)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			start := time.Now()
			_ = c.SetDeadline(start.Add(overCapWait))
			_, werr := fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: fundsource.test\r\n\r\n")
			line, rerr := bufio.NewReader(c).ReadString('\n')
			r := &results[i]
			r.after = time.Since(start)
			switch {
			case rerr == nil && strings.HasPrefix(line, "HTTP/1.1 200"):
				r.answered = true
			case werr != nil || errors.Is(rerr, io.EOF) || isReset(rerr):
				// closed by the server
			default:
				r.err = fmt.Errorf("line %q, write %v, read %v", line, werr, rerr)
			}
		})
	}
	wg.Wait()
	answered, slowest := 0, time.Duration(0)
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("client %d: neither answered nor closed after %s: %v", i, r.after, r.err)
		}
		if r.answered {
			answered++
		} else {
			slowest = max(slowest, r.after)
		}
	}
	if answered != limit {
		t.Errorf("%d clients answered, want the cap, %d", answered, limit)
	}
	// Each client over the cap was closed by the server, not by its own
	// deadline (checked above), and refused at accept (checked below):
	// how long that took on a loaded machine is logged, not judged.
	t.Logf("the slowest client over the cap was closed after %s", slowest)
	if ln.Open() != limit || ln.Refused() < clients-limit {
		t.Errorf("open %d, refused %d; want %d open and at least %d refused", ln.Open(), ln.Refused(), limit, clients-limit)
	}

	normal := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := normal.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a client over a full cap got %d, want its connection closed", resp.StatusCode)
	}

	for _, c := range conns {
		_ = c.Close()
	}
	conns = nil
	for deadline := time.Now().Add(5 * time.Second); ln.Open() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open 5 s after their clients closed them", ln.Open())
		}
	}
	resp, err := normal.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("a normal client after the idle ones left: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a normal client after the idle ones left: %d, want 200", resp.StatusCode)
	}
}
