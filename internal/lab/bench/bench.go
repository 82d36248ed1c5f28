// Package bench is the load bench of `make bench` (fundsource-lab bench):
// the service measured against PostgreSQL's own limits on this machine.
//
// Every load starts from the same state: before each load but the
// cold-statistics one, the bench runs VACUUM (ANALYZE) of every table that
// has been written and CHECKPOINT, with autovacuum off in its cluster. A
// table never written is left unanalyzed, as autovacuum leaves it: analyzed
// while empty, it would be planned as empty until the next ANALYZE.
//
// This machine's speed moves from one stretch of seconds to the next, so
// one run of a load is no measure: each load runs --runs times (three by
// default), in passes over the loads whose order alternates (1 2 … n,
// n … 2 1, 1 2 …), so that none gains from its place in the run; a load
// reports its median run's rate and percentiles with the lowest and
// highest run's beside them, and the targets judge the medians. The
// cold-statistics load reads sources from tables that were never
// analyzed and is compared with the same reads just analyzed, so a plan
// that depends on statistics shows; it runs once, as a deployment's
// tables are never analyzed only once.
//
// Floors (an HTTP round trip alone, a request with one database round trip,
// a creation's HTTP front refused before decoding, and a bare Go server
// doing only a load's work: fundsource-lab bare) bound what any
// implementation could reach on the machine. Targets are ratios within one
// run, because the machine's speed moves between runs.
package bench

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/lab/loadgen"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/wiring"
	"github.com/fundsource/fundsource/web"
	"github.com/fundsource/fundsource/web/surface"
)

// benchReport is the table 'fundsource bench' prints and writes as JSON.
type benchReport struct {
	Date     time.Time `json:"date"`
	Duration string    `json:"phase_duration"`
	Workers  int       `json:"workers"`
	// Runs is how many times each load ran (the cold-statistics pair
	// once: it needs tables never analyzed).
	Runs   int          `json:"runs"`
	Loads  []benchLoad  `json:"loads"`
	Checks []benchCheck `json:"checks"`
	// FirstFailure names the first failed operation, "" when none failed.
	FirstFailure string `json:"first_failure,omitempty"`
	// Failed names the unmet targets that fail the run: the absolute
	// ones, which hold on any machine.
	Failed []string `json:"failed,omitempty"`
}

// benchLoad is one measured load with what it cost the machine.
type benchLoad struct {
	loadgen.Result
	CPU cpuUse `json:"cpu"`
	// Statements are where the database spent its time (with -statements).
	Statements []statementStat `json:"statements,omitempty"`
	// Spread is how the load's runs differed; the rate and percentiles
	// above are the median run's.
	Spread *spread `json:"spread,omitempty"`
}

// benchCheck is one target the bench checks and the value it found.
type benchCheck struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target"`
	Met    bool    `json:"met"`
}

// hostedBefore and selectBefore are the hosted page's GET rate and the
// plain primary-key SELECT's in one run of this bench before the work on
// round trips. The hosted page's target
// compares its share of the plain SELECT's rate with theirs: this machine's
// speed moves from run to run by half (the plain loops' rates over a day),
// so a rate from another day is no base, while a ratio within one run is.
const (
	hostedBefore = 6375.0
	selectBefore = 68323.0
)

// bench holds what the phases share.
type bench struct {
	svc *wiring.Services
	raw *sqlx.DB // a pool of the bench's own, for raw SQL
	// The plain loads' statements, prepared once per connection as the
	// server's statements are.
	insertStmt, selectStmt, rowsStmt *sql.Stmt
	base                             string // the server's address
	dbURL                            string // the database's
	dataDir                          string // the server's DATA_DIR (its keys)
	bareBase                         string // the bare server's address (see ServeBare)
	barePID                          int
	plainRows                        int64 // the plain INSERT loop's rows, which the plain SELECT reads
	client                           *http.Client
	key                              string
	scope                            tenant.Scope
	customerID                       string
	workers                          int
	phase                            time.Duration
	cpu                              cpuMeter
	// statements, when > 0, is how many of each load's top statements
	// (pg_stat_statements) to report.
	statements int
	// verifications is how many instant verifications the bench times.
	verifications int
	// payouts is how many instant payouts the bench times.
	payouts int
	// runs is how many times each load runs, in passes over the loads
	// whose order alternates.
	runs int
}

// Run measures the service against the database's own limits: a private
// durable PostgreSQL (fsync on), the server as its own process, and load
// from this one.
func Run(ctx context.Context, args []string, stdio rig.IO) error {
	fs := flag.NewFlagSet("fundsource-lab bench", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	phase := fs.Duration("duration", 5*time.Second, "how long each load runs")
	workers := fs.Int("workers", 32, "concurrent connections")
	out := fs.String("out", "bench/results.json", "where the JSON results go")
	serverBin := fs.String("server", "", "the fundsource binary to run as the server (default: the one beside this binary)")
	topN := fs.Int("statements", 0, "report each load's N most expensive SQL statements (loads pg_stat_statements)")
	verifications := fs.Int("verifications", 200, "instant verifications to time, one after another, from initiation to Verified")
	payouts := fs.Int("payouts", 200, "instant payouts to time, one after another, from POST /v2/payments to processed")
	runs := fs.Int("runs", 3, "how many times each load runs (1 to 9), in passes whose order alternates; the targets judge the median run")
	baseline := fs.String("baseline", "", "compare with the server built from this git revision instead: creation and GET, alternating the two binaries")
	rounds := fs.Int("rounds", 12, "with --baseline: how many rounds of both binaries (each a slice of --duration, 2s unless given, per binary and load)")
	repo := fs.String("repo", "", "with --baseline: the git checkout REV is in (default: the one around the current folder)")
	profiles := fs.String("profile", "", "with --baseline: write each load's CPU profile of each server into this folder")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	if *runs < 1 || *runs > maxRuns {
		return fmt.Errorf("%w: --runs must be from 1 to %d", rig.ErrUsage, maxRuns)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["baseline"] || set["rounds"] || set["repo"] || set["profile"] {
		if !set["duration"] {
			*phase = 2 * time.Second
		}
		c, err := comparison(*baseline, *repo, *serverBin, *rounds, *phase, *workers, *profiles)
		if err != nil {
			return err
		}
		return compare(ctx, c, stdio)
	}
	// Autovacuum would land in whichever load it pleases; the bench vacuums
	// and checkpoints before each load instead, so every load starts alike.
	settings := []string{"autovacuum=off"}
	if *topN > 0 {
		settings = append(settings, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_planning=on")
	}
	run, err := rig.Prepare(ctx, "bench", *serverBin, settings...)
	if err != nil {
		return err
	}
	defer run.Close()

	vars := map[string]string{"DATA_DIR": run.Dir, "DATABASE_URL": run.DBURL, "RATE_LIMIT_SANDBOX": "0",
		"WEBHOOK_ALLOW_PRIVATE_TARGETS": "true", "HOSTED_SUBMITS_PER_IP": "100000", "PPROF_ADDR": stdio.Getenv("PPROF_ADDR")}
	for _, k := range []string{"WEBHOOK_INFLIGHT", "WEBHOOK_PER_ENDPOINT", "GOGC"} {
		vars[k] = stdio.Getenv(k)
	}
	// The rail simulator over HTTP, as `make run` serves it: the instant
	// verifications then cross the network to the rail as in production.
	railLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	railCtx, stopRail := context.WithCancel(ctx)
	defer stopRail()
	go web.ServeUntil(railCtx, railLn, railsim.New().Handler())
	vars["INSTANT_RAIL_URL"] = "http://" + railLn.Addr().String()
	return rig.Wire(ctx, vars, func(svc *wiring.Services, raw *sqlx.DB) error {
		addr, err := rig.FreeLoopback()
		if err != nil {
			return err
		}
		vars["LISTEN_ADDR"] = addr
		server, err := rig.StartServer(ctx, run.Bin, vars)
		if err != nil {
			return err
		}
		defer server.Stop()
		b := &bench{svc: svc, raw: raw, base: "http://" + addr, dbURL: run.DBURL, dataDir: run.Dir, workers: *workers, phase: *phase, statements: *topN,
			cpu: cpuMeter{pg: run.PG.PID(), server: server.PID()}, verifications: max(*verifications, 1), payouts: max(*payouts, 1), runs: *runs,
			client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *workers, MaxConnsPerHost: *workers}}}
		if err := b.setup(ctx); err != nil {
			return err
		}
		rep, err := b.run(ctx)
		if err != nil {
			return err
		}
		rep.Date, rep.Duration, rep.Workers, rep.Runs = time.Now().UTC(), phase.String(), *workers, *runs
		printBench(stdio.Stdout, rep)
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return err
		}
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			return err
		}
		if len(rep.Failed) > 0 {
			return fmt.Errorf("targets not met: %s", strings.Join(rep.Failed, "; "))
		}
		return nil
	})
}

func (b *bench) setup(ctx context.Context) error {
	m, err := b.svc.Merchants.Create(ctx, "Bench", "bench@fundsource.test", "bench-password-123")
	if err != nil {
		return err
	}
	b.key, b.scope = m.Sandbox.SecretKey, tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	// The hosted page load returns customers to the merchant's site.
	if _, err := b.svc.Merchants.AllowRedirectOrigin(ctx, b.scope, "https://shop.example", audit.Operator("test")); err != nil {
		return err
	}
	c, err := b.svc.Customers.Create(ctx, b.scope, customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	b.customerID = c.ID
	if err != nil {
		return err
	}
	_, err = b.raw.ExecContext(ctx, `CREATE TABLE bench_plain (id bigserial PRIMARY KEY, merchant_id text NOT NULL, payload text NOT NULL)`)
	if err == nil && b.statements > 0 {
		_, err = b.raw.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{{&b.insertStmt, `INSERT INTO bench_plain (merchant_id, payload) VALUES ($1, $2)`}, {&b.selectStmt, plainSelect}, {&b.rowsStmt, creationRows}} {
		if err == nil {
			*p.stmt, err = b.raw.PrepareContext(ctx, p.query)
		}
	}
	return err
}

// measure runs one load and records what it cost each process (and, with
// -statements, where the database spent its time).
func (b *bench) measure(ctx context.Context, name string, op func(ctx context.Context, seq int64) error) (benchLoad, error) {
	return b.measureFor(ctx, name, b.phase, op)
}

func (b *bench) measureFor(ctx context.Context, name string, d time.Duration, op func(ctx context.Context, seq int64) error) (benchLoad, error) {
	return b.measured(ctx, func() (loadgen.Result, error) {
		return loadgen.Run(ctx, name, b.workers, d, op), nil
	})
}

func (b *bench) measured(ctx context.Context, load func() (loadgen.Result, error)) (benchLoad, error) {
	if err := settle(ctx, b.raw); err != nil {
		return benchLoad{}, err
	}
	return b.observed(ctx, load)
}

// settle brings db to the state each load starts from: statistics
// current, no dead rows, and no checkpoint pending. (The cold-statistics
// load is the one that runs without them.) Tables that never held a row
// are left alone, as autovacuum leaves them: analyzed empty, a table is
// planned as empty until the next ANALYZE, and a prepared statement's
// generic plan scans it whole however much the load writes into it (the
// webhook load's read-backs would).
func settle(ctx context.Context, db *sqlx.DB) error {
	var tables []string
	if err := db.SelectContext(ctx, &tables, `SELECT quote_ident(relname) FROM pg_class
WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND pg_relation_size(oid) > 0 ORDER BY relname`); err != nil {
		return fmt.Errorf("tables to vacuum: %w", err)
	}
	for _, q := range []string{`VACUUM (ANALYZE) ` + strings.Join(tables, ", "), `CHECKPOINT`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// observed runs one load as it finds the database and records what it
// cost each process (and, with -statements, where the database spent its
// time).
func (b *bench) observed(ctx context.Context, load func() (loadgen.Result, error)) (benchLoad, error) {
	if b.statements > 0 {
		if _, err := b.raw.ExecContext(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
			return benchLoad{}, err
		}
	}
	before := b.cpu.sample()
	r, err := load()
	if err != nil {
		return benchLoad{}, err
	}
	l := benchLoad{Result: r, CPU: b.cpu.sample().since(before, r.Ops)}
	if b.statements > 0 {
		l.Statements, err = statements(ctx, b.raw, b.statements)
	}
	return l, err
}

func (b *bench) run(ctx context.Context) (benchReport, error) {
	var rep benchReport
	create := func(seq int64, prefix string) string {
		return fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"%s%010d"}`, b.customerID, prefix, seq)
	}
	var id, publicKey string
	var hooks, noisy, instant, payouts benchLoad
	var noisyRate float64    // attempts per second to all five endpoints, the median run's
	var noisyRates []float64 // each run's
	// First, while the tables have never been analyzed (autovacuum is off):
	// sources bulk-created into a few customers, then read.
	cold, coldAnalyzed, err := b.coldStatistics(ctx)
	if err != nil {
		return rep, fmt.Errorf("cold statistics: %w", err)
	}
	// Warm-up, not measured: the first load would otherwise also pay for
	// the server's new connections, their prepared statements and the
	// fresh tables' first pages.
	warm := loadgen.Run(ctx, "warm-up", b.workers, max(b.phase/5, 100*time.Millisecond), func(ctx context.Context, seq int64) error {
		return b.send(ctx, http.MethodPost, "/v2/funding-source", create(seq, "55"), "bench-warm-"+strconv.FormatInt(seq, 10), nil)
	})
	if warm.Errors > 0 {
		return rep, fmt.Errorf("warm-up: %s", warm.FirstError)
	}
	bare, err := b.startBare(ctx)
	if err != nil {
		return rep, err
	}
	defer bare.Stop()
	// The six write loads (the creation over HTTP, the same work direct,
	// the plain INSERT, the creation's rows, the creation's statement alone
	// and the bare server's creation) run b.runs times each, a slice of
	// half a phase a run, in passes whose order alternates:
	// 1 2 3 4 5 6, 6 5 4 3 2 1, 1 2 … so that none gains from its place
	// in the run: a load's PostgreSQL CPU moves with its place (tables
	// grow, and a statement costs less once its pages and plans are warm),
	// and the ratios compare these loads. Each run's account numbers
	// and keys carry its number.
	writes := []struct {
		name string
		op   func(run string, seq int64) error
		bare bool // served by the bare server
	}{
		{"create funding source over HTTP", func(run string, seq int64) error {
			return b.send(ctx, http.MethodPost, "/v2/funding-source", create(seq, "1"+run), "bench-http-"+run+"-"+strconv.FormatInt(seq, 10), nil)
		}, false},
		{"create funding source, same transaction without HTTP", func(run string, seq int64) error {
			return b.directCreate(ctx, create(seq, "2"+run), "bench-direct-"+run+"-"+strconv.FormatInt(seq, 10))
		}, false},
		{"plain single-row INSERT", func(run string, seq int64) error {
			_, err := b.insertStmt.ExecContext(ctx, b.scope.MerchantID, create(seq, "3"+run))
			return err
		}, false},
		{"the creation's rows, one statement and commit each", func(run string, seq int64) error {
			return b.creationRows(ctx, run+"-"+strconv.FormatInt(seq, 10))
		}, false},
		{"the creation's statement alone, from the store", func(run string, seq int64) error {
			return b.storeCreate(ctx, run+"-"+strconv.FormatInt(seq, 10))
		}, false},
		{"floor: a bare Go server's creation", func(run string, seq int64) error {
			_, err := b.exchange(ctx, http.MethodPost, b.bareBase+"/create", create(seq, "6"+run), "application/json",
				"bench-bare-"+run+"-"+strconv.FormatInt(seq, 10), http.StatusOK)
			return err
		}, true},
	}
	writeLoads := make([]func(run int) (benchLoad, error), len(writes))
	for i, w := range writes {
		writeLoads[i] = func(run int) (benchLoad, error) {
			measure := func() (benchLoad, error) {
				return b.measureFor(ctx, w.name, b.phase/2, func(ctx context.Context, seq int64) error { return w.op(strconv.Itoa(run+1), seq) })
			}
			if w.bare {
				measure = b.onBare(measure)
			}
			return measure()
		}
	}
	loads, err := b.passes(writeLoads)
	if err != nil {
		return rep, err
	}
	rep.Loads = append(rep.Loads, loads...)
	// The plain INSERT loop's rows, which the plain SELECT loops read.
	if err := b.raw.GetContext(ctx, &b.plainRows, `SELECT greatest(max(id), 1) FROM bench_plain`); err != nil {
		return rep, err
	}
	// What the read loads read: a source that nothing else touches, and
	// one whose micro-deposits are on their way, which the hosted page
	// shows.
	src, err := b.call(ctx, http.MethodPost, "/v2/funding-source", create(1, "44"), "")
	if err != nil {
		return rep, fmt.Errorf("the GET loads' source: %w", err)
	}
	id = src["funding_source_id"].(string)
	if src, err = b.call(ctx, http.MethodPost, "/v2/funding-source", create(2, "44"), ""); err != nil {
		return rep, fmt.Errorf("the hosted page's source: %w", err)
	}
	hostedID := src["funding_source_id"].(string)
	if _, err := b.svc.Funding.InitiateVerification(ctx, b.scope, hostedID); err != nil {
		return rep, err
	}
	env, err := b.svc.Merchants.Environment(ctx, b.scope)
	if err != nil {
		return rep, err
	}
	publicKey = env.PublicKey
	steps := []func(run int) (benchLoad, error){
		func(int) (benchLoad, error) {
			return b.measure(ctx, "GET funding source over HTTP", func(ctx context.Context, _ int64) error {
				return b.send(ctx, http.MethodGet, "/v2/funding-source/"+id, "", "", nil)
			})
		},
		func(int) (benchLoad, error) {
			return b.onBare(func() (benchLoad, error) {
				return b.measure(ctx, "floor: a bare Go server's GET of the row", func(ctx context.Context, _ int64) error {
					_, err := b.exchange(ctx, http.MethodGet, b.bareBase+"/source/"+id, "", "", "", http.StatusOK)
					return err
				})
			})()
		},
		func(int) (benchLoad, error) {
			return b.onBare(func() (benchLoad, error) {
				return b.measure(ctx, "floor: a bare Go server's plain SELECT", func(ctx context.Context, seq int64) error {
					_, err := b.exchange(ctx, http.MethodGet, b.bareBase+"/plain/"+strconv.FormatInt(1+seq%b.plainRows, 10), "", "", "", http.StatusOK)
					return err
				})
			})()
		},
		func(int) (benchLoad, error) {
			return b.measure(ctx, "floor: HTTP round trip alone (GET /healthz)", func(ctx context.Context, _ int64) error {
				return b.page(ctx, "/healthz")
			})
		},
		func(int) (benchLoad, error) {
			return b.measure(ctx, "floor: HTTP with one database round trip (GET /readyz)", func(ctx context.Context, _ int64) error {
				return b.page(ctx, "/readyz")
			})
		},
		func(run int) (benchLoad, error) {
			return b.measure(ctx, "floor: a creation's HTTP front (refused before decoding)", func(ctx context.Context, seq int64) error {
				return b.refused(ctx, create(seq, "88"), "bench-front-"+strconv.Itoa(run)+"-"+strconv.FormatInt(seq, 10))
			})
		},
		func(int) (benchLoad, error) {
			return b.measure(ctx, "plain primary-key SELECT", func(ctx context.Context, seq int64) error {
				var payload string
				err := b.selectStmt.QueryRowContext(ctx, 1+seq%b.plainRows).Scan(&payload)
				if errors.Is(err, sql.ErrNoRows) {
					// An insert cut off at the end of its load left a gap in
					// the ids: the lookup cost the same.
					return nil
				}
				return err
			})
		},
		func(int) (benchLoad, error) {
			return b.measure(ctx, "hosted page GET", func(ctx context.Context, _ int64) error {
				return b.page(ctx, "/bank-account/"+publicKey+"/"+b.customerID+"/"+hostedID+"?successUrl=https%3A%2F%2Fshop.example%2Fdone")
			})
		},
		func(int) (benchLoad, error) {
			return b.measured(ctx, func() (loadgen.Result, error) { return b.webhooks(ctx, 500) })
		},
		func(run int) (benchLoad, error) {
			var rate float64
			l, err := b.measured(ctx, func() (loadgen.Result, error) {
				r, at, err := b.noisyNeighbours(ctx, run)
				rate = at
				return r, err
			})
			noisyRates = append(noisyRates, rate)
			return l, err
		},
		func(run int) (benchLoad, error) {
			return b.instantVerifications(ctx, run)
		},
		func(run int) (benchLoad, error) {
			return b.measured(ctx, func() (loadgen.Result, error) {
				return InstantPayouts(ctx, b.client, b.base, b.key, b.customerID, run, b.payouts)
			})
		},
	}
	if loads, err = b.passes(steps); err != nil {
		return rep, fmt.Errorf("after the create loads: %w", err)
	}
	rep.Loads = append(rep.Loads, loads...)
	hooks, noisy, instant, payouts = loads[8], loads[9], loads[10], loads[11]
	noisyRate = median(noisyRates)
	rep.Loads = append(rep.Loads, cold, coldAnalyzed)
	rss, err := rig.PeakRSS(b.cpu.server)
	if err != nil {
		return rep, err
	}
	httpCreate, directCreate, plain, _, statement, bareCreate := rep.Loads[0], rep.Loads[1], rep.Loads[2], rep.Loads[3], rep.Loads[4], rep.Loads[5]
	get, bareGet, barePlain, httpAlone, oneTrip, front, selectPK, hosted := rep.Loads[6], rep.Loads[7], rep.Loads[8], rep.Loads[9],
		rep.Loads[10], rep.Loads[11], rep.Loads[12], rep.Loads[13]
	ratio := func(a, b benchLoad) float64 {
		if b.PerSec == 0 {
			return 0
		}
		return a.PerSec / b.PerSec
	}
	// ceiling is the best ratio over base of a request that must do both a
	// and b. Every load keeps the machine's cores busy, so their costs add:
	// at best 1 / (1/a + 1/b) requests a second.
	ceiling := func(a, b, base benchLoad) float64 {
		if a.PerSec == 0 || b.PerSec == 0 || base.PerSec == 0 {
			return 0
		}
		return 1 / (1/a.PerSec + 1/b.PerSec) / base.PerSec
	}
	// serverSide compares what a creation costs the machine's cores with
	// HTTP and without, leaving out the load generator's HTTP client: on
	// this one machine it takes the server's cores, where a merchant's
	// client would run on its own.
	serverSide := func(http, direct benchLoad) float64 {
		withHTTP := http.CPU.ServerUS + http.CPU.PostgresUS
		if withHTTP == 0 {
			return 0
		}
		return (direct.CPU.ServerUS + direct.CPU.PostgresUS + direct.CPU.BenchUS) / withHTTP
	}
	// hostedGain is the hosted page's share of the plain SELECT's rate
	// now, over its share before the round-trip work.
	hostedGain := ratio(hosted, selectPK) / (hostedBefore / selectBefore)
	rep.Checks = []benchCheck{
		{"create over HTTP ÷ same transaction direct", ratio(httpCreate, directCreate), "×", "≥ 0.8", ratio(httpCreate, directCreate) >= 0.8},
		{"  the same in CPU per creation, without the HTTP client", serverSide(httpCreate, directCreate), "×", "(limit)", true},
		{"  ceiling here: a creation's HTTP front + the same work direct", ceiling(front, directCreate, directCreate), "×", "(limit)", true},
		{"  floor here: a bare Go server's creation", ratio(bareCreate, directCreate), "×", "(limit)", true},
		{"create over HTTP ÷ plain INSERT", ratio(httpCreate, plain), "×", "≥ 0.18", ratio(httpCreate, plain) >= 0.18},
		{"  ceiling here: HTTP round trip + the creation's statement", ceiling(httpAlone, statement, plain), "×", "(limit)", true},
		{"GET over HTTP ÷ plain SELECT", ratio(get, selectPK), "×", "≥ 0.30", ratio(get, selectPK) >= 0.30},
		{"GET over HTTP ÷ a bare Go server's GET of the row", ratio(get, bareGet), "×", "≥ 0.9", ratio(get, bareGet) >= 0.9},
		{"  ceiling here: HTTP round trip + one SELECT", ceiling(httpAlone, selectPK, selectPK), "×", "(limit)", true},
		{"  floor here: a request with one database round trip", ratio(oneTrip, selectPK), "×", "(limit)", true},
		{"  floor here: a bare Go server's GET of the row", ratio(bareGet, selectPK), "×", "(limit)", true},
		{"  floor here: a bare Go server's plain SELECT", ratio(barePlain, selectPK), "×", "(limit)", true},
		{"cold-statistics GET ÷ the same just analyzed", ratio(cold, coldAnalyzed), "×", "≥ 0.8", ratio(cold, coldAnalyzed) >= 0.8},
		{"webhook delivery p99 at 500 events/s", ms(hooks.P99), "ms", "≤ 10", hooks.P99 <= 10*time.Millisecond && hooks.Errors == 0},
		{"noisy neighbours: healthy endpoint p99", ms(noisy.P99), "ms", "≤ 250", noisy.P99 <= 250*time.Millisecond && noisy.Errors == 0},
		{"  noisy neighbours: healthy endpoint p50", ms(noisy.P50), "ms", "(reported)", true},
		{"  noisy neighbours: attempts to all five endpoints", noisyRate, "/s", "(reported)", true},
		{"hosted page GET ÷ SELECT, against the same before", hostedGain, "×", "≥ 1.3", hostedGain >= 1.3},
		{"  hosted page GET ÷ its rate before (another day)", hosted.PerSec / hostedBefore, "×", "(reported)", true},
		{"  hosted page GET p99", ms(hosted.P99), "ms", "(reported)", true},
		{"server peak RSS", float64(rss) / (1 << 20), "MiB", "≤ 150", rss <= 150<<20},
		{"instant verification p99, initiation to Verified", ms(instant.P99), "ms", "≤ 2000", instant.P99 <= 2*time.Second && instant.Errors == 0},
		{"  instant verification p50", ms(instant.P50), "ms", "(reported)", true},
		{"instant payout p99, initiation to processed", ms(payouts.P99), "ms", "≤ 2000", payouts.P99 <= 2*time.Second && payouts.Errors == 0},
		{"  instant payout p50", ms(payouts.P50), "ms", "(reported)", true},
	}
	if c := rep.Checks[len(rep.Checks)-4]; !c.Met {
		rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %.0f ms over %d verifications (%d failed), wanted %s",
			c.Name, c.Value, instant.Ops+instant.Errors, instant.Errors, c.Target))
	}
	if c := rep.Checks[len(rep.Checks)-2]; !c.Met {
		rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %.0f ms over %d payouts (%d failed), wanted %s",
			c.Name, c.Value, payouts.Ops+payouts.Errors, payouts.Errors, c.Target))
	}
	failures, first := 0, ""
	for _, l := range rep.Loads {
		failures += l.Errors
		if first == "" && l.FirstError != "" {
			first = l.Name + ": " + l.FirstError
		}
	}
	rep.Checks = append(rep.Checks, benchCheck{"failed operations (any load)", float64(failures), "", "0", failures == 0})
	rep.FirstFailure = first
	return rep, nil
}

// maxRuns is the most runs of each load: a run's number is one digit of
// its account numbers.
const maxRuns = 9

// passes runs each of loads b.runs times, in passes over them whose order
// alternates (passOrder), and returns each load over its runs (overRuns),
// in the order of loads. A load is handed its run's number, from 0.
func (b *bench) passes(loads []func(run int) (benchLoad, error)) ([]benchLoad, error) {
	runs := make([][]benchLoad, len(loads))
	for run, order := range passOrder(len(loads), b.runs) {
		for _, i := range order {
			l, err := loads[i](run)
			if err != nil {
				return nil, fmt.Errorf("load %d of %d, run %d: %w", i+1, len(loads), run+1, err)
			}
			runs[i] = append(runs[i], l)
		}
	}
	out := make([]benchLoad, len(loads))
	for i, r := range runs {
		out[i] = overRuns(b.statements, r...)
	}
	return out, nil
}

// passOrder is the order of n loads in each of runs passes: 0 1 … n-1,
// then n-1 … 1 0, and so on, so that no load always comes first or last.
func passOrder(n, runs int) [][]int {
	out := make([][]int, runs)
	for r := range out {
		out[r] = make([]int, n)
		for k := range n {
			out[r][k] = k
			if r%2 == 1 {
				out[r][k] = n - 1 - k
			}
		}
	}
	return out
}

// coldStatistics is the load of a fresh deployment that imports sources in
// bulk: creations over HTTP into eight customers for one phase, then GETs
// of one of them before any ANALYZE has run (the bench's database has
// autovacuum off), and the same GETs once the tables are analyzed. It
// fails if the tables have statistics before the cold load, since it
// would then measure nothing of what it is for.
func (b *bench) coldStatistics(ctx context.Context) (cold, analyzed benchLoad, err error) {
	customers := make([]string, 8)
	for i := range customers {
		c, err := b.svc.Customers.Create(ctx, b.scope, customer.Input{FirstName: "Bulk", LastName: strconv.Itoa(i), Email: "bulk@example.com"})
		if err != nil {
			return cold, analyzed, err
		}
		customers[i] = c.ID
	}
	// Phases repeat until every customer has a source: a short phase on a
	// busy machine may complete no creation at all. Account numbers never
	// repeat across phases.
	var seqs atomic.Int64
	var bulk loadgen.Result
	for bulk.Ops < len(customers) {
		part := loadgen.Run(ctx, "bulk creation, not measured", b.workers, b.phase, func(ctx context.Context, _ int64) error {
			seq := seqs.Add(1) - 1
			body := fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"66%010d"}`, customers[seq%int64(len(customers))], seq)
			return b.send(ctx, http.MethodPost, "/v2/funding-source", body, "", nil)
		})
		if part.Errors > 0 {
			return cold, analyzed, fmt.Errorf("bulk creation: %s", part.FirstError)
		}
		if err := ctx.Err(); err != nil {
			return cold, analyzed, err
		}
		bulk = loadgen.Merge(bulk, part)
	}
	var id string
	var hasStatistics bool
	err = b.raw.GetContext(ctx, &id, `SELECT id FROM funding_sources WHERE customer_id = $1 LIMIT 1`, customers[3])
	if err == nil {
		err = b.raw.GetContext(ctx, &hasStatistics, `SELECT reltuples >= 0 FROM pg_class WHERE relname = 'funding_sources'`)
	}
	switch {
	case err != nil:
		return cold, analyzed, err
	case hasStatistics:
		return cold, analyzed, errors.New("cold statistics: funding_sources was analyzed before the load")
	}
	// The bulk creation's dirty pages are written out first, as before
	// every other load: what differs is only that nothing was analyzed.
	if _, err := b.raw.ExecContext(ctx, `CHECKPOINT`); err != nil {
		return cold, analyzed, err
	}
	// As every other load, after a warm-up (the server's first GETs on
	// new connections prepare their statements); reading analyzes nothing.
	warm := loadgen.Run(ctx, "warm-up", b.workers, max(b.phase/5, 100*time.Millisecond), func(ctx context.Context, _ int64) error {
		return b.send(ctx, http.MethodGet, "/v2/funding-source/"+id, "", "", nil)
	})
	if warm.Errors > 0 {
		return cold, analyzed, fmt.Errorf("cold statistics warm-up: %s", warm.FirstError)
	}
	get := func(ctx context.Context, _ int64) error {
		return b.send(ctx, http.MethodGet, "/v2/funding-source/"+id, "", "", nil)
	}
	name := "GET funding source over HTTP, cold statistics (" + strconv.Itoa(bulk.Ops) + " sources, never analyzed)"
	cold, err = b.observed(ctx, func() (loadgen.Result, error) { return loadgen.Run(ctx, name, b.workers, b.phase, get), nil })
	if err != nil {
		return cold, analyzed, err
	}
	// The same GETs of the same sources at once after VACUUM (ANALYZE), as
	// before every other load: the base of the target, measured beside the
	// cold load rather than minutes later, when this machine may run at
	// another speed and the tables hold many more rows.
	analyzed, err = b.measure(ctx, "GET funding source over HTTP, the same sources just analyzed", get)
	return cold, analyzed, err
}

// directCreate runs what POST /v2/funding-source runs — the idempotency
// record, the creation with its event, in one statement when it succeeds —
// without HTTP, JSON routing or middleware. (The server finds the key in
// its cache.)
func (b *bench) directCreate(ctx context.Context, body, idemKey string) error {
	_, err := createDirect(ctx, b.svc, b.scope, []byte(body), idemKey)
	return err
}

// createDirect is directCreate's work on svc for scope: it decodes body
// and creates the source under idemKey through the method the server's
// handler calls (funding.Service.CreateKeyed: one statement with the claim
// and the answer, the general idempotent path when that writes nothing),
// and returns the answer's body (the source, rendered like a 200).
func createDirect(ctx context.Context, svc *wiring.Services, scope tenant.Scope, body []byte, idemKey string) ([]byte, error) {
	var in funding.Input
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	req := idempotency.Request{Scope: scope, Key: idemKey, Now: svc.Now(),
		Hash: idempotency.RequestHash(svc.Config.IdempotencyKey, http.MethodPost, "/v2/funding-source", body)}
	// An error the creation answers is the bench's failure, never stored.
	var failed error
	resp, replayed, err := svc.Funding.CreateKeyed(ctx, funding.Caller{Scope: scope}, funding.ForMicroDeposits, in, req,
		func(src funding.Source, err error) idempotency.Response {
			if err != nil {
				failed = err
				return idempotency.Response{Status: http.StatusInternalServerError}
			}
			return idempotency.Response{Status: http.StatusOK, Body: surface.OKBody(src)}
		})
	switch {
	case err != nil:
		return nil, err
	case replayed:
		return resp.Body, nil
	case failed != nil:
		return nil, failed
	}
	return resp.Body, nil
}

// storeCreate is a creation as the store makes it, with none of the
// service's work around it (no validation, routing lookup, encryption or
// HTTP): a prepared source and its event, stored with the Idempotency-Key's
// claim and the response by the statement the server runs (which writes
// concurrent creations together). Its rate bounds what any HTTP front to
// that statement could reach here.
func (b *bench) storeCreate(ctx context.Context, n string) error {
	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	now, bank := b.svc.Now(), "JPMORGAN CHASE BANK"
	src := funding.Source{Scope: b.scope, ID: "fs_store" + n, CustomerID: b.customerID, Status: funding.Unverified,
		RoutingNumber: "021000021", BankName: &bank, LastFour: "0001", AccountType: "checking", CreatedAt: now,
		Account: funding.Sealed{KeyID: "k1", Data: sum("sealed" + n)[:28]}, Fingerprint: sum("store" + n)}
	ev := event.New(b.scope, event.FundingSourceCreated, map[string]string{"funding_source_id": src.ID, "user_id": src.CustomerID}, now)
	req := idempotency.Request{Scope: b.scope, Key: "bench-store-" + n, Hash: sum("request" + n), Now: now}
	created, _, err := b.svc.DB.CreateSourceKeyed(ctx, src, []event.Event{ev}, req,
		idempotency.Response{Status: http.StatusOK, Body: surface.OKBody(src)})
	if err == nil && !created {
		err = errors.New("the source was not created")
	}
	return err
}

// creationRows writes, in one prepared statement and one durable commit,
// the rows a creation must write — its idempotency record, the source, the
// account-number claim and the event, with their indexes — and nothing
// else: no checks, no read-back: the least a creation written on its own
// costs. The service writes concurrent creations together
// (postgres.CreateSourceKeyed), and this load shows by how much that beats
// it.
func (b *bench) creationRows(ctx context.Context, n string) error {
	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	srcID := "fs_bench" + n
	body := fmt.Sprintf(`{"funding_source_id":%q,"user_id":%q,"status":"Unverified","routing_number":"021000021",`+
		`"bank_name":"JPMORGAN CHASE BANK","last_four":"0001","account_type":"checking","nickname":null,`+
		`"created_at":"2026-11-21T12:00:00Z","verification":null}`, srcID, b.customerID)
	_, err := b.rowsStmt.ExecContext(ctx, b.scope.MerchantID, string(b.scope.Env), "bench-rows-"+n,
		sum("request"+n), []byte(body), srcID, b.customerID, sum("sealed" + n)[:28], sum("account"+n), "evt_bench"+n,
		fmt.Sprintf(`{"funding_source_id":%q,"user_id":%q}`, srcID, b.customerID))
	return err
}

const creationRows = `
WITH idem AS (
  INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
  VALUES ($1, $2, $3, $4, 200, $5, now())
), src AS (
  INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, bank_name,
      last_four, account_type, account_key_id, account_ciphertext, fingerprint, created_at)
  VALUES ($1, $2, $6, $7, 'Unverified', '021000021', 'JPMORGAN CHASE BANK', '0001', 'checking', 'k1', $8, $9, now())
), claim AS (
  INSERT INTO account_numbers (environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at)
  VALUES ($2, $9, $1, $6, $7, now())
)
INSERT INTO events (merchant_id, environment, id, type, data, created_at)
VALUES ($1, $2, $10, 'funding_source_created', $11::jsonb, now())`

// refused sends a creation's request as a client would, but with its body
// labelled text/plain, and checks that it is answered 415 with a JSON
// error: the server receives it, authenticates it, applies the rate limit,
// reads the body and answers, and stops before the body is decoded. Every
// creation over HTTP does that much and then the work the direct load
// does, so the two together bound create over HTTP ÷ direct.
func (b *bench) refused(ctx context.Context, body, idemKey string) error {
	_, err := b.exchange(ctx, http.MethodPost, b.base+"/v2/funding-source", body, "text/plain", idemKey, http.StatusUnsupportedMediaType)
	return err
}

// call sends one API request and decodes the 200 answer.
func (b *bench) call(ctx context.Context, method, path, body, idemKey string) (map[string]any, error) {
	var m map[string]any
	err := b.send(ctx, method, path, body, idemKey, &m)
	return m, err
}

// send sends one API request and checks that it is answered 200 with a
// JSON object; into, when not nil, receives it. (Loads pass nil: decoding
// every answer into a map cost the load generator, on the same cores,
// more than the server spent on JSON.)
func (b *bench) send(ctx context.Context, method, path, body, idemKey string, into *map[string]any) error {
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	data, err := b.exchange(ctx, method, b.base+path, body, contentType, idemKey, http.StatusOK)
	if err != nil || into == nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// exchange sends one API request to url (body labelled contentType when
// it is set) and checks that it is answered status with a JSON object,
// which it returns.
func (b *bench) exchange(ctx context.Context, method, url, body, contentType, idemKey string, status int) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	res, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != status || !json.Valid(data) || len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%s %s: %d %.200s", method, url, res.StatusCode, data)
	}
	return data, nil
}

// startBare starts 'fundsource-lab bare' (see ServeBare), the least
// server, as a process of its own beside the real one.
func (b *bench) startBare(ctx context.Context) (*rig.Server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	srv, err := rig.StartProcess(ctx, addr, map[string]string{"DATABASE_URL": b.dbURL}, self, "bare", "--listen", addr,
		"--data-dir", b.dataDir, "--merchant", b.scope.MerchantID, "--env", string(b.scope.Env))
	if err != nil {
		return nil, fmt.Errorf("the bare server: %w", err)
	}
	b.bareBase, b.barePID = "http://"+addr, srv.PID()
	return srv, nil
}

// onBare is measure with the bare server's CPU as the load's server column.
func (b *bench) onBare(measure func() (benchLoad, error)) func() (benchLoad, error) {
	return func() (benchLoad, error) {
		server := b.cpu.server
		b.cpu.server = b.barePID
		defer func() { b.cpu.server = server }()
		return measure()
	}
}

func (b *bench) page(ctx context.Context, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", path, res.StatusCode)
	}
	return nil
}

// webhooks commits rate events per second for one phase and measures, at a
// local receiver, the time from each commit to its delivery.
func (b *bench) webhooks(ctx context.Context, rate int) (loadgen.Result, error) {
	return b.webhooksTo(ctx, fmt.Sprintf("webhook delivery, %d events/s", rate), b.scope, rate)
}

// webhooksTo is webhooks for one merchant's endpoint, with the load's name.
func (b *bench) webhooksTo(ctx context.Context, name string, scope tenant.Scope, rate int) (loadgen.Result, error) {
	var mu sync.Mutex                 // guards sent and arrived
	sent := map[string]time.Time{}    // event id → commit returned
	arrived := map[string]time.Time{} // event id → first delivery
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loadgen.Result{}, err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go web.ServeUntil(rctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		id := r.Header.Get("webhook-id")
		mu.Lock()
		if _, ok := arrived[id]; !ok {
			arrived[id] = at
		}
		mu.Unlock()
	}))
	if _, err := b.svc.Webhooks.Register(ctx, scope, "http://"+ln.Addr().String()+"/hooks", audit.Operator("test")); err != nil {
		return loadgen.Result{}, err
	}
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	var wg sync.WaitGroup
	var failed error
	// Open loop: whatever the machine's load, by time t the producer has
	// started rate·t events (a late tick starts the ones it missed).
	for started := 0; time.Since(start) < b.phase; <-tick.C {
		due := int(time.Since(start).Seconds() * float64(rate))
		for ; started < due; started++ {
			wg.Go(func() {
				ev, err := b.svc.Webhooks.SendTest(ctx, scope)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = err
					return
				}
				// From the event's creation, just before its commit: the
				// delivery, woken by the commit's notification, can arrive
				// before SendTest has returned.
				sent[ev.ID] = ev.CreatedAt
			})
		}
	}
	tick.Stop()
	wg.Wait()
	secs := time.Since(start).Seconds()
	if failed != nil {
		return loadgen.Result{}, failed
	}
	missing := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for id := range sent {
			if _, ok := arrived[id]; !ok {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); missing() > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for id, t0 := range sent {
		if t1, ok := arrived[id]; ok {
			lat = append(lat, t1.Sub(t0))
		}
	}
	slices.Sort(lat)
	r := loadgen.Result{Name: name, Workers: 1, Ops: len(lat),
		Errors: len(sent) - len(lat), Seconds: secs, PerSec: float64(len(sent)) / secs,
		P50: loadgen.Percentile(lat, 0.5), P99: loadgen.Percentile(lat, 0.99)}
	if r.Errors > 0 {
		r.FirstError = fmt.Sprintf("%d of %d events not delivered within 30 s", r.Errors, len(sent))
	}
	return r, nil
}

// instantVerifications times b.verifications instant verifications one
// after another, each from initiation to Verified through the API: the
// initiation (the server's pacs.008 to the rail simulator over HTTP and its
// pacs.002 back), the sandbox's read of the code, and the verification.
// The sources are created first, untimed. One at a time, a verification's
// time is what a customer waits, not a queue behind other loads.
func (b *bench) instantVerifications(ctx context.Context, run int) (benchLoad, error) {
	ids := make([]string, b.verifications)
	for i := range ids {
		src, err := b.call(ctx, http.MethodPost, "/v2/funding-source",
			fmt.Sprintf(`{"user_id":%q,"routing_number":"110000000","account_number":"77%d%09d"}`, b.customerID, run, i), "")
		if err != nil {
			return benchLoad{}, err
		}
		ids[i] = src["funding_source_id"].(string)
	}
	name := fmt.Sprintf("instant verification to Verified (%d, one at a time)", len(ids))
	return b.measured(ctx, func() (loadgen.Result, error) {
		return loadgen.Sequence(ctx, name, len(ids), func(ctx context.Context, i int) error {
			id := ids[i]
			if _, err := b.call(ctx, http.MethodPost, "/v2/funding-source/initiate/verification",
				`{"funding_source_id":"`+id+`","method":"instant"}`, ""); err != nil {
				return err
			}
			sb, err := b.call(ctx, http.MethodGet, "/v2/sandbox/funding-source/"+id+"/micro-deposits", "", "")
			if err != nil {
				return err
			}
			code, _ := sb["code"].(string)
			got, err := b.call(ctx, http.MethodPost, "/v2/funding-source/verify",
				`{"funding_source_id":"`+id+`","code":"`+code+`"}`, "")
			if err != nil {
				return err
			}
			if got["status"] != "Verified" {
				return fmt.Errorf("verify %s: status %v", id, got["status"])
			}
			return nil
		}), nil
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func printBench(w io.Writer, rep benchReport) {
	fmt.Fprintf(w, "\n%-54s %8s %8s %8s   %s   %s\n", "load ("+strconv.Itoa(rep.Workers)+" connections, "+rep.Duration+" each, median of "+strconv.Itoa(rep.Runs)+" runs)",
		"ops/s", "p50 ms", "p99 ms", "CPU µs/op: server  postgres  bench  (cores)", "runs' spread: ops/s min–max, p99 ms min–max")
	for _, l := range rep.Loads {
		fmt.Fprintf(w, "%-54s %8.0f %8.2f %8.2f   %17.0f %9.0f %6.0f  (%.2f)", l.Name, l.PerSec, ms(l.P50), ms(l.P99),
			l.CPU.ServerUS, l.CPU.PostgresUS, l.CPU.BenchUS, l.CPU.Cores)
		if sp := l.Spread; sp != nil {
			fmt.Fprintf(w, "   %.0f–%.0f, %.2f–%.2f (%d)", sp.PerSec[0], sp.PerSec[2], sp.P99MS[0], sp.P99MS[2], sp.Runs)
		} else {
			fmt.Fprint(w, "   (one run)")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%-54s %10s %10s %6s\n", "target", "value", "wanted", "met")
	for _, c := range rep.Checks {
		met := "yes"
		if !c.Met {
			met = "NO"
		}
		fmt.Fprintf(w, "%-54s %7.2f %-3s %9s %6s\n", c.Name, c.Value, c.Unit, c.Target, met)
	}
	for _, l := range rep.Loads {
		if len(l.Statements) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: the database's time by statement\n%8s %10s %9s  %s\n", l.Name, "calls", "total ms", "mean ms", "statement")
		for _, st := range l.Statements {
			fmt.Fprintf(w, "%8d %10.0f %9.3f  %s\n", st.Calls, st.TotalMS, st.MeanMS, st.Query)
		}
	}
	if rep.FirstFailure != "" {
		fmt.Fprintf(w, "\nfirst failure: %s\n", rep.FirstFailure)
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "\nFAIL %s\n", f)
	}
}

// noisyNeighbours measures a healthy endpoint receiving 100 events/s while
// four other merchants' endpoints misbehave, each with a backlog of 200
// events: two accept the connection and never answer, two answer 500
// after half a second. It returns the healthy endpoint's latencies and
// the attempts per second the server made to all five.
func (b *bench) noisyNeighbours(ctx context.Context, run int) (loadgen.Result, float64, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	slow500 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(500 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	var noisy []tenant.Scope
	for i, h := range []http.Handler{hang, hang, slow500, slow500} {
		m, err := b.svc.Merchants.Create(ctx, fmt.Sprintf("Noisy %d", i), fmt.Sprintf("noisy%d-%d@fundsource.test", run, i), "bench-password-123")
		if err != nil {
			return loadgen.Result{}, 0, err
		}
		scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return loadgen.Result{}, 0, err
		}
		go web.ServeUntil(rctx, ln, h)
		if _, err := b.svc.Webhooks.Register(ctx, scope, "http://"+ln.Addr().String()+"/hooks", audit.Operator("test")); err != nil {
			return loadgen.Result{}, 0, err
		}
		for n := range 200 {
			if err := b.svc.DB.RecordEvent(ctx, event.New(scope, event.WebhookTest, map[string]int{"n": n}, b.svc.Now())); err != nil {
				return loadgen.Result{}, 0, err
			}
		}
		noisy = append(noisy, scope)
	}
	m, err := b.svc.Merchants.Create(ctx, "Healthy", fmt.Sprintf("healthy%d@fundsource.test", run), "bench-password-123")
	if err != nil {
		return loadgen.Result{}, 0, err
	}
	healthy := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	var before int
	if err := b.raw.GetContext(ctx, &before, `SELECT count(*) FROM webhook_attempts`); err != nil {
		return loadgen.Result{}, 0, err
	}
	start := time.Now()
	r, err := b.webhooksTo(ctx, "noisy neighbours: healthy endpoint, 100 events/s", healthy, 100)
	if err != nil {
		return r, 0, err
	}
	var after int
	if err := b.raw.GetContext(ctx, &after, `SELECT count(*) FROM webhook_attempts`); err != nil {
		return r, 0, err
	}
	rate := float64(after-before) / time.Since(start).Seconds()
	// The neighbours' deliveries stop with their endpoints.
	for _, sc := range noisy {
		if err := b.svc.Webhooks.Delete(ctx, sc, audit.Operator("test")); err != nil {
			return r, rate, err
		}
	}
	return r, rate, nil
}
