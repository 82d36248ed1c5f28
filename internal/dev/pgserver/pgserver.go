// Package pgserver runs a private PostgreSQL server from Debian's binaries:
// the persistent development cluster of `make run` and the throwaway servers
// of tests. As root it runs the server as the postgres user (initdb refuses
// root).
//
// The development cluster listens on 127.0.0.1, where any local user can
// connect, so it takes a password (SCRAM-SHA-256 for the socket and TCP
// alike): generated once, kept beside the cluster in a 0600 file that only
// its owner reads, and reused by later runs. A cluster is first set up
// with the socket trusted and TCP demanding a password the postgres role
// does not have yet, so no moment exists in which TCP trusts anyone; over
// the socket, whose directory only the server's user and root enter, the
// role gets its password, and then the socket demands it too. A cluster
// made before it had a password is converted the same way. Tests'
// throwaway servers listen on a private socket only and trust it.
package pgserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lib/pq"
)

// ErrNoBinaries means PostgreSQL's server binaries are not installed.
var ErrNoBinaries = errors.New("PostgreSQL server binaries not found (Debian/Ubuntu: apt-get install postgresql)")

// Options says where and how to run a server.
type Options struct {
	DataDir   string // the cluster; created by initdb when empty
	SocketDir string // Unix socket directory
	// TCPAddr, when set (for example "127.0.0.1"), also listens on TCP at Port.
	TCPAddr string
	Port    int // 0 picks a free port
	// Durable keeps fsync and synchronous commit on; tests turn it off for speed.
	Durable bool
	// Log receives the server's output; nil discards it.
	Log *os.File
	// Settings are more "name=value" server settings (the bench loads
	// pg_stat_statements with one).
	Settings []string
	// Password, when set, is the postgres role's password, which every
	// connection must give; "" trusts every connection.
	Password string
}

// Server is a running PostgreSQL server.
type Server struct {
	opts Options
	cmd  *exec.Cmd
	done chan error
}

// BinDir finds the newest /usr/lib/postgresql/*/bin holding initdb, or the
// directory of initdb on PATH.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
		return filepath.Dir(p), nil
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises opts.DataDir if it holds no cluster yet, starts the
// server, and waits until it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	if opts.Port == 0 {
		if opts.Port, err = freePort(); err != nil {
			return nil, err
		}
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{opts.DataDir, opts.SocketDir} {
		if cred != nil {
			if err := reachable(filepath.Dir(d), cred); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
		if cred != nil {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("chown %s: %w", d, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(opts.DataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		init := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", opts.DataDir,
			"-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-instructions")
		init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := init.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb: %w: %s", err, strings.TrimSpace(string(out)))
		}
	}

	converting := false
	if opts.Password != "" {
		if converting, err = prepareAuth(opts.DataDir); err != nil {
			return nil, err
		}
	}

	args := []string{"-D", opts.DataDir, "-k", opts.SocketDir, "-p", strconv.Itoa(opts.Port),
		"-c", "listen_addresses=" + opts.TCPAddr, "-c", "max_connections=200"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, s := range opts.Settings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	// Own process group: a terminal's Ctrl-C reaches our process, which then
	// stops the server in order. Pdeathsig stops it if we die without that.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s := &Server{opts: opts, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		if opts.Password != "" && !converting {
			err = fmt.Errorf("%w (does the password file beside the cluster still hold the postgres role's password?)", err)
		}
		return nil, err
	}
	if converting {
		if err := s.setPassword(ctx); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("postgres exited during start-up (%v); see its log, or check that no other server uses %s", err, s.opts.DataDir)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		db, err := sql.Open("postgres", s.URL("postgres"))
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
			if err == nil {
				return nil
			}
		}
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code.Class() == "28" { // invalid authorization: waiting changes nothing
			return fmt.Errorf("postgres refused the connection: %w", err)
		}
		last = err
	}
	return fmt.Errorf("postgres did not become ready: %w", last)
}

// URL is the connection string for database name over the Unix socket,
// with the password when the server has one.
func (s *Server) URL(name string) string {
	return dsn(s.opts.SocketDir, s.opts.Port, name, s.opts.Password)
}

// dsn is a key=value connection string, with the password when there is one.
func dsn(host string, port int, name, password string) string {
	u := fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", host, port, name)
	if password != "" {
		u += " password=" + quoteValue(password)
	}
	return u
}

// PID is the postmaster's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Port is the server's port (its socket file is named after it).
func (s *Server) Port() int { return s.opts.Port }

// Stop asks for a fast shutdown (SIGINT) and waits; after 30 s it kills.
func (s *Server) Stop() error {
	if s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		s.done <- err // stopped: a later Stop returns at once
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		s.done <- <-s.done
		return errors.New("postgres did not stop within 30 s; killed")
	}
}

// Restart stops the server and starts it again on the same cluster,
// socket and port (what an operator's restart looks like to clients).
func (s *Server) Restart(ctx context.Context, down time.Duration) (*Server, error) {
	if err := s.Stop(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(down):
	}
	return Start(ctx, s.opts)
}

// serverUser returns the postgres user's credential when we are root, nil
// otherwise (the server then runs as the current user).
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root needs a 'postgres' system user to run the server (Debian's postgresql package creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// reachable checks that the server's user can traverse every directory from
// the root down to dir, so it can reach its data and socket directories.
func reachable(dir string, cred *syscall.Credential) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err == nil {
			ok := st.Mode&0o001 != 0 ||
				(st.Uid == cred.Uid && st.Mode&0o100 != 0) ||
				(st.Gid == cred.Gid && st.Mode&0o010 != 0)
			if !ok {
				return fmt.Errorf("the postgres user cannot reach %s: make it traversable (chmod o+x %s) or choose another DATA_DIR", abs, d)
			}
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
