package config

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGCRespectsTheOperatorsSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	TuneGC()
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GC percent %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("memory limit %d, want 256 MiB", got)
	}

	// Set by the operator: left as the runtime read them.
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	TuneGC()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GC percent %d with GOGC=150 set", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("memory limit %d with GOMEMLIMIT set", got)
	}
}
