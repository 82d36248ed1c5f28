package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/lab/formation"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/wiring"
)

// Failover limits: no write may fail for longer than these from the
// disruption on. A switchover's is the shorter: the monitor starts the
// promotion at once, where a kill waits first for it to find the primary
// unhealthy, and the formation's authentication_timeout keeps the old
// primary's fast shutdown short under load (see package formation).
const (
	killResumeLimit       = 20 * time.Second
	switchoverResumeLimit = 15 * time.Second
)

// failoverScenarios runs the scenarios on a pg_auto_failover formation:
// a planned switchover first (it needs both nodes), then the primary
// killed. Each runs two servers on the formation's multi-host URL, as
// pg_autoctl prints it, under eight clients creating funding sources.
func failoverScenarios(ctx context.Context, base *chaos, progress io.Writer) (results []chaosResult, err error) {
	dir, err := os.MkdirTemp("", "fundsource-formation-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	// pg_autoctl's output is kept beside the formation's folder, which Stop
	// removes; a scenario that fails or loses a write prints where it is
	// and its last lines.
	log, err := os.CreateTemp("", "fundsource-formation-*.log")
	if err != nil {
		return nil, err
	}
	defer func() {
		log.Close()
		if err == nil && !slices.ContainsFunc(results, func(r chaosResult) bool { return !r.ok() }) {
			os.Remove(log.Name())
			return
		}
		fmt.Fprintf(progress, "chaos: pg_autoctl's output is in %s; its end:\n%s\n", log.Name(), rig.Tail(log.Name(), 40))
	}()
	fmt.Fprintln(progress, "chaos: starting a pg_auto_failover formation (monitor and two nodes)…")
	start := time.Now()
	f, err := formation.Start(ctx, dir, log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("formation: %w", err)
	}
	defer f.Stop()
	standbys, err := f.SynchronousStandbys(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "chaos: formation up in %s; synchronous_standby_names %q\n", time.Since(start).Round(100*time.Millisecond), standbys)
	if standbys == "" {
		return nil, errors.New("formation: the primary has no synchronous standby")
	}
	vars := make(map[string]string, len(base.vars))
	for k, v := range base.vars {
		vars[k] = v
	}
	vars["DATABASE_URL"] = f.URI
	err = rig.Wire(ctx, vars, func(svc *wiring.Services, raw *sqlx.DB) error {
		c := &chaos{svc: svc, raw: raw, run: base.run, vars: vars, client: base.client, load: base.load}
		for _, sc := range []struct {
			name    string
			digit   int
			limit   time.Duration
			disrupt func(context.Context) error
		}{
			{"failover: planned switchover", 5, switchoverResumeLimit, f.Switchover},
			{"failover: primary killed", 6, killResumeLimit, func(ctx context.Context) error {
				p, err := f.Primary(ctx)
				if err != nil {
					return err
				}
				f.Kill(p)
				return nil
			}},
		} {
			if err := f.WaitHealthy(ctx, 3*time.Minute); err != nil {
				return err
			}
			fmt.Fprintf(progress, "chaos: %s…\n", sc.name)
			t0 := time.Now()
			r, err := c.failover(ctx, f.URI, sc.name, sc.digit, sc.limit, sc.disrupt)
			fmt.Fprintf(progress, "chaos: %s took %s\n", sc.name, time.Since(t0).Round(100*time.Millisecond))
			if err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
			r.Name = sc.name
			results = append(results, r)
		}
		return nil
	})
	return results, err
}

// failover runs two servers under eight creating clients, disrupts the
// formation a few seconds in, and checks the outcome: every acknowledged
// creation exactly once and whole, no 500, both servers alive, writes
// resumed within limit, and every funding_source.created event delivered.
func (c *chaos) failover(ctx context.Context, uri, name string, digit int, limit time.Duration,
	disrupt func(context.Context) error) (chaosResult, error) {
	var addrs []string
	for range 2 {
		srv, addr, err := c.server(ctx)
		if err != nil {
			return chaosResult{}, err
		}
		defer srv.Stop()
		addrs = append(addrs, addr)
	}
	var next atomic.Int64
	cr, scope, err := c.creatorFor(ctx, fmt.Sprintf("Failover %d", digit), digit, func() string { return addrs[next.Add(1)%2] })
	if err != nil {
		return chaosResult{}, err
	}
	rc, err := newChaosReceiver()
	if err != nil {
		return chaosResult{}, err
	}
	defer rc.down()
	if _, err := c.svc.Webhooks.Register(ctx, scope, "http://"+rc.addr+"/hooks", audit.Operator("test")); err != nil {
		return chaosResult{}, err
	}

	var (
		mu  sync.Mutex
		oks []time.Time // when each 200 arrived
	)
	cr.answered = func(_ time.Time, status int) {
		if status == http.StatusOK {
			mu.Lock()
			oks = append(oks, time.Now())
			mu.Unlock()
		}
	}
	lastOK := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if len(oks) == 0 {
			return time.Time{}
		}
		return oks[len(oks)-1]
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { cr.run(ctx, 8, fmt.Sprintf("fo%d", digit), stop); close(done) }()
	time.Sleep(3 * time.Second)
	disrupted := time.Now()
	disruptErr := disrupt(ctx) // a kill returns at once, a switchover once it is over
	returned := time.Now()
	// Load goes on until writes flow again (a 200 in the last half
	// second, 3 s after the disruption returned), or for limit + 10 s.
	for end := disrupted.Add(limit + 10*time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if time.Since(returned) > 3*time.Second && time.Since(lastOK()) < 500*time.Millisecond {
			break
		}
	}
	close(stop)
	<-done
	stopped := time.Now()
	if disruptErr != nil {
		return chaosResult{}, disruptErr
	}
	// The outage is the longest time without a successful creation from
	// the disruption to the end of the load.
	mu.Lock()
	outage, prev := time.Duration(0), disrupted
	for _, t := range append(oks, stopped) {
		if t.Before(disrupted) {
			continue
		}
		outage = max(outage, t.Sub(prev))
		prev = t
	}
	mu.Unlock()

	// A fresh pool: the suite's own may still hold connections to the old primary.
	dsn, err := postgres.ConnString(uri)
	if err != nil {
		return chaosResult{}, err
	}
	raw, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return chaosResult{}, err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(2)
	checker := *c
	checker.raw = raw
	cr.c = &checker
	// The servers' pools refill on the new primary meanwhile: a check
	// refused for a moment (too many clients) is tried again.
	var (
		r     chaosResult
		ids   []string
		conns int
	)
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		if r, err = cr.check(ctx, scope); err == nil {
			err = raw.SelectContext(ctx, &ids, `SELECT id FROM events WHERE merchant_id = $1 AND environment = $2
				AND type = 'funding_source.created'`, scope.MerchantID, scope.Env)
		}
		if err == nil {
			err = raw.GetContext(ctx, &conns, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'`)
		}
		if err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		return r, err
	}
	rc.wait(ids, 60*time.Second)
	found, extra := rc.count(ids)

	alive := 0
	for _, a := range addrs {
		if res, err := c.client.Get("http://" + a + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				alive++
			}
		}
	}
	r.Notes = fmt.Sprintf("write outage %s (limit %s); answers %v; %d requests cut off and retried; %d/%d webhooks arrived (%d repeated); %d connections on the primary",
		outage.Round(100*time.Millisecond), limit, cr.status, cr.broken.Load(), found, len(ids), extra, conns)
	if outage > limit {
		r.Failure += fmt.Sprintf(" no write succeeded for %s, more than %s", outage.Round(100*time.Millisecond), limit)
	}
	if alive != len(addrs) {
		r.Failure += fmt.Sprintf(" %d of %d servers answer /readyz 200 afterwards", alive, len(addrs))
	}
	if found != len(ids) {
		r.Failure += fmt.Sprintf(" %d of %d events never reached the webhook", len(ids)-found, len(ids))
	}
	return r, nil
}
