package bench

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/lab/loadgen"
)

// TestPassesAlternateTheOrderOfLoads: forward, backward, forward.
func TestPassesAlternateTheOrderOfLoads(t *testing.T) {
	got := fmt.Sprint(passOrder(3, 3))
	if want := "[[0 1 2] [2 1 0] [0 1 2]]"; got != want {
		t.Errorf("passOrder(3, 3) = %s, want %s", got, want)
	}
	if got := fmt.Sprint(passOrder(2, 1)); got != "[[0 1]]" {
		t.Errorf("passOrder(2, 1) = %s", got)
	}
}

// TestALoadOverRunsIsItsMedianRun: the rate and percentiles are each the
// median of the runs' (an outlier run moves none of them), the spread is
// the lowest, median and highest, and operations, errors and processor
// time per operation are the runs' together.
func TestALoadOverRunsIsItsMedianRun(t *testing.T) {
	ms := time.Millisecond
	run := func(perSec float64, p99 time.Duration, ops, errors int, serverUS float64) benchLoad {
		return benchLoad{Result: loadgen.Result{Name: "GET", Ops: ops, Errors: errors, Seconds: 1, PerSec: perSec, P50: p99 / 4, P99: p99},
			CPU: cpuUse{ServerUS: serverUS, Cores: 1}}
	}
	l := overRuns(3, run(1000, 4*ms, 1000, 0, 100), run(200, 90*ms, 200, 1, 400), run(900, 5*ms, 900, 0, 100))
	if l.PerSec != 900 || l.P99 != 5*ms || l.P50 != 5*ms/4 {
		t.Errorf("per second %.0f, p50 %s, p99 %s; want the median run's 900, 1.25ms, 5ms", l.PerSec, l.P50, l.P99)
	}
	if l.Spread == nil || l.Spread.Runs != 3 || l.Spread.PerSec != [3]float64{200, 900, 1000} || l.Spread.P99MS != [3]float64{4, 5, 90} {
		t.Errorf("spread %+v", l.Spread)
	}
	if l.Ops != 2100 || l.Errors != 1 || l.CPU.Cores != 1 {
		t.Errorf("ops %d, errors %d, cores %.2f", l.Ops, l.Errors, l.CPU.Cores)
	}
	if want := (1000*100 + 200*400 + 900*100) / 2100.0; math.Abs(l.CPU.ServerUS-want) > 1e-9 {
		t.Errorf("server µs/op %.2f, want %.2f (weighted by operations)", l.CPU.ServerUS, want)
	}
}
