// Package rig is what the load bench (internal/lab/bench) and the resilience
// suite (internal/lab/chaos) share: a durable private PostgreSQL in a
// temporary folder, the service wired on it, and 'fundsource serve'
// processes to measure or to kill. It is linked only into
// cmd/fundsource-lab, never into the product's binary.
package rig

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the raw pool's driver

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/dev/pgserver"
	"github.com/fundsource/fundsource/internal/wiring"
)

// ErrUsage marks a command-line mistake; main exits with status 2.
var ErrUsage = errors.New("usage")

// IO is where a lab command reads its environment and writes its output.
type IO struct {
	Getenv func(string) string
	Stdout io.Writer // the results
	Stderr io.Writer // progress
}

// Run is one lab run: its server binary, its temporary folder and the
// private cluster in it.
type Run struct {
	Bin   string           // the 'fundsource' binary the servers run
	Dir   string           // the temporary folder
	PG    *pgserver.Server // the cluster (Restart replaces it)
	DBURL string
}

// Prepare makes a run's folder and starts its durable private PostgreSQL
// (with more server settings, if any). serverBin is the fundsource binary
// to run as the server; "" finds it beside this executable. Close stops the
// cluster (whichever it is by then) and removes the folder.
func Prepare(ctx context.Context, name, serverBin string, settings ...string) (*Run, error) {
	bin, err := serverBinary(serverBin)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fundsource-"+name+"-")
	if err != nil {
		return nil, err
	}
	pg, dbURL, err := pgserver.Private{Dir: dir, Database: "fundsource", Settings: settings}.Start(ctx)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Run{Bin: bin, Dir: dir, PG: pg, DBURL: dbURL}, nil
}

// Close stops the cluster and removes the run's folder.
func (r *Run) Close() {
	_ = r.PG.Stop()
	os.RemoveAll(r.Dir)
}

// serverBinary is bin, or the fundsource binary beside this executable
// (make builds both into bin/).
func serverBinary(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	bin = filepath.Join(filepath.Dir(self), "fundsource")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("no fundsource binary beside %s: build it (make build) or pass --server", self)
	}
	return bin, nil
}

// Wire loads the configuration that vars give, opens and migrates the
// database, and runs fn with the service wired on it (its logs discarded)
// and a pool of its own on the same database, for the lab's raw SQL.
func Wire(ctx context.Context, vars map[string]string, fn func(svc *wiring.Services, raw *sqlx.DB) error) error {
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		return err
	}
	svc, closeDB, err := wiring.Open(ctx, cfg, cfg.DatabaseURL, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer closeDB()
	dsn, err := postgres.ConnString(cfg.DatabaseURL) // the same forms as the service's
	if err != nil {
		return err
	}
	raw, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(64)
	raw.SetMaxIdleConns(64)
	return fn(svc, raw)
}

// Server is a 'fundsource serve' process (or another server the lab
// runs as a process of its own, see StartProcess).
type Server struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has ended and been waited for
}

// StartServer starts 'bin serve' with exactly vars as its environment
// (and PATH), and waits until it answers /readyz at vars["LISTEN_ADDR"].
func StartServer(ctx context.Context, bin string, vars map[string]string) (*Server, error) {
	return StartProcess(ctx, vars["LISTEN_ADDR"], vars, bin, "serve")
}

// StartProcess starts bin with args and nothing but vars and PATH in its
// environment (a secret goes in vars: other local users can read a
// process's arguments), and waits until it answers /readyz at addr.
func StartProcess(ctx context.Context, addr string, vars map[string]string, bin string, args ...string) (*Server, error) {
	return StartProcessLogging(ctx, addr, vars, nil, bin, args...)
}

// StartProcessLogging is StartProcess with the process's stdout and
// stderr written to out (nil: discarded).
func StartProcessLogging(ctx context.Context, addr string, vars map[string]string, out *os.File, bin string, args ...string) (*Server, error) {
	cmd := exec.Command(bin, args...)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"))
	if out == nil {
		// The server's logs go to /dev/null itself: through a pipe, this
		// process would spend its cores (shared with the server) copying them.
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		defer devNull.Close()
		out = devNull
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if s.Exited() {
			return nil, fmt.Errorf("the server exited before it became ready (%v)", cmd.ProcessState)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, errors.New("the server did not become ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited reports whether the server has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Kill ends the server with SIGKILL and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Stop interrupts the server and waits up to 20 s for its graceful
// shutdown, then kills it. It reports how the process ended: nil for a
// clean exit.
func (s *Server) Stop() error {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("the server did not stop within 20 s of SIGINT")
	}
	if !s.cmd.ProcessState.Success() {
		return fmt.Errorf("the server ended with %v", s.cmd.ProcessState)
	}
	return nil
}

// PeakRSS is a process's high-water resident set (VmHWM), in bytes.
func PeakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/status")
}

// FreeLoopback is a free TCP address on 127.0.0.1.
func FreeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildServer builds cmd/fundsource into a temporary folder, once per
// process, and returns the binary's path: the tests that run servers as
// processes use it.
func BuildServer() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fundsource-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "fundsource")
		out, err := exec.Command("go", "build", "-o", buildPath, "github.com/fundsource/fundsource/cmd/fundsource").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return buildPath, buildErr
}

// Tail is the last n lines of a file: what a failed step's log shows.
func Tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	return TailString(string(b), n)
}

// TailString is the last n lines of s.
func TailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
