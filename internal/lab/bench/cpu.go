package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/lab/loadgen"
)

// cpuUse is the processor time one load cost, per successful operation, in
// each process on the machine that matters: the server, PostgreSQL (every
// process of the cluster) and the bench itself (the load generator).
type cpuUse struct {
	ServerUS   float64 `json:"server_us_per_op"`
	PostgresUS float64 `json:"postgres_us_per_op"`
	BenchUS    float64 `json:"bench_us_per_op"`
	// Cores is how many processor cores the three used together.
	Cores float64 `json:"cores"`
}

// cpuSample is the processor time used so far by each process group.
type cpuSample struct {
	server, postgres, bench time.Duration
	at                      time.Time
}

var clockTick = time.Second / 100 // USER_HZ, 100 on Linux

// procStat is a process's CPU time and parent, from /proc/pid/stat.
type procStat struct {
	own      time.Duration // user + system
	children time.Duration // of its children that have been waited for (PostgreSQL's backends that ended)
	parent   int
}

func procCPU(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold spaces.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return procStat{}, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(rest) // f[0] is field 3 (state)
	field := func(n int) int64 { v, _ := strconv.ParseInt(f[n-3], 10, 64); return v }
	return procStat{own: time.Duration(field(14)+field(15)) * clockTick, children: time.Duration(field(16)+field(17)) * clockTick,
		parent: int(field(4))}, nil
}

// cpuMeter samples the processor time of a server and a PostgreSQL
// cluster, and of this process.
type cpuMeter struct {
	// pg and server are the processes whose CPU each load reports.
	pg, server int
	lastPG     time.Duration // the cluster's CPU at the last sample
}

// settledClusterCPU is clusterCPU read until it does not go down: a backend
// that ended moments ago has left the live children but, until the
// postmaster reaps it, not yet joined the postmaster's children's time
// (without waiting, a load on a busy machine can show a negative cost). It never
// reports less than the previous sample.
func (m *cpuMeter) settledClusterCPU() time.Duration {
	cur := clusterCPU(m.pg)
	for range 5 {
		time.Sleep(10 * time.Millisecond)
		next := clusterCPU(m.pg)
		if next >= cur {
			cur = next
			break
		}
		cur = next
	}
	m.lastPG = max(m.lastPG, cur)
	return m.lastPG
}

// clusterCPU is the time used by a PostgreSQL cluster: the postmaster with
// its ended children, plus every live child.
func clusterCPU(postmaster int) time.Duration {
	pm, _ := procCPU(postmaster)
	total := pm.own + pm.children
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		st, err := procCPU(pid)
		if err == nil && st.parent == postmaster {
			total += st.own
		}
	}
	return total
}

func (m *cpuMeter) sample() cpuSample {
	s := cpuSample{at: time.Now(), postgres: m.settledClusterCPU()}
	server, _ := procCPU(m.server)
	self, _ := procCPU(os.Getpid())
	s.server, s.bench = server.own, self.own
	return s
}

// since is the use between an earlier sample and this one, over ops.
func (s cpuSample) since(before cpuSample, ops int) cpuUse {
	per := func(d time.Duration) float64 {
		if ops == 0 {
			return 0
		}
		return float64(d.Microseconds()) / float64(ops)
	}
	server, pg, self := s.server-before.server, s.postgres-before.postgres, s.bench-before.bench
	return cpuUse{ServerUS: per(server), PostgresUS: per(pg), BenchUS: per(self),
		Cores: (server + pg + self).Seconds() / s.at.Sub(before.at).Seconds()}
}

// statementStat is one statement's share of the database's time in a load
// (from pg_stat_statements, with -statements).
type statementStat struct {
	Query   string  `json:"query" db:"query"`
	Calls   int64   `json:"calls" db:"calls"`
	TotalMS float64 `json:"total_ms" db:"total_ms"`
	MeanMS  float64 `json:"mean_ms" db:"mean_ms"`
}

const topStatements = `
SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query, calls,
       total_exec_time + total_plan_time AS total_ms,
       (total_exec_time + total_plan_time) / greatest(calls, 1) AS mean_ms
FROM pg_stat_statements
WHERE query NOT LIKE '%pg_stat_statements%'
ORDER BY total_ms DESC LIMIT $1`

func statements(ctx context.Context, db *sqlx.DB, n int) ([]statementStat, error) {
	var out []statementStat
	err := db.SelectContext(ctx, &out, topStatements, n)
	return out, err
}

// mergeLoads combines measured parts of one load: operations, errors and
// latencies pooled (loadgen.Merge), processor time per operation weighted
// by each part's operations; the top statements are summed by statement
// and the n most expensive kept.
func mergeLoads(n int, parts ...benchLoad) benchLoad {
	results := make([]loadgen.Result, len(parts))
	for i, p := range parts {
		results[i] = p.Result
	}
	m := benchLoad{Result: loadgen.Merge(results...)}
	var cores float64
	var all []statementStat
	for _, p := range parts {
		if m.Ops > 0 {
			w := float64(p.Ops) / float64(m.Ops)
			m.CPU.ServerUS += p.CPU.ServerUS * w
			m.CPU.PostgresUS += p.CPU.PostgresUS * w
			m.CPU.BenchUS += p.CPU.BenchUS * w
		}
		cores += p.CPU.Cores * p.Seconds
		all = append(all, p.Statements...)
	}
	if m.Seconds > 0 {
		m.CPU.Cores = cores / m.Seconds
	}
	byQuery := map[string]*statementStat{}
	for _, st := range all {
		if s, ok := byQuery[st.Query]; ok {
			s.Calls += st.Calls
			s.TotalMS += st.TotalMS
			continue
		}
		byQuery[st.Query] = &st
	}
	for _, st := range byQuery {
		st.MeanMS = st.TotalMS / float64(max(st.Calls, 1))
		m.Statements = append(m.Statements, *st)
	}
	slices.SortFunc(m.Statements, func(x, y statementStat) int { return cmp.Compare(y.TotalMS, x.TotalMS) })
	if len(m.Statements) > n {
		m.Statements = m.Statements[:n]
	}
	return m
}

// spread is how a load's runs differed: the lowest, median and highest
// run's rate and p99.
type spread struct {
	Runs   int        `json:"runs"`
	PerSec [3]float64 `json:"per_second_min_median_max"`
	P99MS  [3]float64 `json:"p99_ms_min_median_max"`
}

// overRuns is one load measured in several runs: the runs merged
// (mergeLoads), with the median run's rate, p50 and p99 as the load's
// (each the median of its own over the runs, which the targets judge)
// and the runs' spread beside them.
func overRuns(n int, runs ...benchLoad) benchLoad {
	m := mergeLoads(n, runs...)
	rates, p50s, p99s := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	for i, r := range runs {
		rates[i], p50s[i], p99s[i] = r.PerSec, float64(r.P50), float64(r.P99)
	}
	m.PerSec, m.P50, m.P99 = median(rates), time.Duration(median(p50s)), time.Duration(median(p99s))
	p99ms := make([]float64, len(runs))
	for i, p := range p99s {
		p99ms[i] = p / float64(time.Millisecond)
	}
	m.Spread = &spread{Runs: len(runs), PerSec: minMedMax(rates), P99MS: minMedMax(p99ms)}
	return m
}

func minMedMax(xs []float64) [3]float64 {
	if len(xs) == 0 {
		return [3]float64{}
	}
	return [3]float64{slices.Min(xs), median(xs), slices.Max(xs)}
}
