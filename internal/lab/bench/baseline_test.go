package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/lab/loadgen"
)

func TestRoundsAlternateTheBinaries(t *testing.T) {
	got := order(4)
	want := [][2]string{{sideBase, sideNew}, {sideNew, sideBase}, {sideBase, sideNew}, {sideNew, sideBase}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order(4) = %v, want %v", got, want)
	}
	if got := order(1); len(got) != 1 || got[0] != [2]string{sideBase, sideNew} {
		t.Errorf("order(1) = %v", got)
	}
}

// TestRatiosAreMediansOfEachRoundsRatio: each round's new ÷ base, their
// median and spread; a rate is better above 1, a latency below.
func TestRatiosAreMediansOfEachRoundsRatio(t *testing.T) {
	s := func(create, get float64, createP99, getP99 time.Duration, us float64) side {
		return side{create: loadgen.Result{PerSec: create, P99: createP99}, get: loadgen.Result{PerSec: get, P99: getP99},
			createCPU: cpuUse{ServerUS: us, PostgresUS: 2 * us}, getCPU: cpuUse{ServerUS: 3 * us, PostgresUS: 4 * us}}
	}
	ms := time.Millisecond
	base := []side{s(100, 1000, 10*ms, 2*ms, 10), s(200, 1000, 10*ms, 2*ms, 10), s(100, 500, 10*ms, 2*ms, 10)}
	next := []side{s(150, 800, 5*ms, 4*ms, 5), s(200, 900, 10*ms, 4*ms, 5), s(50, 500, 20*ms, 4*ms, 20)}
	rs := ratios(base, next)
	want := []struct {
		name           string
		ratio, low, hi float64
		base, new      float64
		better         bool
	}{
		{"creation, per second", 1, 0.5, 1.5, 100, 150, true},
		{"creation p99, ms", 1, 0.5, 2, 10, 10, false},
		{"GET, per second", 0.9, 0.8, 1, 1000, 800, false},
		{"GET p99, ms", 2, 2, 2, 2, 4, false},
		{"creation server µs/op", 0.5, 0.5, 2, 10, 5, true},
		{"creation db µs/op", 0.5, 0.5, 2, 20, 10, true},
		{"GET server µs/op", 0.5, 0.5, 2, 30, 15, true},
		{"GET db µs/op", 0.5, 0.5, 2, 40, 20, true},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d ratios, want %d", len(rs), len(want))
	}
	for i, w := range want {
		r := rs[i]
		if r.Name != w.name || r.Ratio != w.ratio || r.Low != w.low || r.High != w.hi || r.Base != w.base || r.New != w.new || r.Better != w.better {
			t.Errorf("%s: got %+v, want %+v", w.name, r, w)
		}
	}
	var out strings.Builder
	printRatios(&out, "abc123", 3, rs)
	for _, line := range []string{"baseline abc123, median of 3", "GET p99, ms", "2.00×", "0.80–1.00×", "GET, per second        0.80 0.90 1.00"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the table lacks %q:\n%s", line, out.String())
		}
	}
}

func TestComparisonFlags(t *testing.T) {
	if c, err := comparison("28f86e3", "", "", 2, 200*time.Millisecond, 4, ""); err != nil || c.rounds != 2 || c.rev != "28f86e3" {
		t.Errorf("a good comparison: %+v, %v", c, err)
	}
	for _, bad := range []struct {
		rev     string
		rounds  int
		phase   time.Duration
		workers int
	}{{"", 3, time.Second, 4}, {"HEAD", 0, time.Second, 4}, {"HEAD", maxRounds + 1, time.Second, 4}, {"HEAD", 1, 0, 4}, {"HEAD", 1, time.Second, 0}} {
		if _, err := comparison(bad.rev, "", "", bad.rounds, bad.phase, bad.workers, ""); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
