package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/lab/loadgen"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/lab/upgrade"
)

// The comparison with a baseline (fundsource-lab bench --baseline REV):
// is this working tree's server faster or slower than REV's on the hot
// requests? Rates move by half between runs on a shared machine, so the
// two binaries are measured on one durable PostgreSQL, one after the
// other, in alternating order (base, new; new, base; …), each round on
// fresh databases of that one cluster, each load starting settled as the
// bench's do (settle: autovacuum off, VACUUM (ANALYZE), CHECKPOINT), so
// that one binary's faster creations do not leave its GETs more to vacuum
// and checkpoint than the other's; a measure's answer is the median
// over rounds of new ÷ base within the round, with the lowest and highest
// round's ratio as its spread. REV is built from git (git archive, the
// checkout untouched, as the upgrade check builds its old binary). Each
// binary migrates its own database, so a baseline older than the newest
// migrations runs on its own schema.

// measures are what a comparison reports, in order.
var measures = []struct {
	name   string
	higher bool // a higher value is better (a rate), else lower (a latency)
	of     func(side) float64
}{
	{"creation, per second", true, func(s side) float64 { return s.create.PerSec }},
	{"creation p99, ms", false, func(s side) float64 { return ms(s.create.P99) }},
	{"GET, per second", true, func(s side) float64 { return s.get.PerSec }},
	{"GET p99, ms", false, func(s side) float64 { return ms(s.get.P99) }},
	// Where each request's processor time goes: on a machine the server,
	// PostgreSQL and the load generator share, a rate follows their sum.
	{"creation server µs/op", false, func(s side) float64 { return s.createCPU.ServerUS }},
	{"creation db µs/op", false, func(s side) float64 { return s.createCPU.PostgresUS }},
	{"GET server µs/op", false, func(s side) float64 { return s.getCPU.ServerUS }},
	{"GET db µs/op", false, func(s side) float64 { return s.getCPU.PostgresUS }},
}

// side is one binary's loads in one round, with the processor time each
// cost per request.
type side struct {
	create, get       loadgen.Result
	createCPU, getCPU cpuUse
}

// compareConfig is a comparison's settings.
type compareConfig struct {
	rev     string // the baseline revision, as given
	repo    string // the git checkout REV is in
	newBin  string // this tree's server binary ("" : the one beside this binary)
	rounds  int
	phase   time.Duration
	workers int
	// profiles, when set, is the folder each load's CPU profile of the
	// server goes to (round, side and load in the file's name).
	profiles string
}

// Sides of a round.
const (
	sideBase = "base"
	sideNew  = "new"
)

// order is the order of the two binaries in each round: alternating, so
// that neither always runs first (on a cooler cache) or second (after the
// other's writes to the shared cluster's files).
func order(rounds int) [][2]string {
	out := make([][2]string, rounds)
	for r := range out {
		out[r] = [2]string{sideBase, sideNew}
		if r%2 == 1 {
			out[r] = [2]string{sideNew, sideBase}
		}
	}
	return out
}

// ratio is one measure's comparison over rounds.
type ratio struct {
	Name     string    `json:"name"`
	Base     float64   `json:"base"`   // the median over rounds
	New      float64   `json:"new"`    // the median over rounds
	Ratio    float64   `json:"ratio"`  // median over rounds of new ÷ base
	Low      float64   `json:"low"`    // the lowest round's ratio
	High     float64   `json:"high"`   // the highest round's ratio
	Better   bool      `json:"better"` // the ratio favours the new binary
	PerRound []float64 `json:"per_round"`
}

// ratios compares the rounds' sides, measure by measure.
func ratios(base, next []side) []ratio {
	out := make([]ratio, 0, len(measures))
	for _, m := range measures {
		var bs, ns, rs []float64
		for r := range min(len(base), len(next)) {
			b, n := m.of(base[r]), m.of(next[r])
			bs, ns = append(bs, b), append(ns, n)
			if b > 0 {
				rs = append(rs, n/b)
			}
		}
		q := ratio{Name: m.name, Base: median(bs), New: median(ns), Ratio: median(rs), PerRound: rs}
		if len(rs) > 0 {
			q.Low, q.High = slices.Min(rs), slices.Max(rs)
		}
		q.Better = (q.Ratio >= 1) == m.higher
		out = append(out, q)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printRatios writes the comparison's table.
func printRatios(w io.Writer, rev string, rounds int, rs []ratio) {
	fmt.Fprintf(w, "new ÷ baseline %s, median of %d alternating rounds (spread: lowest–highest round)\n", rev, rounds)
	fmt.Fprintf(w, "%-22s %12s %12s %8s %17s\n", "measure", "baseline", "new", "ratio", "spread")
	for _, r := range rs {
		verdict := "better"
		if !r.Better {
			verdict = "worse"
		}
		if r.Ratio == 1 {
			verdict = "same"
		}
		fmt.Fprintf(w, "%-22s %12.1f %12.1f %7.2f× %8.2f–%.2f×  %s\n", r.Name, r.Base, r.New, r.Ratio, r.Low, r.High, verdict)
	}
}

// comparison checks a comparison's flags: a baseline, at least one
// round, a positive duration and worker count.
func comparison(rev, repo, newBin string, rounds int, phase time.Duration, workers int, profiles string) (compareConfig, error) {
	switch {
	case rev == "":
		return compareConfig{}, fmt.Errorf("%w: --rounds and --repo need --baseline REV", rig.ErrUsage)
	case rounds < 1:
		return compareConfig{}, fmt.Errorf("%w: --rounds must be at least 1", rig.ErrUsage)
	case phase <= 0 || workers < 1:
		return compareConfig{}, fmt.Errorf("%w: --duration and --workers must be positive", rig.ErrUsage)
	}
	return compareConfig{rev: rev, repo: repo, newBin: newBin, rounds: rounds, phase: phase, workers: workers, profiles: profiles}, nil
}

// compare runs the comparison and prints its table.
func compare(ctx context.Context, c compareConfig, stdio rig.IO) error {
	if c.repo == "" {
		top, err := gitOut(ctx, ".", "rev-parse", "--show-toplevel")
		if err != nil {
			return fmt.Errorf("bench --baseline needs the project's git checkout (run it from inside one, or pass --repo): %w", err)
		}
		c.repo = top
	}
	commit, err := gitOut(ctx, c.repo, "rev-parse", "--verify", "--quiet", c.rev+"^{commit}")
	if err != nil {
		return fmt.Errorf("%w: --baseline %q is not a commit of %s", rig.ErrUsage, c.rev, c.repo)
	}
	baseBin, err := upgrade.Build(ctx, c.repo, commit, stdio.Stderr)
	if err != nil {
		return err
	}
	// As in the bench, autovacuum would land in whichever load it pleases,
	// and in whichever binary's; each load starts settled instead.
	run, err := rig.Prepare(ctx, "bench-baseline", c.newBin, "autovacuum=off")
	if err != nil {
		return err
	}
	defer run.Close()
	bins := map[string]string{sideBase: baseBin, sideNew: run.Bin}
	sides := map[string][]side{}
	for r, pair := range order(c.rounds) {
		for _, which := range pair {
			fmt.Fprintf(stdio.Stderr, "bench: round %d of %d, %s\n", r+1, c.rounds, which)
			s, err := c.measureSide(ctx, run, bins[which], fmt.Sprintf("fs_%d_%s", r, which))
			if err != nil {
				return fmt.Errorf("round %d, %s (%s): %w", r+1, which, bins[which], err)
			}
			sides[which] = append(sides[which], s)
		}
	}
	printRatios(stdio.Stdout, c.rev, c.rounds, ratios(sides[sideBase], sides[sideNew]))
	return nil
}

// measureSide runs one binary on a fresh database of run's cluster: a
// merchant and a customer, a warm-up, then the creation load and the GET
// load.
func (c compareConfig) measureSide(ctx context.Context, run *rig.Run, bin, db string) (side, error) {
	if err := createDatabase(ctx, run.DBURL, db); err != nil {
		return side{}, err
	}
	dbURL := run.PG.URL(db)
	raw, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		return side{}, err
	}
	defer raw.Close()
	dataDir := filepath.Join(run.Dir, db)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return side{}, err
	}
	addr, err := rig.FreeLoopback()
	if err != nil {
		return side{}, err
	}
	vars := map[string]string{"DATA_DIR": dataDir, "DATABASE_URL": dbURL, "LISTEN_ADDR": addr, "RATE_LIMIT_SANDBOX": "0"}
	if c.profiles != "" {
		if vars["PPROF_ADDR"], err = rig.FreeLoopback(); err != nil {
			return side{}, err
		}
	}
	key, err := createMerchant(ctx, bin, vars)
	if err != nil {
		return side{}, err
	}
	server, err := rig.StartServer(ctx, bin, vars)
	if err != nil {
		return side{}, err
	}
	defer server.Stop()
	a := &apiClient{base: "http://" + addr, key: key, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: c.workers, MaxConnsPerHost: c.workers}}}
	cus, err := a.call(ctx, http.MethodPost, "/v2/customers", `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`, "")
	if err != nil {
		return side{}, err
	}
	customerID, _ := cus["user_id"].(string)
	body := func(prefix string, seq int64) string {
		return fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"%s%010d"}`, customerID, prefix, seq)
	}
	create := func(prefix string) func(ctx context.Context, seq int64) error {
		return func(ctx context.Context, seq int64) error {
			_, err := a.send(ctx, http.MethodPost, "/v2/funding-source", body(prefix, seq), prefix+"-"+strconv.FormatInt(seq, 10))
			return err
		}
	}
	if warm := loadgen.Run(ctx, "warm-up", c.workers, max(c.phase/5, 100*time.Millisecond), create("55")); warm.Errors > 0 {
		return side{}, fmt.Errorf("warm-up: %s", warm.FirstError)
	}
	var s side
	if err := settle(ctx, raw); err != nil {
		return side{}, err
	}
	meter := cpuMeter{pg: run.PG.PID(), server: server.PID()}
	stop := c.profile(ctx, vars["PPROF_ADDR"], db+"-creation")
	before := meter.sample()
	s.create = loadgen.Run(ctx, "creation", c.workers, c.phase, create("1"))
	s.createCPU = meter.sample().since(before, s.create.Ops)
	if err := stop(); err != nil {
		return side{}, err
	}
	if s.create.Errors > 0 {
		return side{}, fmt.Errorf("creation: %s", s.create.FirstError)
	}
	src, err := a.call(ctx, http.MethodPost, "/v2/funding-source", body("44", 1), "")
	if err != nil {
		return side{}, err
	}
	id, _ := src["funding_source_id"].(string)
	if err := settle(ctx, raw); err != nil {
		return side{}, err
	}
	stop = c.profile(ctx, vars["PPROF_ADDR"], db+"-get")
	before = meter.sample()
	s.get = loadgen.Run(ctx, "GET", c.workers, c.phase, func(ctx context.Context, _ int64) error {
		_, err := a.send(ctx, http.MethodGet, "/v2/funding-source/"+id, "", "")
		return err
	})
	s.getCPU = meter.sample().since(before, s.get.Ops)
	if err := stop(); err != nil {
		return side{}, err
	}
	if s.get.Errors > 0 {
		return side{}, fmt.Errorf("GET: %s", s.get.FirstError)
	}
	return s, nil
}

// createMerchant makes the bench's merchant with bin's operator command
// (which migrates the database first) and returns its sandbox secret key.
func createMerchant(ctx context.Context, bin string, vars map[string]string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "merchant", "create", "--name", "Bench", "--email", "bench@fundsource.test",
		"--password", "bench-password-123", "--json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("merchant create: %v\n%s", err, stderr.String())
	}
	var created struct {
		Sandbox struct {
			SecretKey string `json:"secret_key"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.Sandbox.SecretKey == "" {
		return "", fmt.Errorf("merchant create printed no sandbox secret key (%v): %.300s", err, out)
	}
	return created.Sandbox.SecretKey, nil
}

// createDatabase creates database name in the cluster of dbURL.
func createDatabase(ctx context.Context, dbURL, name string) error {
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name))
	return err
}

// apiClient sends API requests with one secret key.
type apiClient struct {
	base, key string
	client    *http.Client
}

func (a *apiClient) call(ctx context.Context, method, path, body, idemKey string) (map[string]any, error) {
	data, err := a.send(ctx, method, path, body, idemKey)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// send sends one request and wants 200 with a JSON object.
func (a *apiClient) send(ctx context.Context, method, path, body, idemKey string) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	res, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%s %s: %d %.200s", method, path, res.StatusCode, data)
	}
	return data, nil
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// profile starts recording the server's CPU profile (served at addr) for
// the load about to run, into the profiles folder as name.pprof; the
// function it returns waits for the file. Without a profiles folder it
// does nothing.
func (c compareConfig) profile(ctx context.Context, addr, name string) func() error {
	if c.profiles == "" {
		return func() error { return nil }
	}
	secs := max(int(c.phase/time.Second), 1)
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("profile %s: %w", name, err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("profile %s: %s", name, resp.Status)
			}
			if err := os.MkdirAll(c.profiles, 0o755); err != nil {
				return err
			}
			f, err := os.Create(filepath.Join(c.profiles, name+".pprof"))
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}()
	}()
	return func() error { return <-done }
}
