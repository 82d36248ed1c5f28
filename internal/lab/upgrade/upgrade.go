// Package upgrade is the upgrade check of `make chaos` (fundsource-lab
// upgrade): the binary of the commit before the newest migration must keep
// working on the newest schema, so that a deploy can migrate first and roll
// the processes after, with no downtime.
//
// Why this shape: during a rolling deploy the old processes serve on the
// new schema, first while the migrations run and then beside the new
// processes until the last one is replaced. Migrations therefore follow
// expand/contract (see package migrations): nothing the previous release
// reads or writes is dropped, renamed or made stricter in the release that
// stops using it. The check proves it with the real binaries instead of
// reviewing SQL: it builds the commit before the newest migration (the
// first parent of the newest commit on the main line that changed a
// migrations/*.sql file, or HEAD when one has uncommitted changes), starts
// that binary's 'dev' on a fresh database (its own, older schema), runs
// that commit's walkthrough (docs/walkthrough.md, or the README's for a
// commit from before that file) against it while the new binary's
// 'migrate' runs, runs the walkthrough again on the migrated schema,
// restarts the old binary on the newest schema (its own migrate must
// accept a database that is ahead of it), and runs the new
// walkthrough against the new binary while the old one keeps serving
// beside it and doing background work. The old commit's walkthrough, not
// the new one's, is what the old binary must pass: the new walkthrough may
// describe what only the new binary does. Any walkthrough failure, any
// non-2xx answer to the steady traffic, any 5xx or ERROR line in either
// binary's log, or a process that does not start or stop cleanly fails
// the check.
//
// The history is needed: a shallow clone is unshallowed (git fetch
// --unshallow), and the check fails, saying so, when that is impossible.
// Old binaries are cached under the user's cache folder by commit, so a
// second run builds nothing.
package upgrade

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/dev/walkthrough"
	"github.com/fundsource/fundsource/internal/lab/rig"
)

// Run is 'fundsource-lab upgrade': it finds the commit before the newest
// migration in the repository, builds it, and runs Check with the binary
// beside this one (or --server) as the new binary.
func Run(ctx context.Context, args []string, stdio rig.IO) error {
	fs := flag.NewFlagSet("fundsource-lab upgrade", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	serverBin := fs.String("server", "", "the new fundsource binary (default: the one beside this binary)")
	repo := fs.String("repo", "", "the git checkout the new binary was built from (default: the one around the current folder)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	start := time.Now()
	if *repo == "" {
		top, err := git(ctx, ".", "rev-parse", "--show-toplevel")
		if err != nil {
			return fmt.Errorf("upgrade: the check needs the project's git checkout (run it from inside one, or pass --repo): %w", err)
		}
		*repo = strings.TrimSpace(top)
	}
	base, err := OldCommit(ctx, *repo, stdio.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stderr, "upgrade: the newest migration is in %s; the binary before it is %s\n", short(base.Migration), short(base.Commit))
	oldBin, err := Build(ctx, *repo, base.Commit, stdio.Stderr)
	if err != nil {
		return err
	}
	oldReadme, err := walkthroughAt(ctx, *repo, base.Commit)
	if err != nil {
		return err
	}
	newReadme, err := os.ReadFile(filepath.Join(*repo, WalkthroughFile))
	if err != nil {
		return err
	}
	oldWalk, err := walkthrough.Quickstart([]byte(oldReadme))
	if err != nil {
		return fmt.Errorf("upgrade: the README of %s: %w", short(base.Commit), err)
	}
	newWalk, err := walkthrough.Quickstart(newReadme)
	if err != nil {
		return fmt.Errorf("upgrade: the README: %w", err)
	}
	run, err := rig.Prepare(ctx, "upgrade", *serverBin)
	if err != nil {
		return err
	}
	defer run.Close()
	sum, err := Check(ctx, Config{Old: oldBin, New: run.Bin, OldWalkthrough: oldWalk, NewWalkthrough: newWalk,
		DBURL: run.DBURL, Dir: run.Dir, Progress: stdio.Stderr})
	if err != nil {
		return fmt.Errorf("upgrade: the binary of %s (before the migration in %s) on the newest schema: %w", short(base.Commit), short(base.Migration), err)
	}
	fmt.Fprintf(stdio.Stdout, "upgrade: %s (the commit before the migration in %s) on the newest schema: %s; %s in all\n",
		short(base.Commit), short(base.Migration), sum, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// Base is the commit whose binary must run on the newest schema.
type Base struct {
	Migration string // the commit that brought the newest migration ("" when uncommitted)
	Commit    string // the commit before it: the binary a deploy replaces
}

// migrationFiles is the pathspec of the migrations: a change to the
// package's Go file is no migration.
const migrationFiles = "migrations/*.sql"

// OldCommit finds the commit before the newest migration in repo. The
// main line (first parents) decides: after a merge, the commit before is
// the merge's first parent, what was deployed before it. Uncommitted
// changes to a migration make HEAD the commit before. A shallow clone
// is unshallowed first, since in one the oldest commit seems to add every
// file.
func OldCommit(ctx context.Context, repo string, progress io.Writer) (Base, error) {
	shallow, err := git(ctx, repo, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return Base{}, err
	}
	if strings.TrimSpace(shallow) == "true" {
		fmt.Fprintln(progress, "upgrade: this clone is shallow; fetching its history (git fetch --unshallow)")
		_, err := git(ctx, repo, "fetch", "--quiet", "--unshallow")
		if err == nil {
			// git fetch without a remote succeeds having fetched nothing.
			if shallow, err = git(ctx, repo, "rev-parse", "--is-shallow-repository"); err == nil && strings.TrimSpace(shallow) == "true" {
				err = errors.New("the clone is still shallow after it")
			}
		}
		if err != nil {
			return Base{}, fmt.Errorf("upgrade: the check needs the git history to find the commit before the newest migration, "+
				"and this clone is shallow; git fetch --unshallow failed (%w): clone without --depth", err)
		}
	}
	dirty, err := git(ctx, repo, "status", "--porcelain", "--", migrationFiles)
	if err != nil {
		return Base{}, err
	}
	if strings.TrimSpace(dirty) != "" {
		head, err := git(ctx, repo, "rev-parse", "--verify", "HEAD")
		return Base{Commit: strings.TrimSpace(head)}, err
	}
	newest, err := git(ctx, repo, "log", "-1", "--first-parent", "--format=%H", "--", migrationFiles)
	if err != nil {
		return Base{}, err
	}
	newest = strings.TrimSpace(newest)
	if newest == "" {
		return Base{}, errors.New("upgrade: no commit changes a migration (migrations/*.sql): nothing to check")
	}
	parent, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", newest+"^1")
	if err != nil {
		return Base{}, fmt.Errorf("upgrade: %s, the commit of the newest migration, has no parent: there is no older binary to check", short(newest))
	}
	return Base{Migration: newest, Commit: strings.TrimSpace(parent)}, nil
}

// Build builds the product at commit (from git archive, so the checkout is
// left alone) and returns the binary. The module proxy supplies what the
// old go.mod names. Binaries are kept by commit in the user's cache
// folder; other commits' binaries are removed once they are an hour old.
// Several builds may run at once (other checkouts' tests on one machine,
// or the same commit twice): each unpacks and builds in a folder of its
// own and moves its binary into place whole, and none removes a folder
// that another may still be using.
func Build(ctx context.Context, repo, commit string, progress io.Writer) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "fundsource-upgrade")
	dir := filepath.Join(root, commit)
	bin := filepath.Join(dir, "fundsource")
	if _, err := os.Stat(bin); err == nil {
		fmt.Fprintf(progress, "upgrade: reusing the binary of %s in %s\n", short(commit), dir)
		return bin, nil
	}
	if old, err := os.ReadDir(root); err == nil {
		for _, e := range old {
			if info, err := e.Info(); err == nil && e.Name() != commit && time.Since(info.ModTime()) > staleBuild {
				os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	archive, err := gitBytes(ctx, repo, "archive", "--format=tar", commit)
	if err != nil {
		return "", err
	}
	if err := untar(bytes.NewReader(archive), src); err != nil {
		return "", fmt.Errorf("upgrade: unpack %s: %w", short(commit), err)
	}
	fmt.Fprintf(progress, "upgrade: building %s…\n", short(commit))
	start := time.Now()
	tmp := filepath.Join(src, "fundsource.bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "./cmd/fundsource")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("upgrade: go build at %s: %v\n%s", short(commit), err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "upgrade: built %s in %s\n", short(commit), time.Since(start).Round(100*time.Millisecond))
	return bin, nil
}

// staleBuild is how old another commit's build folder must be before a
// build removes it: older than any build still running.
const staleBuild = time.Hour

// untar writes a tar stream's folders, files and links under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			return fmt.Errorf("%q is outside the tree", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o777)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Config is one upgrade check.
type Config struct {
	Old, New       string // the binaries: the one a deploy replaces, and the one it brings
	OldWalkthrough string // the old commit's walkthrough (walkthrough.Quickstart)
	NewWalkthrough string // the new tree's
	DBURL          string // a database no newer than the old binary's schema (empty, say)
	Dir            string // a scratch folder
	Progress       io.Writer
}

// Check runs the old binary on the old schema, migrates with the new
// binary's 'migrate' under the old walkthrough and steady traffic, runs
// the old walkthrough again, restarts the old binary on the new schema,
// and runs the new walkthrough against the new binary beside it. It
// returns a one-line summary, or what went wrong.
func Check(ctx context.Context, c Config) (string, error) {
	data := filepath.Join(c.Dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return "", err
	}
	old, err := c.start(ctx, "old", c.Old, data)
	if err != nil {
		return "", err
	}
	defer old.stop()

	// The new binary migrates while the old one serves the walkthrough
	// and steady traffic.
	c.say("the old binary serves on its own schema; migrating with the new binary under its walkthrough and traffic…")
	traffic := startTraffic(old.target)
	walked := make(chan walkResult, 1)
	go func() { walked <- c.walk(ctx, old, c.OldWalkthrough) }()
	time.Sleep(300 * time.Millisecond) // the walkthrough is under way
	migStart := time.Now()
	migOut, migErr := c.migrate(ctx, data)
	migTook := time.Since(migStart)
	time.Sleep(500 * time.Millisecond) // traffic after the migration too
	w := <-walked
	n, fails := traffic.stop()
	if migErr != nil {
		return "", fmt.Errorf("the new binary's migrate failed: %v\n%s", migErr, migOut)
	}
	if w.err != nil {
		return "", fmt.Errorf("the old walkthrough failed while the migrations ran: %w", w.err)
	}
	if len(fails) > 0 {
		return "", fmt.Errorf("%d of %d requests to the old binary failed while the migrations ran, first: %s", len(fails), n, fails[0])
	}
	c.say(fmt.Sprintf("migrated in %s; %d requests, walkthrough in %s", migTook.Round(time.Millisecond), n, w.took.Round(100*time.Millisecond)))

	// On the migrated schema, from the start.
	if w := c.walk(ctx, old, c.OldWalkthrough); w.err != nil {
		return "", fmt.Errorf("the old walkthrough failed on the newest schema: %w", w.err)
	}
	c.say("the old walkthrough passes on the newest schema; restarting the old binary on it…")

	// A rolled-back or crashed old process starts on the newest schema,
	// and serves beside the new binary while the new walkthrough runs.
	if err := old.stop(); err != nil {
		return "", fmt.Errorf("the old binary did not stop cleanly: %w", err)
	}
	if err := old.logProblems(); err != nil {
		return "", err
	}
	old, err = c.start(ctx, "old-restarted", c.Old, data)
	if err != nil {
		return "", fmt.Errorf("the old binary did not start on the newest schema: %w", err)
	}
	defer old.stop()
	nu, err := c.start(ctx, "new", c.New, data)
	if err != nil {
		return "", fmt.Errorf("the new binary did not start beside the old one: %w", err)
	}
	defer nu.stop()
	traffic = startTraffic(old.target)
	wn := c.walk(ctx, nu, c.NewWalkthrough)
	n2, fails := traffic.stop()
	if wn.err != nil {
		return "", fmt.Errorf("the new walkthrough failed beside the old binary: %w", wn.err)
	}
	if len(fails) > 0 {
		return "", fmt.Errorf("%d of %d requests to the restarted old binary failed beside the new one, first: %s", len(fails), n2, fails[0])
	}
	for _, p := range []*process{old, nu} {
		if err := p.stop(); err != nil {
			return "", fmt.Errorf("the %s binary did not stop cleanly: %w", p.name, err)
		}
		if err := p.logProblems(); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("the old walkthrough passed while the migrations ran (%s) and after them, the old binary restarted on the newest schema, "+
		"the new walkthrough passed beside it; %d requests to the old binary, 0 errors", migTook.Round(time.Millisecond), n+n2), nil
}

func (c Config) say(s string) {
	if c.Progress != nil {
		fmt.Fprintln(c.Progress, "upgrade:", s)
	}
}

// process is one 'fundsource dev' run: its server, the walkthrough's
// target and its log.
type process struct {
	name    string
	srv     *rig.Server
	target  walkthrough.Target
	log     string
	stopped bool
	stopErr error
}

// start runs bin's 'dev' on the database with data as DATA_DIR (the demo
// merchant's keys are kept there, so every process serves the same demo
// merchant), on fresh loopback addresses, with the settings the README
// walkthrough's test gives it.
func (c Config) start(ctx context.Context, name, bin, data string) (*process, error) {
	addr, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	sim, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	rail, err := rig.FreeLoopback()
	if err != nil {
		return nil, err
	}
	p := &process{name: name, log: filepath.Join(c.Dir, name+".log")}
	f, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{"DATABASE_URL": c.DBURL, "DATA_DIR": data, "LISTEN_ADDR": addr,
		"SANDBOX_BASE_URL": "http://" + addr, "PROVIDER_SIM_ADDR": sim, "RAIL_SIM_ADDR": rail,
		"PAYMENT_SETTLE_DELAY": "1s",
		// The steady traffic shares the demo merchant's key with the
		// walkthrough: no per-key limit between them.
		"RATE_LIMIT_SANDBOX": "0"}
	if p.srv, err = rig.StartProcessLogging(ctx, addr, vars, f, bin, "dev"); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", name, err, rig.Tail(p.log, 30))
	}
	env := config.ReadEnvFile(filepath.Join(data, "demo.env"))
	p.target = walkthrough.Target{Base: "http://" + addr, Sim: "http://" + sim, SecretKey: env["DEMO_SECRET_KEY"],
		PublicKey: env["DEMO_PUBLIC_KEY"], Home: filepath.Join(c.Dir, name+"-home")}
	if p.target.SecretKey == "" || p.target.PublicKey == "" {
		p.stop()
		return nil, fmt.Errorf("%s: no demo merchant keys in %s", name, filepath.Join(data, "demo.env"))
	}
	return p, os.MkdirAll(p.target.Home, 0o700)
}

// stop interrupts the process once and reports how it ended.
func (p *process) stop() error {
	if !p.stopped {
		p.stopped = true
		p.stopErr = p.srv.Stop()
	}
	return p.stopErr
}

// logProblems is an error naming the process's log lines at level ERROR,
// its requests answered with a 5xx, and any panic, if there are any.
func (p *process) logProblems() error {
	f, err := os.Open(p.log)
	if err != nil {
		return err
	}
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Level  string `json:"level"`
			Status int    `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			// dev's plain-text notes, or what the runtime prints as it dies
			if strings.HasPrefix(sc.Text(), "panic:") || strings.HasPrefix(sc.Text(), "fatal error:") {
				bad = append(bad, sc.Text())
			}
			continue
		}
		if line.Level == "ERROR" || line.Status >= 500 {
			bad = append(bad, sc.Text())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the %s binary logged %d errors or 5xx answers (%s), first:\n%s", p.name, len(bad), p.log, strings.Join(bad[:min(len(bad), 5)], "\n"))
	}
	return sc.Err()
}

type walkResult struct {
	took time.Duration
	err  error
}

// walk runs a walkthrough against p; a failure carries the script's output
// and the process's last log lines.
func (c Config) walk(ctx context.Context, p *process, script string) walkResult {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := walkthrough.Run(ctx, script, p.target)
	if err != nil {
		err = fmt.Errorf("%v\n--- walkthrough output ---\n%s\n--- the %s binary's log ---\n%s", err, rig.TailString(out, 40), p.name, rig.Tail(p.log, 20))
	}
	return walkResult{took: time.Since(start), err: err}
}

// migrate runs the new binary's 'migrate' on the database.
func (c Config) migrate(ctx context.Context, data string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.New, "migrate")
	cmd.Env = []string{"DATABASE_URL=" + c.DBURL, "DATA_DIR=" + data, "PATH=" + os.Getenv("PATH")}
	return cmd.CombinedOutput()
}

// traffic is steady API work against one server: create a customer, read
// it back, list customers, in two loops, until stopped.
type traffic struct {
	stopCh chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	n      int
	fails  []string
}

func startTraffic(t walkthrough.Target) *traffic {
	tr := &traffic{stopCh: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 2; w++ {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for {
				select {
				case <-tr.stopCh:
					return
				default:
				}
				var created struct {
					UserID string `json:"user_id"`
				}
				tr.call(client, t, http.MethodPost, "/v2/customers", `{"first_name":"Steady","last_name":"Traffic","email":"steady@example.com"}`, &created)
				if created.UserID != "" {
					tr.call(client, t, http.MethodGet, "/v2/customers/"+created.UserID, "", nil)
				}
				tr.call(client, t, http.MethodGet, "/v2/customers?limit=5", "", nil)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	return tr
}

// call sends one request and records it; anything but a 2xx is a failure.
func (tr *traffic) call(client *http.Client, t walkthrough.Target, method, path, body string, into any) {
	req, err := http.NewRequest(method, t.Base+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+t.SecretKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	var fail string
	if err != nil {
		fail = fmt.Sprintf("%s %s: %v", method, path, err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			fail = fmt.Sprintf("%s %s: %d %s", method, path, res.StatusCode, b)
		} else if into != nil {
			_ = json.Unmarshal(b, into)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.n++
	if fail != "" {
		tr.fails = append(tr.fails, fail)
	}
}

// stop ends the loops and returns how many requests they sent and which
// failed.
func (tr *traffic) stop() (int, []string) {
	close(tr.stopCh)
	tr.wg.Wait()
	return tr.n, tr.fails
}

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	b, err := gitBytes(ctx, dir, args...)
	return string(b), err
}

func gitBytes(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func short(commit string) string {
	if commit == "" {
		return "the uncommitted migrations"
	}
	return commit[:min(len(commit), 12)]
}

// WalkthroughFile is where the walkthrough lives, relative to the module
// root.
const WalkthroughFile = "docs/walkthrough.md"

// walkthroughAt is the walkthrough of commit: WalkthroughFile, or the
// README for a commit from before the walkthrough had a file of its own.
func walkthroughAt(ctx context.Context, repo, commit string) (string, error) {
	if doc, err := git(ctx, repo, "show", commit+":"+WalkthroughFile); err == nil {
		return doc, nil
	}
	return git(ctx, repo, "show", commit+":README.md")
}
