// Package formation brings up a pg_auto_failover formation on loopback
// for the failover scenarios of `make chaos` and for trying failover by
// hand (`fundsource-lab formation`): a monitor and two PostgreSQL nodes,
// node1 primary and node2 its synchronous standby
// (synchronous_standby_names 'ANY 1 (…)'), each run by its own
// `pg_autoctl run` in a process group of its own, so a scenario can kill a
// node whole (keeper and postmaster) with one SIGKILL.
//
// pg_autoctl comes from Debian's postgresql-15-auto-failover (make chaos
// installs it when missing and it runs as root). As root, every process
// runs as the postgres user; pg_autoctl's configuration and state live
// under the formation's folder (XDG_*_HOME), never in a home directory.
//
// Timeouts are tuned for a test, where the defaults take about 50 s to
// fail over. The monitor (its pgautofailover.* settings):
//
//	health_check_period               1000 ms  (default 5000)
//	health_check_timeout              1000 ms  (default 5000)
//	health_check_max_retries          1        (default 2)
//	health_check_retry_delay          500 ms   (default 2000)
//	node_considered_unhealthy_timeout 3000 ms  (default 20000)
//	primary_demote_timeout            6000 ms  (default 30000)
//
// and each keeper: timeout.network_partition_timeout 4 s (default 20);
// each node (nodeSettings): max_connections 300 (default 100) and
// authentication_timeout 5 s (default 60). With these, writes pause for
// about 10 s when the primary is killed or switched over under load.
// Lower monitor timeouts risk a failover on a busy machine's slow health
// check.
//
// authentication_timeout bounds a switchover's old primary. Its keeper
// stops it with a fast shutdown while the clients reconnect; PostgreSQL
// 15 answers a connection made during the shutdown from a dead-end child
// ("the database system is shutting down"), and once the shutdown
// checkpoint is written, the postmaster stops answering new connections
// and waits for every dead-end child to exit, which a child whose client
// has not finished its startup does only at authentication_timeout. With
// the default, the old primary lingers for most of a minute: its keeper's
// stop times out, the monitor cannot learn that it is down, and every new
// connection tries its address first and hangs there until its
// connect_timeout, so writes on the new primary wait for it.
package formation

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/lib/pq" // the monitor's and the nodes' checks

	"github.com/fundsource/fundsource/internal/dev/pgserver"
	"github.com/fundsource/fundsource/internal/lab/rig"
)

// ErrNotInstalled means pg_autoctl is not installed.
var ErrNotInstalled = errors.New("pg_autoctl not found (Debian: apt-get install postgresql-15-auto-failover)")

// monitorSettings are the monitor's tuned timeouts (see the package doc).
var monitorSettings = []string{
	"health_check_period = 1000",
	"health_check_timeout = 1000",
	"health_check_max_retries = 1",
	"health_check_retry_delay = 500",
	"node_considered_unhealthy_timeout = 3000",
	"primary_demote_timeout = 6000",
}

// nodeSettings go into the first node's postgresql.auto.conf, which the
// standby's base backup copies. max_connections: two servers' pools hold
// about a hundred connections, PostgreSQL's default, and the lab's own
// pools and the keepers need room beside them. authentication_timeout:
// the longest a stopping node waits for the connections it refuses (see
// the package doc); loopback clients with trust authentication finish
// their startup in milliseconds.
const nodeSettings = "max_connections = '300'\nauthentication_timeout = '5s'\n"

// networkPartitionTimeout is each keeper's timeout.network_partition_timeout, in seconds.
const networkPartitionTimeout = "4"

// Database is the formation's database.
const Database = "fundsource"

// Node is one PostgreSQL node of the formation.
type Node struct {
	Name   string
	Port   int
	PGData string
	run    *exec.Cmd // its `pg_autoctl run`; nil once killed or stopped
}

// Formation is a running monitor and its two nodes.
type Formation struct {
	Dir     string
	Nodes   []*Node
	monitor *exec.Cmd
	monPort int
	monData string
	env     []string
	cred    *syscall.Credential
	log     io.Writer
	// URI is the formation's connection string as pg_autoctl show uri
	// prints it, with the postgres user added: what an operator pastes
	// into DATABASE_URL.
	URI string
}

// Start brings up the formation in dir (created; removed by Stop), with
// pg_autoctl's output going to log (nil discards it). It returns once
// node1 is primary and node2 its secondary.
func Start(ctx context.Context, dir string, log io.Writer) (*Formation, error) {
	autoctl, err := exec.LookPath("pg_autoctl")
	if err != nil {
		return nil, ErrNotInstalled
	}
	bin, err := pgserver.BinDir()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, err
	}
	f := &Formation{Dir: dir, log: log, monData: filepath.Join(dir, "monitor")}
	f.env = []string{"PATH=" + bin + ":" + filepath.Dir(autoctl) + ":/usr/bin:/bin", "HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_DATA_HOME=" + filepath.Join(dir, "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run")}
	if f.cred, err = postgresUser(); err != nil {
		return nil, err
	}
	if f.cred != nil {
		if err := os.Chown(dir, int(f.cred.Uid), int(f.cred.Gid)); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			f.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	f.monPort = ports[0]
	if err := f.ctl(ctx, "create", "monitor", "--pgdata", f.monData, "--pgport", strconv.Itoa(f.monPort),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl"); err != nil {
		return nil, err
	}
	if err := f.ctl(ctx, "config", "set", "--pgdata", f.monData, "postgresql.listen_addresses", "127.0.0.1"); err != nil {
		return nil, err
	}
	if f.monitor, err = f.start("run", "--pgdata", f.monData); err != nil {
		return nil, err
	}
	mon, err := waitDB(ctx, f.monitorURL())
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	defer mon.Close()
	for _, s := range monitorSettings {
		if _, err := mon.ExecContext(ctx, "ALTER SYSTEM SET pgautofailover."+s); err != nil {
			return nil, fmt.Errorf("monitor setting %s: %w", s, err)
		}
	}
	if _, err := mon.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
		return nil, err
	}
	monitorURI := fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.monPort)
	for i, port := range ports[1:] {
		n := &Node{Name: fmt.Sprintf("node%d", i+1), Port: port, PGData: filepath.Join(dir, fmt.Sprintf("node%d", i+1))}
		// A standby's base backup waits for a checkpoint on the primary.
		stop := make(chan struct{})
		if i > 0 {
			go f.checkpoints(f.Nodes[0], stop)
		}
		err := f.ctl(ctx, "create", "postgres", "--pgdata", n.PGData, "--pgport", strconv.Itoa(port),
			"--listen", "127.0.0.1", "--hostname", "127.0.0.1", "--name", n.Name, "--dbname", Database,
			"--auth", "trust", "--no-ssl", "--monitor", monitorURI)
		close(stop)
		if err != nil {
			return nil, err
		}
		if err := f.ctl(ctx, "config", "set", "--pgdata", n.PGData, "timeout.network_partition_timeout", networkPartitionTimeout); err != nil {
			return nil, err
		}
		if i == 0 {
			// The standby's base backup copies it.
			if err := appendFile(filepath.Join(n.PGData, "postgresql.auto.conf"), nodeSettings); err != nil {
				return nil, err
			}
		}
		if n.run, err = f.start("run", "--pgdata", n.PGData); err != nil {
			return nil, err
		}
		f.Nodes = append(f.Nodes, n)
		want := map[string]int{"single": 1}
		if i > 0 {
			want = map[string]int{"primary": 1, "secondary": 1}
		}
		if err := f.waitStates(ctx, mon, want, 3*time.Minute); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	out, err := f.output(ctx, "show", "uri", "--pgdata", f.monData, "--formation", "default")
	if err != nil {
		return nil, err
	}
	uri := strings.TrimSpace(string(out))
	if !strings.HasPrefix(uri, "postgres://") {
		return nil, fmt.Errorf("pg_autoctl show uri printed %q", uri)
	}
	f.URI = "postgres://postgres@" + strings.TrimPrefix(uri, "postgres://")
	ok = true
	return f, nil
}

func (f *Formation) monitorURL() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=pg_auto_failover sslmode=disable connect_timeout=2", f.monPort)
}

// NodeURL is a connection string to one node alone.
func (n *Node) NodeURL() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable connect_timeout=2", n.Port, Database)
}

// WaitHealthy waits until the monitor sees one primary and one secondary.
func (f *Formation) WaitHealthy(ctx context.Context, limit time.Duration) error {
	mon, err := waitDB(ctx, f.monitorURL())
	if err != nil {
		return err
	}
	defer mon.Close()
	return f.waitStates(ctx, mon, map[string]int{"primary": 1, "secondary": 1}, limit)
}

// waitStates waits until the nodes whose reported state is their goal
// state are, by state, exactly want.
func (f *Formation) waitStates(ctx context.Context, mon *sql.DB, want map[string]int, limit time.Duration) error {
	return waitMonitor(ctx, mon, want, limit, `SELECT reportedstate::text, '' FROM pgautofailover.node WHERE reportedstate = goalstate`,
		func(got map[string]int, state, _ string) { got[state]++ })
}

// waitNodes waits until each node named in want reports, as its goal, the
// state want gives it.
func (f *Formation) waitNodes(ctx context.Context, mon *sql.DB, want map[string]string, limit time.Duration) error {
	return waitMonitor(ctx, mon, want, limit, `SELECT nodename, reportedstate::text || CASE WHEN reportedstate = goalstate THEN '' ELSE '→' || goalstate::text END FROM pgautofailover.node`,
		func(got map[string]string, name, state string) { got[name] = state })
}

// waitMonitor reads the monitor's nodes with query (two text columns)
// every 250 ms, adding each row to a fresh map, until the map is want.
func waitMonitor[V any](ctx context.Context, mon *sql.DB, want map[string]V, limit time.Duration, query string, add func(map[string]V, string, string)) error {
	end := time.Now().Add(limit)
	var last map[string]V
	for {
		got := map[string]V{}
		rows, err := mon.QueryContext(ctx, query)
		if err == nil {
			for rows.Next() {
				var a, b string
				if rows.Scan(&a, &b) == nil {
					add(got, a, b)
				}
			}
			rows.Close()
			last = got
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return nil
			}
		}
		if time.Now().After(end) {
			return fmt.Errorf("the formation did not reach %v within %s (last %v)", want, limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// checkpoints runs CHECKPOINT on n every second until stop closes.
func (f *Formation) checkpoints(n *Node, stop <-chan struct{}) {
	db, err := sql.Open("postgres", n.NodeURL())
	if err != nil {
		return
	}
	defer db.Close()
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
			_, _ = db.Exec("CHECKPOINT")
		}
	}
}

// Primary is the node that takes writes now.
func (f *Formation) Primary(ctx context.Context) (*Node, error) {
	for _, n := range f.Nodes {
		if n.run == nil {
			continue
		}
		db, err := sql.Open("postgres", n.NodeURL())
		if err != nil {
			continue
		}
		var standby bool
		err = db.QueryRowContext(ctx, "SELECT pg_is_in_recovery()").Scan(&standby)
		db.Close()
		if err == nil && !standby {
			return n, nil
		}
	}
	return nil, errors.New("no node is primary")
}

// SynchronousStandbys is the primary's synchronous_standby_names.
func (f *Formation) SynchronousStandbys(ctx context.Context) (string, error) {
	p, err := f.Primary(ctx)
	if err != nil {
		return "", err
	}
	db, err := sql.Open("postgres", p.NodeURL())
	if err != nil {
		return "", err
	}
	defer db.Close()
	var s string
	err = db.QueryRowContext(ctx, "SHOW synchronous_standby_names").Scan(&s)
	return s, err
}

// Kill ends n's whole process group (its pg_autoctl and postmaster) with
// SIGKILL: the machine lost, as far as the others can tell.
func (f *Formation) Kill(n *Node) {
	if n.run == nil {
		return
	}
	_ = syscall.Kill(-n.run.Process.Pid, syscall.SIGKILL)
	_ = n.run.Wait()
	n.run = nil
}

// Switchover asks the monitor for a planned switchover and returns once
// the monitor has finished it: the node that was primary is the
// secondary, and the other node the primary. pg_autoctl's own wait ends at
// a hard-coded 60 s while the monitor goes on orchestrating, and on a
// loaded machine the old primary's rejoin can outlast it, so the monitor's
// states decide, not that wait; the scenario judges the service by its
// writes.
func (f *Formation) Switchover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	old, err := f.Primary(ctx)
	if err != nil {
		return err
	}
	waitErr := f.ctl(ctx, "perform", "switchover", "--pgdata", f.monData, "--formation", "default")
	if waitErr != nil && ctx.Err() != nil {
		return waitErr
	}
	mon, err := waitDB(ctx, f.monitorURL())
	if err != nil {
		return errors.Join(waitErr, err)
	}
	defer mon.Close()
	want := map[string]string{}
	for _, n := range f.Nodes {
		want[n.Name] = "primary"
		if n == old {
			want[n.Name] = "secondary"
		}
	}
	if err := f.waitNodes(ctx, mon, want, 2*time.Minute); err != nil {
		return errors.Join(waitErr, err)
	}
	if waitErr != nil {
		fmt.Fprintf(f.log, "formation: the switchover finished after pg_autoctl stopped waiting (%v)\n", waitErr)
	}
	return nil
}

// Stop stops the nodes and the monitor (SIGTERM, then SIGKILL after 20 s)
// and removes the folder.
func (f *Formation) Stop() {
	for _, n := range f.Nodes {
		stop(n.run)
		n.run = nil
	}
	stop(f.monitor)
	f.monitor = nil
	_ = os.RemoveAll(f.Dir)
}

func stop(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func (f *Formation) command(ctx context.Context, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, "pg_autoctl", args...)
	} else {
		cmd = exec.Command("pg_autoctl", args...)
	}
	cmd.Env, cmd.Dir = f.env, f.Dir
	// A process group of its own: Kill and Stop reach the keeper and its
	// postmaster, and a terminal's Ctrl-C reaches only the lab.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: f.cred, Setpgid: true}
	return cmd
}

// ctl runs one pg_autoctl command to its end.
func (f *Formation) ctl(ctx context.Context, args ...string) error {
	cmd := f.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = f.log, f.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pg_autoctl %s: %w", strings.Join(args[:min(2, len(args))], " "), err)
	}
	return nil
}

func (f *Formation) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := f.command(ctx, args...)
	cmd.Stderr = f.log
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pg_autoctl %s: %w", strings.Join(args[:min(2, len(args))], " "), err)
	}
	return out, nil
}

// start starts a long-running pg_autoctl command; SIGTERM reaches it if
// the lab dies first.
func (f *Formation) start(args ...string) (*exec.Cmd, error) {
	cmd := f.command(nil, args...)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	cmd.Stdout, cmd.Stderr = f.log, f.log
	return cmd, cmd.Start()
}

func appendFile(name, text string) error {
	fh, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := fh.WriteString(text); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func waitDB(ctx context.Context, url string) (*sql.DB, error) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return nil, err
	}
	end := time.Now().Add(time.Minute)
	for {
		err := db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		if time.Now().After(end) || ctx.Err() != nil {
			db.Close()
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// postgresUser is the postgres user's credential when we are root (the
// servers refuse to run as root), nil otherwise.
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root needs a 'postgres' system user (Debian's postgresql package creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePorts finds n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Run is `fundsource-lab formation`: it brings up a formation, prints the
// DATABASE_URL to use and how to break it, and stops it on Ctrl-C.
func Run(ctx context.Context, args []string, stdio rig.IO) error {
	stdout, stderr := stdio.Stdout, stdio.Stderr
	fs := flag.NewFlagSet("fundsource-lab formation", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "show pg_autoctl's output")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	dir, err := os.MkdirTemp("", "fundsource-formation-")
	if err != nil {
		return err
	}
	var log io.Writer
	if *verbose {
		log = stderr
	}
	fmt.Fprintln(stderr, "formation: starting a monitor and two nodes (about a minute)…")
	f, err := Start(ctx, dir, log)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	defer f.Stop()
	p, _ := f.Primary(ctx)
	fmt.Fprintf(stdout, "DATABASE_URL='%s'\n", f.URI)
	for _, n := range f.Nodes {
		role := "standby"
		if n == p {
			role = "primary"
		}
		fmt.Fprintf(stdout, "%s: 127.0.0.1:%d (%s), pgdata %s\n", n.Name, n.Port, role, n.PGData)
	}
	as := ""
	if f.cred != nil {
		as = "runuser -u postgres -- "
	}
	fmt.Fprintf(stdout, "switch over: %senv %s pg_autoctl perform switchover --pgdata %s --formation default\n",
		as, strings.Join(f.env, " "), f.monData)
	fmt.Fprintln(stdout, "Ctrl-C stops the formation and removes it.")
	<-ctx.Done()
	return nil
}
