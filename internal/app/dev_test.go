package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/app"
	"github.com/fundsource/fundsource/internal/config"
)

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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var secretRE = regexp.MustCompile(`sandbox secret key: (sk_test_\w+)`)

// startDev runs 'fundsource dev' until the returned stop is called.
func startDev(t *testing.T, dataDir, addr string) (out *syncBuffer, stop func() error) {
	out = &syncBuffer{}
	errOut := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := map[string]string{"DATA_DIR": dataDir, "LISTEN_ADDR": addr, "SANDBOX_BASE_URL": "http://" + addr}
	go func() {
		done <- app.Run(ctx, []string{"dev"}, app.IO{Getenv: func(k string) string { return env[k] }, Stdout: out, Stderr: errOut})
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if r, err := http.Get("http://" + addr + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("dev exited early: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("dev did not become ready\n%s", errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(60 * time.Second):
			return fmt.Errorf("dev did not stop within 60 s")
		}
	}
}

func TestDevStartsPrivateClusterServesAndReusesData(t *testing.T) {
	base, err := os.MkdirTemp("", "fundsource-dev-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// As root the server runs as postgres, which must traverse the parent.
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(base, "data")
	addr := freeAddr(t)
	out, stop := startDev(t, dataDir, addr)
	m := secretRE.FindStringSubmatch(out.String())
	if m == nil {
		stop()
		t.Fatalf("no sandbox secret key printed:\n%s", out.String())
	}
	key := m[1]
	demo := config.ReadEnvFile(filepath.Join(dataDir, "demo.env"))
	if demo["DEMO_SECRET_KEY"] != key || demo["DEMO_PUBLIC_KEY"] == "" || demo["DEMO_PASSWORD"] == "" || demo["DEMO_EMAIL"] == "" {
		t.Errorf("demo.env = %v", demo)
	}

	// The printed key creates and reads back a customer over real HTTP.
	body := `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v2/customers", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	_ = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	id, _ := created["user_id"].(string)
	if res.StatusCode != 200 || id == "" {
		t.Fatalf("create customer: %d %v", res.StatusCode, created)
	}
	// An unknown key gets the 401 envelope.
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/v2/customers", nil)
	req.Header.Set("Authorization", "Bearer sk_test_"+strings.Repeat("Z", 43))
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var unauth map[string]any
	_ = json.NewDecoder(res.Body).Decode(&unauth)
	res.Body.Close()
	if res.StatusCode != 401 || unauth["error"].(map[string]any)["code"] != "unauthorized" {
		t.Errorf("unknown key: %d %v", res.StatusCode, unauth)
	}

	if err := stop(); err != nil {
		t.Fatalf("dev stopped with %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres.port")); !os.IsNotExist(err) {
		t.Errorf("postgres.port left behind after a clean stop")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the private cluster is still running after stop (postmaster.pid exists)")
	}

	// The next run reuses the cluster, the demo merchant and its key.
	out2, stop2 := startDev(t, dataDir, addr)
	defer stop2()
	if !strings.Contains(out2.String(), "reused") || !strings.Contains(out2.String(), key) {
		t.Errorf("second run did not reuse the demo merchant:\n%s", out2.String())
	}
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/v2/customers/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("customer from the first run: %d, want 200", res.StatusCode)
	}
}
