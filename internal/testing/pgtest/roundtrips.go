package pgtest

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// RoundTrips counts the times clients wait for PostgreSQL: every simple
// query ('Q': BEGIN, COMMIT, SAVEPOINT, …) and every Sync ('S': the end of
// one extended-protocol exchange, such as a prepared statement's bind and
// execute, or a first use's parse and describe) sent through the proxy of
// CountingDB.
type RoundTrips struct {
	n   atomic.Int64
	mu  sync.Mutex
	log []string
}

// Count returns the round trips since the last Reset.
func (r *RoundTrips) Count() int { return int(r.n.Load()) }

// Reset sets the count to zero.
func (r *RoundTrips) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Store(0)
	r.log = nil
}

// Log names the round trips since the last Reset: a simple query's text,
// or the statement text of an extended exchange after "sync: " when the
// exchange runs it, "prepare: " when it only prepares it (each cut to 100
// bytes).
func (r *RoundTrips) Log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *RoundTrips) add(what string) {
	if what == postgres.WakeStatement {
		// The dispatchers' wake-up, sent after a commit on the waker's own
		// connection: not a round trip of the request.
		return
	}
	if what = strings.Join(strings.Fields(what), " "); len(what) > 100 {
		what = what[:100] + "…"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n.Add(1)
	r.log = append(r.log, what)
}

// CountingDB returns a store on a fresh migrated database whose every
// connection goes through a proxy that counts round trips.
func CountingDB(t testing.TB) (*postgres.DB, *RoundTrips) {
	t.Helper()
	return CountingOn(t, URL(t))
}

// CountingOn is CountingDB on the database at dsn (one of URL's), so that
// the test can also open its own pool there.
func CountingOn(t testing.TB, dsn string) (*postgres.DB, *RoundTrips) {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		var err error
		if dsn, err = pq.ParseURL(dsn); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	host, port, rest := "localhost", "5432", []string{}
	for _, f := range strings.Fields(dsn) {
		switch k, v, _ := strings.Cut(f, "="); k {
		case "host":
			host = strings.Trim(v, "'")
		case "port":
			port = strings.Trim(v, "'")
		default:
			rest = append(rest, f)
		}
	}
	network, addr := "tcp", net.JoinHostPort(host, port)
	if strings.HasPrefix(host, "/") {
		network, addr = "unix", filepath.Join(host, ".s.PGSQL."+port)
	}
	dir, err := os.MkdirTemp("", "pgp") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL."+port))
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	counter := &RoundTrips{}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				proxy(c, network, addr, counter)
			}()
		}
	}()
	db, err := postgres.Open(context.Background(), strings.Join(append(rest, "host="+dir, "port="+port), " "))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		l.Close()
		wg.Wait()
		os.RemoveAll(dir)
	})
	return db, counter
}

// proxy copies one connection both ways and counts the client's round trips.
func proxy(client net.Conn, network, addr string, counter *RoundTrips) {
	defer client.Close()
	server, err := net.Dial(network, addr)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	_ = countMessages(bufio.NewReader(client), server, counter)
}

// countMessages forwards the client's messages: first the untyped startup
// (after any SSL or GSS encryption request, which is untyped too), then
// typed messages, counting 'Q' and 'S'.
func countMessages(r *bufio.Reader, w io.Writer, counter *RoundTrips) error {
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(r, hdr[:4]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		if _, err := w.Write(append(hdr[:4:4], body...)); err != nil {
			return err
		}
		if n != 8 { // not an encryption request: the startup message
			break
		}
	}
	var last string   // the statement text of the current extended exchange
	executes := false // whether the exchange runs it (else it only prepares it)
	named := map[string]string{}
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n < 4 {
			return fmt.Errorf("bad message length %d", n)
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		switch hdr[0] {
		case 'Q':
			counter.add(strings.TrimRight(string(body), "\x00"))
		case 'P': // parse: statement name\0 query\0 …
			if name, q, ok := strings.Cut(string(body), "\x00"); ok {
				last, _, _ = strings.Cut(q, "\x00")
				named[name] = last
			}
		case 'B': // bind: portal\0 statement name\0 …
			if _, rest, ok := strings.Cut(string(body), "\x00"); ok {
				name, _, _ := strings.Cut(rest, "\x00")
				last = named[name]
			}
		case 'E':
			executes = true
		case 'S':
			what := "prepare: "
			if executes {
				what = "sync: "
			}
			counter.add(what + strings.TrimSpace(last))
			executes = false
		}
		if _, err := w.Write(append(hdr[:], body...)); err != nil {
			return err
		}
	}
}
