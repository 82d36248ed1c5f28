package readme_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/dev/walkthrough"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// quickstart returns the walkthrough as one script.
func quickstart(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "walkthrough.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := walkthrough.Quickstart(b)
	if err != nil {
		t.Fatal(err)
	}
	return script
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
	return walkthrough.Run(ctx, script, walkthrough.Target{Base: s.BaseURL, Sim: s.SimURL,
		SecretKey: s.SecretKey, PublicKey: s.PublicKey, Home: t.TempDir()})
}

func TestREADMEQuickstartRunsAgainstMakeRun(t *testing.T) {
	script := quickstart(t)
	// The webhook comes first, so a reader's receiver sees every event.
	if hook, first := strings.Index(script, "api POST /v2/webhooks"), strings.Index(script, "api POST /v2/customers"); hook < 0 || first < 0 || hook > first {
		t.Errorf("the walkthrough registers its webhook at %d, after its first customer at %d", hook, first)
	}
	s := startDev(t)

	start := time.Now()
	out, err := runScript(t, s, script)
	if err != nil {
		t.Fatalf("the walkthrough failed (%v):\n%s\n--- script ---\n%s", err, out, script)
	}
	t.Logf("walkthrough output (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	// The ledger's part ran: a refund, one refused over the rest, the
	// balance transactions and the day's settlements as CSV.
	for _, want := range []string{"/refund", "/v2/balance-transactions", "/v2/reports/settlements", "metadata%5Border_id%5D"} {
		if !strings.Contains(script, want) {
			t.Errorf("the walkthrough does not call %s", want)
		}
	}
	if !strings.Contains(out, "over the rest: refused") || !strings.Contains(out, `"refund_of":"pay_`) || !strings.Contains(out, ",debit,25.00,") {
		t.Errorf("the walkthrough's refund and settlements report did not answer as documented:\n%s", out)
	}

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

func TestQuickstartRefusesUnmarkedOrUnclosedBlocks(t *testing.T) {
	for name, doc := range map[string]string{
		"no blocks":      "# title\n",
		"unclosed":       "<!-- quickstart:begin -->\n```sh\nset -eu\n```\n",
		"stray end":      "<!-- quickstart:begin -->\n```sh\nset -eu\n```\n<!-- quickstart:end -->\n<!-- quickstart:end -->\n",
		"not sh":         "<!-- quickstart:begin -->\n```bash\nset -eu\n```\n<!-- quickstart:end -->\n",
		"without set -e": "<!-- quickstart:begin -->\n```sh\necho hi\n```\n<!-- quickstart:end -->\n",
	} {
		if s, err := walkthrough.Quickstart([]byte(doc)); err == nil {
			t.Errorf("%s: read as %q", name, s)
		}
	}
	s, err := walkthrough.Quickstart([]byte("a\n<!-- quickstart:begin -->\n```sh\nset -eu\n```\n<!-- quickstart:end -->\nb\n<!-- quickstart:begin -->\n```sh\necho two\n```\n<!-- quickstart:end -->\n"))
	if err != nil || s != "set -eu\n\necho two\n" {
		t.Fatalf("two blocks read as %q, %v", s, err)
	}
}
