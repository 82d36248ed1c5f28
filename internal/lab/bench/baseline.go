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
	"github.com/fundsource/fundsource/internal/requestlog"
)

// The comparison with a baseline (fundsource-lab bench --baseline REV): is
// this working tree's server faster or slower than REV's on the hot
// requests? On a shared machine a rate drifts from one stretch of seconds
// to the next by more than the difference being measured, so the two
// binaries run side by side, each on its own fresh database of one durable
// PostgreSQL, and take turns at each load in short slices (base, new; new,
// base; …): a round is one slice of each, seconds apart, and whatever
// slows the machine for a while slows both. A measure's answer is the
// median over rounds of new ÷ base within the round, with the lowest and
// highest round's ratio as its spread. Each load starts settled on both
// databases (autovacuum off, VACUUM (ANALYZE), CHECKPOINT), so that one
// binary's faster creations do not leave its GETs more to vacuum than the
// other's; after each slice the bench waits out the request log's flush,
// so that a slice's processor time is its own binary's. REV is built from
// git (git archive, the checkout untouched, as the upgrade check builds
// its old binary). Each binary migrates its own database, so a baseline
// older than the newest migrations runs on its own schema.

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
	phase   time.Duration // one slice of one load on one binary
	workers int
	// profiles, when set, is the folder each load's CPU profile of each
	// server goes to (side and load in the file's name).
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
	fmt.Fprintln(w, "each round's ratio, in order:")
	for _, r := range rs {
		each := make([]string, len(r.PerRound))
		for i, x := range r.PerRound {
			each[i] = fmt.Sprintf("%.2f", x)
		}
		fmt.Fprintf(w, "%-22s %s\n", r.Name, strings.Join(each, " "))
	}
}

// maxRounds keeps each round's account numbers apart: a round's creations
// start with 1000 + its index.
const maxRounds = 1000

// comparison checks a comparison's flags: a baseline, one to maxRounds
// rounds, a positive duration and worker count.
func comparison(rev, repo, newBin string, rounds int, phase time.Duration, workers int, profiles string) (compareConfig, error) {
	switch {
	case rev == "":
		return compareConfig{}, fmt.Errorf("%w: --rounds and --repo need --baseline REV", rig.ErrUsage)
	case rounds < 1 || rounds > maxRounds:
		return compareConfig{}, fmt.Errorf("%w: --rounds must be from 1 to %d", rig.ErrUsage, maxRounds)
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
	servers := map[string]*contender{}
	for which, bin := range map[string]string{sideBase: baseBin, sideNew: run.Bin} {
		s, err := c.start(ctx, run, bin, "fs_"+which)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", which, bin, err)
		}
		defer s.stop()
		servers[which] = s
	}
	sides := map[string][]side{sideBase: make([]side, c.rounds), sideNew: make([]side, c.rounds)}
	err = c.takeTurns(ctx, stdio, servers, "creation", func(s *contender, round int) func(context.Context, int64) error {
		return s.create(strconv.Itoa(1000 + round))
	}, func(which string, round int, r loadgen.Result, use cpuUse) {
		sides[which][round].create, sides[which][round].createCPU = r, use
	})
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.sourceID, err = s.newSource(ctx); err != nil {
			return err
		}
	}
	err = c.takeTurns(ctx, stdio, servers, "get", func(s *contender, _ int) func(context.Context, int64) error {
		return func(ctx context.Context, _ int64) error {
			_, err := s.api.send(ctx, http.MethodGet, "/v2/funding-source/"+s.sourceID, "", "")
			return err
		}
	}, func(which string, round int, r loadgen.Result, use cpuUse) {
		sides[which][round].get, sides[which][round].getCPU = r, use
	})
	if err != nil {
		return err
	}
	printRatios(stdio.Stdout, c.rev, c.rounds, ratios(sides[sideBase], sides[sideNew]))
	return nil
}

// contender is one binary's server, running on its own database with the
// bench's merchant and customer.
type contender struct {
	raw        *sqlx.DB
	server     *rig.Server
	pprofAddr  string // "" without profiles
	api        *apiClient
	customerID string
	sourceID   string // the source the GET load reads
	meter      cpuMeter
}

// start runs bin on a fresh database db of run's cluster, with a merchant
// and a customer, warmed up by a short creation load.
func (c compareConfig) start(ctx context.Context, run *rig.Run, bin, db string) (_ *contender, err error) {
	if err := createDatabase(ctx, run.DBURL, db); err != nil {
		return nil, err
	}
	dbURL := run.PG.URL(db)
	raw, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		return nil, err
	}
	s := &contender{raw: raw}
	defer func() { // a contender that does not start leaves nothing running
		if err != nil {
			s.stop()
		}
	}()
	dataDir := filepath.Join(run.Dir, db)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	addr, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	vars := map[string]string{"DATA_DIR": dataDir, "DATABASE_URL": dbURL, "LISTEN_ADDR": addr, "RATE_LIMIT_SANDBOX": "0"}
	if c.profiles != "" {
		if vars["PPROF_ADDR"], err = rig.FreeLoopback(); err != nil {
			return nil, err
		}
		s.pprofAddr = vars["PPROF_ADDR"]
	}
	key, err := createMerchant(ctx, bin, vars)
	if err != nil {
		return nil, err
	}
	if s.server, err = rig.StartServer(ctx, bin, vars); err != nil {
		return nil, err
	}
	s.meter = cpuMeter{pg: run.PG.PID(), server: s.server.PID()}
	s.api = &apiClient{base: "http://" + addr, key: key, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: c.workers, MaxConnsPerHost: c.workers}}}
	cus, err := s.api.call(ctx, http.MethodPost, "/v2/customers", `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`, "")
	if err != nil {
		return nil, err
	}
	s.customerID, _ = cus["user_id"].(string)
	if warm := loadgen.Run(ctx, "warm-up", c.workers, max(c.phase/2, 100*time.Millisecond), s.create("55")); warm.Errors > 0 {
		return nil, fmt.Errorf("warm-up: %s", warm.FirstError)
	}
	return s, nil
}

func (s *contender) stop() {
	if s.server != nil {
		_ = s.server.Stop()
	}
	_ = s.raw.Close()
}

// create is the creation load's operation: each call links a new account
// number, prefix then the call's sequence number.
func (s *contender) create(prefix string) func(ctx context.Context, seq int64) error {
	return func(ctx context.Context, seq int64) error {
		_, err := s.api.send(ctx, http.MethodPost, "/v2/funding-source", s.sourceBody(prefix, seq), prefix+"-"+strconv.FormatInt(seq, 10))
		return err
	}
}

func (s *contender) sourceBody(prefix string, seq int64) string {
	return fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"%s%010d"}`, s.customerID, prefix, seq)
}

// newSource links the source the GET load reads.
func (s *contender) newSource(ctx context.Context) (string, error) {
	src, err := s.api.call(ctx, http.MethodPost, "/v2/funding-source", s.sourceBody("44", 1), "")
	if err != nil {
		return "", err
	}
	id, _ := src["funding_source_id"].(string)
	return id, nil
}

// flushWait follows each slice: the request log writes what it buffered
// within its interval, and that write belongs to the slice's binary.
const flushWait = requestlog.Interval + 100*time.Millisecond

// takeTurns runs one load on both servers in alternating slices of
// c.phase, round by round, and hands each slice's result and processor
// time to record. Both databases are settled first; with profiles, each
// server's CPU profile covers the whole load.
func (c compareConfig) takeTurns(ctx context.Context, stdio rig.IO, servers map[string]*contender, load string,
	op func(s *contender, round int) func(context.Context, int64) error, record func(which string, round int, r loadgen.Result, use cpuUse)) error {
	for _, s := range servers {
		if err := settle(ctx, s.raw); err != nil {
			return err
		}
	}
	span := time.Duration(c.rounds) * 2 * (c.phase + flushWait + 200*time.Millisecond)
	stops := map[string]func() error{}
	for which, s := range servers {
		stops[which] = c.profile(ctx, s.pprofAddr, span, fmt.Sprintf("%s-%s", which, load))
	}
	fmt.Fprintf(stdio.Stderr, "bench: %s, %d rounds of %s each\n", load, c.rounds, c.phase)
	for r, pair := range order(c.rounds) {
		for _, which := range pair {
			s := servers[which]
			before := s.meter.sample()
			res := loadgen.Run(ctx, load, c.workers, c.phase, op(s, r))
			time.Sleep(flushWait)
			use := s.meter.sample().since(before, res.Ops)
			if res.Errors > 0 {
				return fmt.Errorf("round %d, %s, %s: %s", r+1, which, load, res.FirstError)
			}
			record(which, r, res, use)
		}
	}
	for which, stop := range stops {
		if err := stop(); err != nil {
			return fmt.Errorf("%s: %w", which, err)
		}
	}
	return nil
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

// profile starts recording the CPU profile of the server whose profiling
// endpoint is addr, for span, into the profiles folder as name.pprof; the
// function it returns waits for the file. Without a profiles folder it
// does nothing.
func (c compareConfig) profile(ctx context.Context, addr string, span time.Duration, name string) func() error {
	if c.profiles == "" {
		return func() error { return nil }
	}
	secs := max(int(span/time.Second), 1)
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
