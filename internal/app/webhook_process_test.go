package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/lab/rig"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/internal/wiring"
)

// binary is cmd/fundsource, built once per test process.
func binary(t *testing.T) string {
	t.Helper()
	bin, err := rig.BuildServer()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// cluster is a database with the settings several serve processes share.
type cluster struct {
	t     *testing.T
	env   []string
	db    *postgres.DB
	sql   *sqlx.DB         // the test's own pool on the same database
	svc   *wiring.Services // the service on db, as the processes wire it
	scope tenant.Scope
	key   string // the merchant's sandbox secret key
}

func randomKey() ([]byte, string) {
	b := make([]byte, 32)
	rand.Read(b)
	return b, base64.StdEncoding.EncodeToString(b)
}

func newCluster(t *testing.T) *cluster {
	c := newCLI(t)
	_, encB64 := randomKey()
	_, fpB64 := randomKey()
	_, sessB64 := randomKey()
	c.env["ACCOUNT_ENCRYPTION_KEYS"] = "k1:" + encB64
	c.env["FINGERPRINT_KEY"] = fpB64
	c.env["SESSION_KEYS"] = sessB64
	created := c.json("merchant", "create", "--name", "Acme", "--email", "ops@acme.example")
	db, err := postgres.Open(context.Background(), c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg, err := config.Load(func(k string) string { return c.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.WebhookAllowPrivateTargets = true
	svc, err := wiring.Build(cfg, wiring.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "WEBHOOK_POLL_INTERVAL=100ms", "WEBHOOK_ALLOW_PRIVATE_TARGETS=true"}
	for k, val := range c.env {
		env = append(env, k+"="+val)
	}
	merchantID := created["merchant_id"].(string)
	key := created["sandbox"].(map[string]any)["secret_key"].(string)
	return &cluster{t: t, env: env, db: db, sql: pgtest.Pool(t, c.env["DATABASE_URL"]), svc: svc, scope: tenant.Scope{MerchantID: merchantID, Env: tenant.Sandbox}, key: key}
}

// register points the merchant's sandbox webhook at url.
func (c *cluster) register(url string) string {
	c.t.Helper()
	reg, err := c.svc.Webhooks.Register(context.Background(), c.scope, url, audit.Operator("test"))
	if err != nil {
		c.t.Fatal(err)
	}
	return reg.Secret
}

// record writes n webhook.test events as the service would, each in its own
// transaction, and returns their ids.
func (c *cluster) record(n int) []string {
	c.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		e := event.New(c.scope, event.WebhookTest, map[string]int{"n": i}, time.Now())
		if err := c.db.RecordEvent(context.Background(), e); err != nil {
			c.t.Fatal(err)
		}
		ids[i] = e.ID
	}
	return ids
}

// serve starts a 'fundsource serve' process; it is killed when the test ends.
func (c *cluster) serve(name string) *exec.Cmd {
	cmd, _ := c.serveAt(name)
	return cmd
}

// serveAt is serve that also returns the process's address.
func (c *cluster) serveAt(name string) (*exec.Cmd, string) {
	c.t.Helper()
	cmd := exec.Command(binary(c.t), "serve")
	addr := th.FreeAddr(c.t)
	cmd.Env = append(append([]string{}, c.env...), "LISTEN_ADDR="+addr)
	out := &th.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if c.t.Failed() {
			c.t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return cmd, addr
}

// deliveryCounts returns how many deliveries have each status and the
// number of attempts recorded.
func (c *cluster) deliveryCounts() (map[string]int, int) {
	c.t.Helper()
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := c.sql.Select(&rows, `SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status`); err != nil {
		c.t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	var attempts int
	if err := c.sql.Get(&attempts, `SELECT count(*) FROM webhook_attempts`); err != nil {
		c.t.Fatal(err)
	}
	return out, attempts
}

// tally is a receiver that counts requests per webhook-id.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
}

func (tl *tally) add(id string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.counts[id]++
	tl.total++
}

func (tl *tally) snapshot() (distinct, total int, dups []string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for id, n := range tl.counts {
		if n > 1 {
			dups = append(dups, id)
		}
	}
	return len(tl.counts), tl.total, dups
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestThreeServeProcessesDeliverEveryEventExactlyOnce(t *testing.T) {
	c := newCluster(t)
	tl := &tally{counts: map[string]int{}}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tl.add(r.Header.Get("webhook-id"))
	}))
	defer rc.Close()
	c.register(rc.URL)
	for i := range 3 {
		c.serve(fmt.Sprintf("serve %d", i+1))
	}
	const n = 1000
	ids := c.record(n)

	waitFor(t, 90*time.Second, "1,000 delivered events", func() bool {
		st, _ := c.deliveryCounts()
		return st[webhook.Delivered] == n
	})
	distinct, total, dups := tl.snapshot()
	st, attempts := c.deliveryCounts()
	t.Logf("sent %d events; received %d requests for %d ids; deliveries %v; attempts %d", n, total, distinct, st, attempts)
	if distinct != n || total != n || len(dups) != 0 || attempts != n {
		t.Errorf("received %d requests for %d ids (duplicates: %d), %d attempts; want exactly %d of each", total, distinct, len(dups), attempts, n)
	}
	for _, id := range ids {
		if tl.counts[id] != 1 {
			t.Fatalf("event %s received %d times", id, tl.counts[id])
		}
	}
}

func TestEventOfAKilledProcessIsDeliveredByAnother(t *testing.T) {
	c := newCluster(t)
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	tl := &tally{counts: map[string]int{}}
	var mu sync.Mutex
	first := true
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tl.add(r.Header.Get("webhook-id"))
		mu.Lock()
		hold := first
		first = false
		mu.Unlock()
		arrived <- struct{}{}
		if hold {
			<-release // the first process dies while this request is in flight
		}
	}))
	defer rc.Close()
	defer close(release)
	c.register(rc.URL)

	a := c.serve("serve A")
	id := c.record(1)[0]
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("process A never sent the event")
	}
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.Wait()

	c.serve("serve B")
	waitFor(t, 30*time.Second, "delivery by process B", func() bool {
		st, _ := c.deliveryCounts()
		return st[webhook.Delivered] == 1
	})
	st, attempts := c.deliveryCounts()
	if _, total, _ := tl.snapshot(); total != 2 || tl.counts[id] != 2 || attempts != 1 || st[webhook.Delivered] != 1 {
		t.Errorf("requests %d (for the event: %d), attempts %d, deliveries %v; want the event sent by A, then by B, recorded once",
			total, tl.counts[id], attempts, st)
	}
}

func TestGracefulShutdownFinishesTheDeliveryInFlight(t *testing.T) {
	c := newCluster(t)
	arrived := make(chan struct{}, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		time.Sleep(500 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	c.register(rc.URL)
	a := c.serve("serve A")
	c.record(1)
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the event was never sent")
	}
	if err := a.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if st, attempts := c.deliveryCounts(); st[webhook.Delivered] != 1 || attempts != 1 {
		t.Errorf("after shutdown: deliveries %v, attempts %d; want the in-flight delivery recorded", st, attempts)
	}
}
