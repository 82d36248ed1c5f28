package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/app"
)

// TestBenchRunsEveryLoad runs 'fundsource bench' briefly: a durable private
// cluster, the server as its own process, every load without a failure,
// the table on stdout and the JSON results. (Targets are judged by 'make
// bench', on full-length runs.)
func TestBenchRunsEveryLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout syncBuffer
	err := app.Run(context.Background(), []string{"bench", "--duration", "300ms", "--workers", "8", "--out", out, "--server", binary(t)},
		app.IO{Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &syncBuffer{}})
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
		} `json:"loads"`
		Checks []struct {
			Name string `json:"name"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Loads) != 7 || len(rep.Checks) != 7 {
		t.Fatalf("results: %d loads, %d checks\n%s", len(rep.Loads), len(rep.Checks), data)
	}
	for _, l := range rep.Loads {
		if l.Ops == 0 || l.Errors != 0 || l.PerSec <= 0 {
			t.Errorf("load %q: %+v", l.Name, l)
		}
		if !strings.Contains(stdout.String(), l.Name) {
			t.Errorf("the table lacks %q", l.Name)
		}
	}
	if !strings.Contains(stdout.String(), "server peak RSS") {
		t.Errorf("table:\n%s", stdout.String())
	}
}
