package harness

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/dev/devrun"
)

// SyncBuffer is a bytes.Buffer that a running command may write to while
// the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreeAddr returns a loopback address with a port free at the time of the
// call, for a server the test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// DevOptions configure a 'fundsource dev' run.
type DevOptions struct {
	// Env is the run's environment (DATA_DIR, DATABASE_URL,
	// PAYMENT_SETTLE_DELAY …); StartDev adds LISTEN_ADDR,
	// SANDBOX_BASE_URL, PROVIDER_SIM_ADDR and RAIL_SIM_ADDR from the
	// addresses.
	Env map[string]string
	// Addr and SimAddr are where the service and the provider simulator
	// listen; "" picks a free port. A run that must find a previous run's
	// data where it left it passes the previous run's addresses.
	Addr, SimAddr string
	// RailSimAddr is where the rail simulator listens; "" picks a free port.
	RailSimAddr string
}

// Dev is 'fundsource dev' running in the test process, as 'make run' starts
// it, with what it printed for the reader.
type Dev struct {
	Addr, SimAddr string
	BaseURL       string // "http://" + Addr
	SecretKey     string // the demo merchant's sandbox secret key, as printed
	PublicKey     string // its sandbox public key, as printed
	SimURL        string // the provider simulator's address, as printed
	RailURL       string // the rail simulator's address, as printed

	out, errOut *SyncBuffer
	cancel      context.CancelFunc
	done        chan error
	stopOnce    sync.Once
	stopErr     error
	stopped     atomic.Bool // by the test, which then judges stopErr
}

var (
	devSecretKey = regexp.MustCompile(`sandbox secret key: (sk_test_\w+)`)
	devPublicKey = regexp.MustCompile(`sandbox public key: (pk_test_\w+)`)
	devSimulator = regexp.MustCompile(`provider simulator: (http://\S+)`)
	devRail      = regexp.MustCompile(`rail simulator: +(http://\S+)`)
)

// StartDev runs 'fundsource dev' and returns once it answers /readyz and
// has printed the demo merchant's keys and the simulator's address. The
// run stops when the test ends, unless the test stopped it before; a run
// that then stops with an error fails the test.
func StartDev(t testing.TB, o DevOptions) *Dev {
	t.Helper()
	if o.Addr == "" {
		o.Addr = FreeAddr(t)
	}
	if o.SimAddr == "" {
		o.SimAddr = FreeAddr(t)
	}
	if o.RailSimAddr == "" {
		o.RailSimAddr = FreeAddr(t)
	}
	env := map[string]string{"RAIL_SIM_ADDR": o.RailSimAddr}
	for k, v := range o.Env {
		env[k] = v
	}
	env["LISTEN_ADDR"], env["SANDBOX_BASE_URL"], env["PROVIDER_SIM_ADDR"] = o.Addr, "http://"+o.Addr, o.SimAddr
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dev{Addr: o.Addr, SimAddr: o.SimAddr, BaseURL: "http://" + o.Addr,
		out: &SyncBuffer{}, errOut: &SyncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	go func() {
		d.done <- devrun.Run(ctx, devrun.IO{Getenv: func(k string) string { return env[k] }, Stdout: d.out, Stderr: d.errOut})
	}()
	t.Cleanup(func() {
		if err := d.stop(); err != nil && !d.stopped.Load() {
			t.Errorf("dev stopped with %v", err)
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		if r, err := http.Get(d.BaseURL + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK && strings.Contains(d.out.String(), "sandbox public key:") {
				break
			}
		}
		select {
		case err := <-d.done:
			d.cancel()
			d.stopOnce.Do(func() { d.stopErr = err }) // nothing is left to stop
			d.stopped.Store(true)                     // and Fatalf reports the error
			t.Fatalf("dev exited early: %v\n%s", err, d.errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev did not become ready\n%s", d.errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := d.out.String()
	sk, pk, sim := devSecretKey.FindStringSubmatch(out), devPublicKey.FindStringSubmatch(out), devSimulator.FindStringSubmatch(out)
	if sk == nil || pk == nil || sim == nil {
		t.Fatalf("dev did not print the keys and the simulator the README tells readers to copy:\n%s", out)
	}
	d.SecretKey, d.PublicKey, d.SimURL = sk[1], pk[1], sim[1]
	if rail := devRail.FindStringSubmatch(out); rail != nil {
		d.RailURL = rail[1]
	}
	return d
}

// Output is what the run printed to stdout so far.
func (d *Dev) Output() string { return d.out.String() }

// Stop stops the run and returns how it ended (nil for a clean stop);
// later calls return the same. The test that calls it judges the result.
func (d *Dev) Stop() error {
	d.stopped.Store(true)
	return d.stop()
}

func (d *Dev) stop() error {
	d.stopOnce.Do(func() {
		d.cancel()
		select {
		case d.stopErr = <-d.done:
		case <-time.After(60 * time.Second):
			d.stopErr = errors.New("dev did not stop within 60 s")
		}
	})
	return d.stopErr
}
