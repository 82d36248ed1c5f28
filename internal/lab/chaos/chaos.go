// Package chaos is the resilience suite of `make chaos` (fundsource-lab
// chaos): real server processes killed, their database restarted, their
// webhook receiver taken down, and every creation and event counted.
//
// Scenarios: kill -9 of the server under creations retried with their
// Idempotency-Keys (every acknowledged creation exists exactly once, with
// its account-number claim and event, and nothing unacknowledged exists);
// PostgreSQL stopped and started under load (503 meanwhile, nothing lost);
// the webhook receiver down (every event arrives through the retries);
// three servers on one database (one HTTP attempt per event); and kill -9
// with webhooks in flight (every event arrives at least once; repeats only
// from the deliveries leased at the kill); and the bank's SFTP server (a
// real sshd) stopped through an origination window (the file is delivered
// once when it is back, every debit in it once). Then, on a pg_auto_failover
// formation (internal/lab/formation), two servers on its multi-host URL
// under eight creating clients: a planned switchover (writes back within
// 15 s) and the primary's process group killed with SIGKILL (within 20
// s), each printing the measured outage; every acknowledged creation
// must survive once and whole, and every event reach the webhook. The
// command fails on any loss, duplicate, half-written row, 500, dead
// server or late resumption.
package chaos

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/wiring"
)

// chaosResult is one scenario's counts. A scenario fails on any loss, any
// duplicate, or any answer that is a bug (a 500).
type chaosResult struct {
	Name         string `json:"name"`
	Sent         int    `json:"sent"`
	Acknowledged int    `json:"acknowledged"`
	Found        int    `json:"found"`
	Lost         int    `json:"lost"`
	Duplicated   int    `json:"duplicated"`
	Notes        string `json:"notes"`
	Failure      string `json:"failure,omitempty"`
}

func (r chaosResult) ok() bool { return r.Lost == 0 && r.Duplicated == 0 && r.Failure == "" }

// chaos holds what the scenarios share: the private cluster, the server
// binary and the environment of its processes.
type chaos struct {
	svc    *wiring.Services
	raw    *sqlx.DB // a pool of the suite's own, for raw SQL
	run    *rig.Run // its PG is replaced when the scenario restarts it
	vars   map[string]string
	client *http.Client
	load   time.Duration
}

// Run runs the resilience scenarios against real processes: the
// server killed with SIGKILL mid-load, PostgreSQL restarted mid-load, the
// webhook receiver down and back, and three servers on one database.
func Run(ctx context.Context, args []string, stdio rig.IO) error {
	fs := flag.NewFlagSet("fundsource-lab chaos", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	load := fs.Duration("duration", 3*time.Second, "how long each load runs")
	serverBin := fs.String("server", "", "the fundsource binary to run as the server (default: the one beside this binary)")
	failoverOnly := fs.Bool("failover-only", false, "run only the failover and switchover scenarios")
	only := fs.String("only", "", "run only the scenarios whose name contains this text (no failover)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	run, err := rig.Prepare(ctx, "chaos", *serverBin)
	if err != nil {
		return err
	}
	defer run.Close() // the cluster of the run, restarted or not
	c := &chaos{run: run, load: *load,
		vars: map[string]string{"DATA_DIR": run.Dir, "DATABASE_URL": run.DBURL, "RATE_LIMIT_SANDBOX": "0",
			"WEBHOOK_ALLOW_PRIVATE_TARGETS": "true", "WEBHOOK_POLL_INTERVAL": "200ms"},
		client: &http.Client{Timeout: 10 * time.Second}}
	return rig.Wire(ctx, c.vars, func(svc *wiring.Services, raw *sqlx.DB) error {
		c.svc, c.raw = svc, raw
		var results []chaosResult
		for _, sc := range []struct {
			name string
			run  func(context.Context) (chaosResult, error)
		}{
			{"kill -9 of the server", c.killServer},
			{"PostgreSQL restart", c.restartDatabase},
			{"webhook receiver down", c.receiverDown},
			{"three servers, one database", c.threeServers},
			{"kill -9 with webhooks in flight", c.killWithWebhooksInFlight},
			{"SFTP server down through a window", c.sftpDown},
		} {
			if *failoverOnly {
				break
			}
			if *only != "" && !strings.Contains(sc.name, *only) {
				continue
			}
			fmt.Fprintf(stdio.Stderr, "chaos: %s…\n", sc.name)
			start := time.Now()
			r, err := sc.run(ctx)
			fmt.Fprintf(stdio.Stderr, "chaos: %s took %s\n", sc.name, time.Since(start).Round(100*time.Millisecond))
			if err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
			r.Name = sc.name
			results = append(results, r)
		}
		if *only == "" {
			fo, err := failoverScenarios(ctx, c, stdio.Stderr)
			if err != nil {
				return fmt.Errorf("failover: %w", err)
			}
			results = append(results, fo...)
		}
		printChaos(stdio.Stdout, results)
		for _, r := range results {
			if !r.ok() {
				return fmt.Errorf("chaos: %s failed: lost %d, duplicated %d %s", r.Name, r.Lost, r.Duplicated, r.Failure)
			}
		}
		return nil
	})
}

// merchant makes a merchant for a scenario.
func (c *chaos) merchant(ctx context.Context, name string) (key string, scope tenant.Scope, err error) {
	m, err := c.svc.Merchants.Create(ctx, name, strings.ToLower(strings.ReplaceAll(name, " ", "-"))+"@chaos.test", "chaos-password-123")
	if err != nil {
		return "", tenant.Scope{}, err
	}
	return m.Sandbox.SecretKey, tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, nil
}

// creatorFor makes a merchant with one customer and a creator that sends
// its creations to the address addr returns. Account numbers start with
// digit, so scenarios never share one (numbers are unique across merchants).
func (c *chaos) creatorFor(ctx context.Context, name string, digit int, addr func() string) (*creator, tenant.Scope, error) {
	key, scope, err := c.merchant(ctx, name)
	if err != nil {
		return nil, scope, err
	}
	cu, err := c.svc.Customers.Create(ctx, scope, customer.Input{FirstName: "Chaos", LastName: "Monkey", Email: "chaos@example.com"})
	if err != nil {
		return nil, scope, err
	}
	return &creator{c: c, key: key, customerID: cu.ID, addr: addr, digit: digit, acked: map[string]string{}, status: map[int]int{},
		giveUp: time.Now().Add(c.load + 60*time.Second)}, scope, nil
}

// server starts 'fundsource serve' on a fresh loopback address.
func (c *chaos) server(ctx context.Context) (*rig.Server, string, error) {
	addr, err := rig.FreeLoopback()
	if err != nil {
		return nil, "", err
	}
	s, err := c.serverOn(ctx, addr)
	return s, addr, err
}

func (c *chaos) serverOn(ctx context.Context, addr string) (*rig.Server, error) {
	vars := make(map[string]string, len(c.vars)+1)
	for k, v := range c.vars {
		vars[k] = v
	}
	vars["LISTEN_ADDR"] = addr
	return rig.StartServer(ctx, c.run.Bin, vars)
}

// creator creates funding sources, each with its own Idempotency-Key,
// retrying a request with the same key until it is answered (or until
// giveUp), as a careful client does through crashes and outages.
type creator struct {
	c          *chaos
	key        string
	customerID string
	addr       func() string
	digit      int // first digit of every account number
	giveUp     time.Time
	mu         sync.Mutex
	acked      map[string]string // idempotency key → funding_source_id
	sent       atomic.Int64
	status     map[int]int // answers by status code, retries included
	refused    atomic.Int64
	broken     atomic.Int64 // requests that got no answer (connection refused or cut)
	// answered, when set, hears of every answer: when its request was
	// sent, and its status.
	answered func(sent time.Time, status int)
}

// run sends creations from workers until stop is closed.
func (cr *creator) run(ctx context.Context, workers int, prefix string, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				idem := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				account := fmt.Sprintf("%d%02d%08d", cr.digit, w, i)
				cr.sent.Add(1)
				cr.create(ctx, idem, account)
			}
		})
	}
	wg.Wait()
}

func (cr *creator) create(ctx context.Context, idem, account string) {
	body := fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":%q}`, cr.customerID, account)
	for time.Now().Before(cr.giveUp) && ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+cr.addr()+"/v2/funding-source", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+cr.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		sent := time.Now()
		res, err := cr.c.client.Do(req)
		if err != nil {
			cr.broken.Add(1)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var out struct {
			ID    string `json:"funding_source_id"`
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if cr.answered != nil {
			cr.answered(sent, res.StatusCode)
		}
		cr.mu.Lock()
		cr.status[res.StatusCode]++
		if res.StatusCode == http.StatusOK {
			cr.acked[idem] = out.ID
		}
		cr.mu.Unlock()
		switch {
		case res.StatusCode == http.StatusOK:
			return
		case res.StatusCode >= 500 || out.Error.Code == "request_in_progress": // down, or the first try still running
			time.Sleep(50 * time.Millisecond)
		default:
			cr.refused.Add(1)
			return
		}
	}
}

// check compares what clients were told with what the database holds:
// every acknowledged source exists once with its account-number claim and
// its funding_source.created event, and nothing else was written.
func (cr *creator) check(ctx context.Context, scope tenant.Scope) (chaosResult, error) {
	var rows []struct {
		ID      string `db:"id"`
		Claims  int    `db:"claims"`
		Created int    `db:"created"`
	}
	err := cr.c.raw.SelectContext(ctx, &rows, `
SELECT f.id,
       (SELECT count(*) FROM account_numbers a WHERE a.environment = f.environment AND a.funding_source_id = f.id) AS claims,
       (SELECT count(*) FROM events e WHERE e.merchant_id = f.merchant_id AND e.environment = f.environment
          AND e.type = 'funding_source.created' AND e.data->>'funding_source_id' = f.id) AS created
FROM funding_sources f WHERE f.merchant_id = $1 AND f.environment = $2`, scope.MerchantID, scope.Env)
	if err != nil {
		return chaosResult{}, err
	}
	found := map[string]bool{}
	var broken []string
	for _, r := range rows {
		found[r.ID] = true
		if r.Claims != 1 || r.Created != 1 {
			broken = append(broken, fmt.Sprintf("%s has %d claims and %d created events", r.ID, r.Claims, r.Created))
		}
	}
	res := chaosResult{Sent: int(cr.sent.Load()), Acknowledged: len(cr.acked), Found: len(rows)}
	ids := map[string]bool{}
	for _, id := range cr.acked {
		if !found[id] {
			res.Lost++
		}
		ids[id] = true
	}
	// More sources than acknowledged creations: a retry wrote a second one,
	// or a creation nobody was told about was half-kept.
	res.Duplicated = len(rows) - len(ids)
	if res.Duplicated < 0 {
		res.Duplicated = 0
	}
	if len(broken) > 0 {
		res.Failure = "half-written: " + strings.Join(broken[:min(len(broken), 3)], "; ")
	}
	if cr.refused.Load() > 0 {
		res.Failure += fmt.Sprintf(" %d creations refused", cr.refused.Load())
	}
	if n := cr.status[http.StatusInternalServerError]; n > 0 {
		res.Failure += fmt.Sprintf(" %d answers were 500", n)
	}
	return res, nil
}

// killServer kills the server with SIGKILL three times during a load of
// creations and starts it again on the same address.
func (c *chaos) killServer(ctx context.Context) (chaosResult, error) {
	srv, addr, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	cr, scope, err := c.creatorFor(ctx, "Kill Nine", 7, func() string { return addr })
	if err != nil {
		return chaosResult{}, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { cr.run(ctx, 8, "kill", stop); close(done) }()
	kills := 0
	for ; kills < 3; kills++ {
		time.Sleep(c.load / 4)
		srv.Kill()
		if srv, err = c.serverOn(ctx, addr); err != nil {
			close(stop)
			<-done
			return chaosResult{}, fmt.Errorf("restart after kill: %w", err)
		}
	}
	time.Sleep(c.load / 4)
	close(stop)
	<-done
	srv.Stop()
	r, err := cr.check(ctx, scope)
	r.Notes = fmt.Sprintf("%d kills; answers %v; %d requests cut off and retried", kills, cr.status, cr.broken.Load())
	return r, err
}

// restartDatabase restarts PostgreSQL during a load of creations: the
// server answers 503 meanwhile, recovers without a restart, and /readyz
// follows.
func (c *chaos) restartDatabase(ctx context.Context) (chaosResult, error) {
	srv, addr, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	defer srv.Stop()
	pid := srv.PID()
	cr, scope, err := c.creatorFor(ctx, "Restart DB", 8, func() string { return addr })
	if err != nil {
		return chaosResult{}, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { cr.run(ctx, 8, "pg", stop); close(done) }()

	var readyMu sync.Mutex
	ready := []int{}
	pollStop := make(chan struct{})
	pollDone := make(chan struct{})
	go func() {
		defer close(pollDone)
		for {
			select {
			case <-pollStop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			code := 0
			if res, err := c.client.Get("http://" + addr + "/readyz"); err == nil {
				code = res.StatusCode
				res.Body.Close()
			}
			readyMu.Lock()
			if len(ready) == 0 || ready[len(ready)-1] != code {
				ready = append(ready, code)
			}
			readyMu.Unlock()
		}
	}()
	time.Sleep(c.load / 2)
	pg, err := c.run.PG.Restart(ctx, 2*time.Second)
	if err != nil {
		close(stop)
		<-done
		return chaosResult{}, fmt.Errorf("restart PostgreSQL: %w", err)
	}
	c.run.PG = pg
	time.Sleep(c.load / 2)
	close(stop)
	<-done
	// Give /readyz a moment to see the database again.
	time.Sleep(500 * time.Millisecond)
	close(pollStop)
	<-pollDone

	r, err := cr.check(ctx, scope)
	readyMu.Lock()
	defer readyMu.Unlock()
	r.Notes = fmt.Sprintf("answers %v; /readyz went %v", cr.status, ready)
	switch {
	case srv.Exited() || srv.PID() != pid:
		r.Failure += " the server did not survive"
	case cr.status[http.StatusServiceUnavailable] == 0:
		r.Failure += " no 503 while the database was down"
	case !follows(ready, []int{http.StatusOK, http.StatusServiceUnavailable, http.StatusOK}):
		r.Failure += fmt.Sprintf(" /readyz went %v, want 200 → 503 → 200", ready)
	}
	return r, err
}

// follows reports whether seq contains want in order.
func follows(seq, want []int) bool {
	i := 0
	for _, v := range seq {
		if i < len(want) && v == want[i] {
			i++
		}
	}
	return i == len(want)
}

// chaosReceiver is a webhook endpoint that can go down and come back on
// the same address; it counts each event id it received.
type chaosReceiver struct {
	addr string
	mu   sync.Mutex
	got  map[string]int // webhook-id → receipts
	srv  *http.Server
	// hold, while open, keeps every request waiting for an answer (a
	// hanging endpoint); a request whose client gives up meanwhile is not
	// counted: the receiver never processed it. Guarded by mu.
	hold chan struct{}
	// delay is how long each answer takes.
	delay time.Duration
	held  int // requests waiting on hold; guarded by mu
}

// hang makes the receiver keep requests waiting until release.
func (rc *chaosReceiver) hang() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hold = make(chan struct{})
}

// release answers the waiting requests and the ones to come.
func (rc *chaosReceiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hold != nil {
		close(rc.hold)
		rc.hold = nil
	}
}

// waiting is how many requests the receiver is holding.
func (rc *chaosReceiver) waiting() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.held
}

func newChaosReceiver() (*chaosReceiver, error) {
	addr, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	rc := &chaosReceiver{addr: addr, got: map[string]int{}}
	return rc, rc.up()
}

func (rc *chaosReceiver) up() error {
	ln, err := net.Listen("tcp", rc.addr)
	if err != nil {
		return err
	}
	rc.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.mu.Lock()
		hold := rc.hold
		if hold != nil {
			rc.held++
		}
		rc.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			rc.mu.Lock()
			rc.held--
			rc.mu.Unlock()
			if r.Context().Err() != nil {
				return // the sender gave up or died: nothing was processed
			}
		}
		time.Sleep(rc.delay)
		rc.mu.Lock()
		rc.got[r.Header.Get("webhook-id")]++
		rc.mu.Unlock()
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = rc.srv.Serve(ln) }()
	return nil
}

func (rc *chaosReceiver) down() { _ = rc.srv.Close() }

// wait waits until every event id was received, or until the deadline.
func (rc *chaosReceiver) wait(ids []string, deadline time.Duration) {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		rc.mu.Lock()
		n := 0
		for _, id := range ids {
			if rc.got[id] > 0 {
				n++
			}
		}
		rc.mu.Unlock()
		if n == len(ids) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// count reports how many of ids arrived and how many extra receipts came.
func (rc *chaosReceiver) count(ids []string) (found, extra int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, id := range ids {
		if n := rc.got[id]; n > 0 {
			found++
			extra += n - 1
		}
	}
	return found, extra
}

// events creates n customers (one customer.created event each) through
// the servers in turn, and returns the events' ids.
func (c *chaos) events(ctx context.Context, key string, scope tenant.Scope, addrs []string, n int) ([]string, error) {
	for i := 0; i < n; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addrs[i%len(addrs)]+"/v2/customers",
			strings.NewReader(fmt.Sprintf(`{"first_name":"E%d","last_name":"Vent","email":"e%d@example.com"}`, i, i)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("create customer: %d", res.StatusCode)
		}
	}
	var ids []string
	err := c.raw.SelectContext(ctx, &ids, `SELECT id FROM events WHERE merchant_id = $1 AND environment = $2 AND type = 'customer.created'`,
		scope.MerchantID, scope.Env)
	return ids, err
}

// hooked makes a merchant whose webhook points at a new receiver.
func (c *chaos) hooked(ctx context.Context, name string) (string, tenant.Scope, *chaosReceiver, error) {
	key, scope, err := c.merchant(ctx, name)
	if err != nil {
		return "", scope, nil, err
	}
	rc, err := newChaosReceiver()
	if err != nil {
		return "", scope, nil, err
	}
	if _, err := c.svc.Webhooks.Register(ctx, scope, "http://"+rc.addr+"/hooks", audit.Operator("test")); err != nil {
		rc.down()
		return "", scope, nil, err
	}
	return key, scope, rc, nil
}

// receiverDown records events while the receiver is down, brings it back,
// and checks that every event arrives.
func (c *chaos) receiverDown(ctx context.Context) (chaosResult, error) {
	key, scope, rc, err := c.hooked(ctx, "Receiver Down")
	if err != nil {
		return chaosResult{}, err
	}
	defer rc.down()
	srv, addr, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	defer srv.Stop()
	rc.down()
	ids, err := c.events(ctx, key, scope, []string{addr}, 100)
	if err != nil {
		return chaosResult{}, err
	}
	time.Sleep(2 * time.Second) // every first attempt fails meanwhile
	if err := rc.up(); err != nil {
		return chaosResult{}, err
	}
	rc.wait(ids, 60*time.Second) // the first retry comes after 5 s (with jitter)
	found, extra := rc.count(ids)
	// At-least-once: a repeated receipt is allowed when it carries the same
	// event id (the receiver's dedupe key); different ids would be new events.
	return chaosResult{Sent: len(ids), Acknowledged: len(ids), Found: found, Lost: len(ids) - found,
		Notes: fmt.Sprintf("receiver down 2 s; %d repeated receipts, each with its event's own id", extra)}, nil
}

// threeServers runs three server processes on one database and checks
// that each event is delivered exactly once in normal operation.
func (c *chaos) threeServers(ctx context.Context) (chaosResult, error) {
	key, scope, rc, err := c.hooked(ctx, "Three Servers")
	if err != nil {
		return chaosResult{}, err
	}
	defer rc.down()
	var addrs []string
	for i := 0; i < 3; i++ {
		srv, addr, err := c.server(ctx)
		if err != nil {
			return chaosResult{}, err
		}
		defer srv.Stop()
		addrs = append(addrs, addr)
	}
	ids, err := c.events(ctx, key, scope, addrs, 300)
	if err != nil {
		return chaosResult{}, err
	}
	rc.wait(ids, 30*time.Second)
	found, extra := rc.count(ids)
	// A delivery's attempt is recorded just after the receiver answered.
	var attempts int
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := c.raw.GetContext(ctx, &attempts, `SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE d.merchant_id = $1`, scope.MerchantID); err != nil {
			return chaosResult{}, err
		}
		if attempts >= len(ids) || time.Now().After(end) {
			break
		}
	}
	r := chaosResult{Sent: len(ids), Acknowledged: len(ids), Found: found, Lost: len(ids) - found, Duplicated: extra,
		Notes: fmt.Sprintf("3 processes; %d HTTP attempts recorded", attempts)}
	if attempts != len(ids) {
		r.Failure = fmt.Sprintf("%d attempts for %d events", attempts, len(ids))
	}
	return r, nil
}

func printChaos(w io.Writer, results []chaosResult) {
	fmt.Fprintf(w, "\n%-30s %6s %6s %6s %5s %5s  %s\n", "scenario", "sent", "acked", "found", "lost", "dup", "result")
	for _, r := range results {
		verdict := "ok"
		if !r.ok() {
			verdict = "FAIL " + r.Failure
		}
		fmt.Fprintf(w, "%-30s %6d %6d %6d %5d %5d  %s\n", r.Name, r.Sent, r.Acknowledged, r.Found, r.Lost, r.Duplicated, verdict)
		fmt.Fprintf(w, "%-30s %s\n", "", r.Notes)
	}
}

// killWithWebhooksInFlight kills a server with SIGKILL while it has
// deliveries in flight to an endpoint that hangs and to a healthy one, then
// starts another: every event must arrive at least once, and repeated
// receipts may come only from the deliveries in flight at the kill (their
// leases end and the new server sends them again).
func (c *chaos) killWithWebhooksInFlight(ctx context.Context) (chaosResult, error) {
	_, hangScope, hanging, err := c.hooked(ctx, "Hanging Endpoint")
	if err != nil {
		return chaosResult{}, err
	}
	defer hanging.down()
	_, okScope, healthy, err := c.hooked(ctx, "Healthy Endpoint")
	if err != nil {
		return chaosResult{}, err
	}
	defer healthy.down()
	healthy.delay = 100 * time.Millisecond
	hanging.hang()
	c.vars["WEBHOOK_TIMEOUT"] = "5s" // leases end 10 s after a claim
	defer delete(c.vars, "WEBHOOK_TIMEOUT")
	srv, _, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	record := func(scope tenant.Scope, n int) ([]string, error) {
		ids := make([]string, n)
		for i := range ids {
			e := event.New(scope, event.WebhookTest, map[string]int{"n": i}, time.Now().UTC())
			if err := c.svc.DB.RecordEvent(ctx, e); err != nil {
				return nil, err
			}
			ids[i] = e.ID
		}
		return ids, nil
	}
	hangIDs, err := record(hangScope, 30)
	if err != nil {
		return chaosResult{}, err
	}
	okIDs, err := record(okScope, 100)
	if err != nil {
		return chaosResult{}, err
	}
	// Kill while the hanging endpoint holds its requests and the healthy
	// one is mid-stream.
	for end := time.Now().Add(10 * time.Second); hanging.waiting() < 8 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	var leased int
	if err := c.raw.GetContext(ctx, &leased, `SELECT count(*) FROM webhook_deliveries WHERE lease_token IS NOT NULL`); err != nil {
		return chaosResult{}, err
	}
	srv.Kill()
	hanging.release()
	next, _, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	defer next.Stop()
	all := append(append([]string{}, hangIDs...), okIDs...)
	hanging.wait(hangIDs, 60*time.Second)
	healthy.wait(okIDs, 60*time.Second)
	foundH, extraH := hanging.count(hangIDs)
	foundOK, extraOK := healthy.count(okIDs)
	r := chaosResult{Sent: len(all), Acknowledged: len(all), Found: foundH + foundOK, Lost: len(all) - foundH - foundOK,
		Notes: fmt.Sprintf("%d deliveries leased at the kill (8 holding at the hanging endpoint); %d repeated receipts (at-least-once)",
			leased, extraH+extraOK)}
	if extraH+extraOK > leased {
		r.Failure = fmt.Sprintf(" %d repeated receipts, more than the %d deliveries in flight at the kill", extraH+extraOK, leased)
	}
	return r, nil
}
