package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/lab/bench"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestMain lets this test binary stand in for 'fundsource-lab bare',
// which the bench runs as its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bare" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err := bench.ServeBare(ctx, os.Args[2:], rig.IO{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr})
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The private PostgreSQL of the tests that need one (pgtest) stops
	// with the binary.
	pgtest.Main(m)
}

// TestBenchRunsEveryLoad runs the bench briefly: a durable private
// cluster, the server as its own process, every load without a failure,
// the table on stdout and the JSON results. (Targets are judged by 'make
// bench', on full-length runs.)
func TestBenchRunsEveryLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	bin, err := rig.BuildServer()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = bench.Run(context.Background(), []string{"--duration", "300ms", "--workers", "8", "--runs", "3", "--statements", "3", "--verifications", "20", "--payouts", "20", "--out", out, "--server", bin},
		rig.IO{Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Loads []struct {
			Name   string  `json:"name"`
			Ops    int     `json:"ops"`
			Errors int     `json:"errors"`
			PerSec float64 `json:"per_second"`
			CPU    struct {
				Postgres float64 `json:"postgres_us_per_op"`
				Cores    float64 `json:"cores"`
			} `json:"cpu"`
			Statements []struct {
				Query string `json:"query"`
				Calls int    `json:"calls"`
			} `json:"statements"`
			Spread *struct {
				Runs   int        `json:"runs"`
				PerSec [3]float64 `json:"per_second_min_median_max"`
				P99MS  [3]float64 `json:"p99_ms_min_median_max"`
			} `json:"spread"`
		} `json:"loads"`
		Runs   int `json:"runs"`
		Checks []struct {
			Name string `json:"name"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Loads) != 20 || len(rep.Checks) != 26 {
		t.Fatalf("results: %d loads, %d checks\n%s", len(rep.Loads), len(rep.Checks), data)
	}
	if rep.Runs != 3 {
		t.Errorf("results: runs %d, want 3", rep.Runs)
	}
	for _, l := range rep.Loads {
		if l.Ops == 0 || l.Errors != 0 || l.PerSec <= 0 {
			t.Errorf("load %q: %+v", l.Name, l)
		}
		// Every load but the cold-statistics pair ran three times, and
		// reports its median run with the lowest and highest beside it.
		switch sp := l.Spread; {
		case strings.Contains(l.Name, "cold statistics") || strings.Contains(l.Name, "just analyzed"):
			if sp != nil {
				t.Errorf("load %q: a spread over %d runs, want one run", l.Name, sp.Runs)
			}
		case sp == nil || sp.Runs != 3:
			t.Errorf("load %q: spread %+v, want 3 runs", l.Name, sp)
		case !(sp.PerSec[0] <= sp.PerSec[1] && sp.PerSec[1] <= sp.PerSec[2]) || sp.PerSec[1] != l.PerSec ||
			!(sp.P99MS[0] <= sp.P99MS[1] && sp.P99MS[1] <= sp.P99MS[2]):
			t.Errorf("load %q: per second %.1f, spread %+v: want min ≤ median = the load's ≤ max", l.Name, l.PerSec, sp)
		}
		if !strings.Contains(stdout.String(), l.Name) {
			t.Errorf("the table lacks %q", l.Name)
		}
		if l.CPU.Cores <= 0 {
			t.Errorf("load %q: no CPU counted: %+v", l.Name, l.CPU)
		}
		if strings.Contains(l.Name, "HTTP round trip alone") || strings.Contains(l.Name, "HTTP front") {
			continue // the two loads that do not use the database
		}
		// Every other load works the database, and the bench counts its CPU.
		if l.CPU.Postgres <= 0 {
			t.Errorf("load %q: no database CPU counted: %+v", l.Name, l.CPU)
		}
		if strings.Contains(l.Name, "GET /readyz") {
			continue // its one statement (";") is empty: pg_stat_statements lists none
		}
		if len(l.Statements) == 0 || len(l.Statements) > 3 {
			t.Errorf("load %q: %d statements reported, want 1 to 3", l.Name, len(l.Statements))
		}
	}
	// A creation is written by the batch statement of concurrent
	// creations (its text begins with its rows), called at most once per
	// creation: the counted ones and those the end of each half cut off
	// (at most one per connection).
	if st := rep.Loads[0].Statements; len(st) == 0 || !strings.HasPrefix(st[0].Query, "WITH r AS") || st[0].Calls > rep.Loads[0].Ops+2*8 {
		t.Errorf("create over HTTP (%d creations): top statements %+v", rep.Loads[0].Ops, st)
	}
	// The instant verifications and payouts: as many as asked in each
	// run, each through to Verified or processed.
	for _, prefix := range []string{"instant verification", "instant payout"} {
		found := false
		for _, l := range rep.Loads {
			if strings.HasPrefix(l.Name, prefix) {
				found = true
				if l.Ops != 3*20 || l.Errors != 0 { // 20 in each of three runs
					t.Errorf("%s load: %+v", prefix, l)
				}
			}
		}
		if !found {
			t.Errorf("no %s load among %d", prefix, len(rep.Loads))
		}
	}
	if !strings.Contains(stdout.String(), "instant verification p99, initiation to Verified") || strings.Contains(stdout.String(), "FAIL") {
		t.Errorf("table:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "server peak RSS") {
		t.Errorf("table:\n%s", stdout.String())
	}
}

// TestBaselineFlagsAreCheckedBeforeAnythingStarts: a comparison's flag
// mistakes are usage errors, found before a cluster or a build starts.
func TestBaselineFlagsAreCheckedBeforeAnythingStarts(t *testing.T) {
	for _, args := range [][]string{
		{"--rounds", "2"},
		{"--baseline", "HEAD", "--rounds", "0"},
		{"--baseline", "no-such-revision-of-this-repository"},
	} {
		var stdout, stderr bytes.Buffer
		err := bench.Run(context.Background(), args, rig.IO{Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &stderr})
		if !errors.Is(err, rig.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestBaselineComparisonTakesTurns runs a brief comparison of this tree's
// server with HEAD's: both servers run side by side and take turns at each
// load, and the table has each measure's ratio and each round's, and each
// server's profile of each load.
func TestBaselineComparisonTakesTurns(t *testing.T) {
	bin, err := rig.BuildServer()
	if err != nil {
		t.Fatal(err)
	}
	profiles := t.TempDir()
	var stdout, stderr bytes.Buffer
	err = bench.Run(context.Background(), []string{"--baseline", "HEAD", "--rounds", "2", "--duration", "300ms", "--workers", "4",
		"--server", bin, "--profile", profiles}, rig.IO{Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("bench --baseline: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"median of 2 alternating rounds", "creation, per second", "GET p99, ms", "GET db µs/op", "each round's ratio"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// Each measure's line of rounds has one positive ratio per round.
	rounds := strings.SplitN(out, "each round's ratio, in order:\n", 2)
	if len(rounds) != 2 {
		t.Fatalf("no rounds in:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(rounds[1]), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines of rounds, want 8:\n%s", len(lines), rounds[1])
	}
	for _, l := range lines {
		f := strings.Fields(l)
		var a, b float64
		if _, err := fmt.Sscan(f[len(f)-2]+" "+f[len(f)-1], &a, &b); err != nil || a <= 0 || b <= 0 {
			t.Errorf("round ratios %q: %v", l, err)
		}
	}
	for _, name := range []string{"base-creation", "base-get", "new-creation", "new-get"} {
		if st, err := os.Stat(filepath.Join(profiles, name+".pprof")); err != nil || st.Size() == 0 {
			t.Errorf("profile %s: %v", name, err)
		}
	}
}
