package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/lab/formation"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/internal/wiring"
)

// Failover limits: writes must resume within these of the disruption.
const (
	killResumeLimit       = 20 * time.Second
	switchoverResumeLimit = 15 * time.Second
)

// failoverScenarios runs the scenarios on a pg_auto_failover formation:
// a planned switchover first (it needs both nodes), then the primary
// killed. Each runs two servers on the formation's multi-host URL, as
// pg_autoctl prints it, under eight clients creating funding sources.
func failoverScenarios(ctx context.Context, base *chaos, progress io.Writer) ([]chaosResult, error) {
	dir, err := os.MkdirTemp("", "fundsource-formation-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	fmt.Fprintln(progress, "chaos: starting a pg_auto_failover formation (monitor and two nodes)…")
	start := time.Now()
	f, err := formation.Start(ctx, dir, nil)
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
	var results []chaosResult
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
	cr, scope, err := c.creatorFor(ctx, name, digit, func() string { return addrs[next.Add(1)%2] })
	if err != nil {
		return chaosResult{}, err
	}
	rc, err := newChaosReceiver()
	if err != nil {
		return chaosResult{}, err
	}
	defer rc.down()
	if _, err := c.svc.Webhooks.Register(ctx, scope, "http://"+rc.addr+"/hooks"); err != nil {
		return chaosResult{}, err
	}

	var (
		mu        sync.Mutex
		disrupted time.Time // zero until the disruption begins
		resumed   time.Time // the first 200 to a request sent after it
	)
	cr.answered = func(sent time.Time, status int) {
		mu.Lock()
		defer mu.Unlock()
		if status == http.StatusOK && !disrupted.IsZero() && sent.After(disrupted) && resumed.IsZero() {
			resumed = time.Now()
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { cr.run(ctx, 8, fmt.Sprintf("fo%d", digit), stop); close(done) }()
	time.Sleep(3 * time.Second)
	mu.Lock()
	disrupted = time.Now()
	mu.Unlock()
	disruptErr := disrupt(ctx)
	// Writes must come back; then a little more load on the new primary.
	for end := disrupted.Add(limit + 10*time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		r := resumed
		mu.Unlock()
		if !r.IsZero() && time.Since(r) > 2*time.Second {
			break
		}
	}
	close(stop)
	<-done
	if disruptErr != nil {
		return chaosResult{}, disruptErr
	}

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
	checker := *c
	checker.raw = raw
	cr.c = &checker
	r, err := cr.check(ctx, scope)
	if err != nil {
		return r, err
	}
	var ids []string
	if err := raw.SelectContext(ctx, &ids, `SELECT id FROM events WHERE merchant_id = $1 AND environment = $2
		AND type = 'funding_source.created'`, scope.MerchantID, scope.Env); err != nil {
		return r, err
	}
	rc.wait(ids, 60*time.Second)
	found, extra := rc.count(ids)

	mu.Lock()
	outage := resumed.Sub(disrupted)
	mu.Unlock()
	alive := 0
	for _, a := range addrs {
		if res, err := c.client.Get("http://" + a + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				alive++
			}
		}
	}
	r.Notes = fmt.Sprintf("writes resumed %s after the disruption (limit %s); answers %v; %d requests cut off and retried; %d/%d webhooks (%d repeated)",
		outage.Round(100*time.Millisecond), limit, cr.status, cr.broken.Load(), found, len(ids), extra)
	switch {
	case resumed.IsZero():
		r.Failure += fmt.Sprintf(" writes did not resume within %s", limit+10*time.Second)
		r.Notes = fmt.Sprintf("answers %v", cr.status)
	case outage > limit:
		r.Failure += fmt.Sprintf(" writes resumed after %s, more than %s", outage.Round(100*time.Millisecond), limit)
	}
	if alive != len(addrs) {
		r.Failure += fmt.Sprintf(" %d of %d servers answer /readyz 200 afterwards", alive, len(addrs))
	}
	if found != len(ids) {
		r.Failure += fmt.Sprintf(" %d of %d events never reached the webhook", len(ids)-found, len(ids))
	}
	return r, nil
}
