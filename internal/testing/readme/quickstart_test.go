// Package readme_test keeps the README true: it runs the README's walkthrough,
// the shell blocks between <!-- quickstart:begin --> and <!-- quickstart:end -->,
// with bash against a real 'fundsource dev' server, as a reader runs them
// against 'make run'.
package readme_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/app"
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

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// server is a running 'fundsource dev', as 'make run' serves it, with
// what it printed for the reader.
type server struct {
	base, sim, secretKey, publicKey string
}

// startDev runs 'fundsource dev' on a fresh database and free ports until
// the test ends, and reads the demo merchant's keys from what it prints.
func startDev(t *testing.T) server {
	t.Helper()
	addr, simAddr := freeAddr(t), freeAddr(t)
	env := map[string]string{
		"DATABASE_URL":         pgtest.URL(t),
		"DATA_DIR":             t.TempDir(),
		"LISTEN_ADDR":          addr,
		"SANDBOX_BASE_URL":     "http://" + addr,
		"PROVIDER_SIM_ADDR":    simAddr,
		"PAYMENT_SETTLE_DELAY": "1s",
	}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"dev"}, app.IO{Getenv: func(k string) string { return env[k] }, Stdout: out, Stderr: errOut})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev stopped with %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("dev did not stop within 60 s")
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(90 * time.Second)
	for {
		if r, err := http.Get(base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK && strings.Contains(out.String(), "sandbox public key:") {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("dev exited early: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev did not become ready\n%s", errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	sk := regexp.MustCompile(`sandbox secret key: (sk_test_\w+)`).FindStringSubmatch(out.String())
	pk := regexp.MustCompile(`sandbox public key: (pk_test_\w+)`).FindStringSubmatch(out.String())
	sim := regexp.MustCompile(`provider simulator: (http://\S+)`).FindStringSubmatch(out.String())
	if sk == nil || pk == nil || sim == nil {
		t.Fatalf("dev did not print the keys and the simulator the README tells readers to copy:\n%s", out.String())
	}
	return server{base: base, sim: sim[1], secretKey: sk[1], publicKey: pk[1]}
}

// runScript runs script with bash as a reader would after exporting what
// 'make run' printed, and returns its combined output.
func runScript(t *testing.T, s server, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"BASE=" + s.base,
		"SIM=" + s.sim,
		"SK=" + s.secretKey,
		"PK=" + s.publicKey,
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
