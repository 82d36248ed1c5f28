// Package readme_test keeps the README true: it runs the README's walkthrough,
// the shell blocks between <!-- quickstart:begin --> and <!-- quickstart:end -->,
// with bash against a real 'fundsource dev' server, as a reader runs them
// against 'make run'.
package readme_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	beginMarker = "<!-- quickstart:begin -->"
	endMarker   = "<!-- quickstart:end -->"
)

// quickstart returns the README's marked shell blocks, in order.
func quickstart(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(b)
	for {
		i := strings.Index(rest, beginMarker)
		if i < 0 {
			break
		}
		rest = rest[i+len(beginMarker):]
		j := strings.Index(rest, endMarker)
		if j < 0 {
			t.Fatalf("README: %s without %s", beginMarker, endMarker)
		}
		body := strings.TrimSpace(rest[:j])
		rest = rest[j+len(endMarker):]
		if !strings.HasPrefix(body, "```sh\n") || !strings.HasSuffix(body, "\n```") {
			t.Fatalf("README: a quickstart block is not one ```sh fence:\n%s", body)
		}
		blocks = append(blocks, strings.TrimSuffix(strings.TrimPrefix(body, "```sh\n"), "```"))
	}
	if strings.Contains(rest, endMarker) {
		t.Fatalf("README: %s without %s", endMarker, beginMarker)
	}
	if len(blocks) == 0 {
		t.Fatal("README has no quickstart blocks")
	}
	if !strings.Contains(blocks[0], "set -eu") {
		t.Fatalf("the first quickstart block must start the script with set -eu:\n%s", blocks[0])
	}
	return blocks
}

// startDev runs 'fundsource dev' on a fresh database, as 'make run' serves
// it, until the test ends.
func startDev(t *testing.T) *th.Dev {
	t.Helper()
	return th.StartDev(t, th.DevOptions{Env: map[string]string{
		"DATABASE_URL":         pgtest.URL(t),
		"DATA_DIR":             t.TempDir(),
		"PAYMENT_SETTLE_DELAY": "1s",
	}})
}

// runScript runs script with bash as a reader would after exporting what
// 'make run' printed, and returns its combined output.
func runScript(t *testing.T, s *th.Dev, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"BASE=" + s.BaseURL,
		"SIM=" + s.SimURL,
		"SK=" + s.SecretKey,
		"PK=" + s.PublicKey,
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestREADMEQuickstartRunsAgainstMakeRun(t *testing.T) {
	blocks := quickstart(t)
	s := startDev(t)
	script := strings.Join(blocks, "\n")

	out, err := runScript(t, s, script)
	if err != nil {
		t.Fatalf("the README's walkthrough failed (%v):\n%s\n--- script ---\n%s", err, out, script)
	}
	if !strings.Contains(out, "walkthrough done") {
		t.Fatalf("the README's walkthrough did not reach its end:\n%s", out)
	}
	t.Logf("walkthrough output:\n%s", out)

	// The checks in the script bite: the same script with a wrong path
	// must fail, or a broken README would pass.
	broken := strings.Replace(script, "/v2/customers", "/v2/customerz", 1)
	if broken == script {
		t.Fatal("the walkthrough does not create a customer at /v2/customers")
	}
	if out, err := runScript(t, s, broken); err == nil {
		t.Fatalf("the walkthrough with a wrong path succeeded:\n%s", out)
	}
}
