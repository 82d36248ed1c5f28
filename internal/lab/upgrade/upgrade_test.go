package upgrade

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	_ "github.com/lib/pq"
	"github.com/pressly/goose/v3"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/dev/walkthrough"
	"github.com/fundsource/fundsource/internal/lab/rig"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/migrations"
)

// breakingEnv makes this test binary act as a new binary's 'migrate' whose
// newest migration breaks the old binary (see breakingMigrate).
const breakingEnv = "UPGRADE_TEST_BREAKING_MIGRATE"

func TestMain(m *testing.M) {
	if os.Getenv(breakingEnv) == "1" {
		if err := breakingMigrate(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	pgtest.Main(m)
}

// breakingMigrate is 'fundsource migrate' with one more migration, one
// that breaks expand/contract: it drops a column the binary still reads.
func breakingMigrate() error {
	if len(os.Args) < 2 || os.Args[1] != "migrate" {
		return fmt.Errorf("want 'migrate', got %q", os.Args[1:])
	}
	dsn, err := postgres.ConnString(os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	files := fstest.MapFS{"99999_drop_customer_email.sql": {Data: []byte("-- +goose Up\nALTER TABLE customers DROP COLUMN email;\n")}}
	err = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		files[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files)
	if err != nil {
		return err
	}
	_, err = p.Up(context.Background())
	return err
}

// The check fails when a migration drops a column the old binary reads:
// here the old binary is this tree's, and the "new" one migrates to this
// tree's schema without customers.email.
func TestCheckFailsWhenAMigrationDropsAColumnTheOldBinaryReads(t *testing.T) {
	bin, err := rig.BuildServer()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	breaking := filepath.Join(dir, "fundsource-breaking")
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", breakingEnv, self)
	if err := os.WriteFile(breaking, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "walkthrough.md"))
	if err != nil {
		t.Fatal(err)
	}
	walk, err := walkthrough.Quickstart(doc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sum, err := Check(ctx, Config{Old: bin, New: breaking, OldWalkthrough: walk, NewWalkthrough: walk,
		DBURL: pgtest.URL(t), Dir: dir, Progress: io.Discard})
	if err == nil {
		t.Fatalf("the check passed a migration that drops customers.email: %s", sum)
	}
	if !strings.Contains(err.Error(), "while the migrations ran") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("the check failed, but not for the dropped column's 500s: %v", err)
	}
	t.Logf("the check failed as it must: %.600s", err)
}

// gitRepo makes a repository in a temporary folder and returns it with a
// function that runs git in it.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com",
			"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	return dir, run
}

// commit writes files (path → content) and commits them.
func commit(t *testing.T, dir string, run func(...string) string, msg string, files map[string]string) string {
	t.Helper()
	for path, content := range files {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "-q", "-m", msg)
	return run("rev-parse", "HEAD")
}

func TestOldCommitIsTheMainLineCommitBeforeTheNewestMigration(t *testing.T) {
	ctx := context.Background()
	dir, run := gitRepo(t)
	c1 := commit(t, dir, run, "one", map[string]string{"README.md": "1", "migrations/00001_a.sql": "a"})
	c2 := commit(t, dir, run, "two", map[string]string{"migrations/00002_b.sql": "b"})
	commit(t, dir, run, "three", map[string]string{"README.md": "3", "migrations/embed.go": "package migrations"}) // no migration
	if b, err := OldCommit(ctx, dir, io.Discard); err != nil || b != (Base{Migration: c2, Commit: c1}) {
		t.Fatalf("OldCommit = %+v, %v; want the migration %s and the commit %s", b, err, c2, c1)
	}
	if err := os.WriteFile(filepath.Join(dir, "migrations", "embed.go"), []byte("package migrations // changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := OldCommit(ctx, dir, io.Discard); err != nil || b != (Base{Migration: c2, Commit: c1}) {
		t.Fatalf("with the package's Go file changed OldCommit = %+v, %v; want the migration %s and the commit %s", b, err, c2, c1)
	}
	run("checkout", "-q", "--", "migrations/embed.go")

	// A branch merged into main: the commit before is main's, the merge's
	// first parent, not the branch's.
	run("checkout", "-q", "-b", "side")
	commit(t, dir, run, "side migration", map[string]string{"migrations/00003_c.sql": "c"})
	run("checkout", "-q", "main")
	c5 := commit(t, dir, run, "main goes on", map[string]string{"README.md": "5"})
	run("merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := run("rev-parse", "HEAD")
	if b, err := OldCommit(ctx, dir, io.Discard); err != nil || b != (Base{Migration: merge, Commit: c5}) {
		t.Fatalf("after a merge OldCommit = %+v, %v; want the merge %s and its first parent %s", b, err, merge, c5)
	}

	// A migration not yet committed: the binary before it is HEAD's.
	if err := os.WriteFile(filepath.Join(dir, "migrations", "00004_d.sql"), []byte("d"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := OldCommit(ctx, dir, io.Discard); err != nil || b != (Base{Commit: merge}) {
		t.Fatalf("with an uncommitted migration OldCommit = %+v, %v; want HEAD %s", b, err, merge)
	}
}

func TestOldCommitFetchesAShallowClonesHistoryOrSaysWhy(t *testing.T) {
	ctx := context.Background()
	dir, run := gitRepo(t)
	c1 := commit(t, dir, run, "one", map[string]string{"migrations/00001_a.sql": "a"})
	c2 := commit(t, dir, run, "two", map[string]string{"migrations/00002_b.sql": "b"})
	commit(t, dir, run, "three", map[string]string{"README.md": "3"})

	clone := func() string {
		to := filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+dir, to).CombinedOutput(); err != nil {
			t.Fatalf("git clone --depth 1: %v\n%s", err, out)
		}
		return to
	}
	shallow := clone()
	if b, err := OldCommit(ctx, shallow, io.Discard); err != nil || b != (Base{Migration: c2, Commit: c1}) {
		t.Fatalf("in a shallow clone OldCommit = %+v, %v; want the migration %s and the commit %s", b, err, c2, c1)
	}

	orphan := clone()
	if out, err := exec.Command("git", "-C", orphan, "remote", "remove", "origin").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if b, err := OldCommit(ctx, orphan, io.Discard); err == nil || !strings.Contains(err.Error(), "shallow") {
		t.Fatalf("in a shallow clone without its origin OldCommit = %+v, %v; want an error naming the shallow clone", b, err)
	}
}

func TestOldCommitRefusesAHistoryWithNothingBeforeTheMigration(t *testing.T) {
	ctx := context.Background()
	dir, run := gitRepo(t)
	commit(t, dir, run, "readme", map[string]string{"README.md": "1"})
	if b, err := OldCommit(ctx, dir, io.Discard); err == nil {
		t.Fatalf("with no migration at all OldCommit = %+v", b)
	}
	dir, run = gitRepo(t)
	commit(t, dir, run, "root", map[string]string{"migrations/00001_a.sql": "a"})
	if b, err := OldCommit(ctx, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "no parent") {
		t.Fatalf("with the migration in the root commit OldCommit = %+v, %v", b, err)
	}
}

func TestLogProblemsNamesErrorLinesAnd5xxAnswers(t *testing.T) {
	clean := `provider simulator on http://127.0.0.1:1
{"level":"INFO","msg":"request","route":"/v2/customers","status":200}
{"level":"INFO","msg":"request","route":"/v2/customerz","status":404}
{"level":"WARN","msg":"webhook delivery failed"}
`
	for name, c := range map[string]struct {
		log  string
		want string
	}{
		"clean": {clean, ""},
		"error": {clean + `{"level":"ERROR","msg":"sweep failed"}` + "\n", "sweep failed"},
		"5xx":   {clean + `{"level":"INFO","msg":"request","route":"/v2/payments","status":503}` + "\n", "/v2/payments"},
		"panic": {clean + "panic: boom\n", "boom"},
	} {
		p := &process{name: "old", log: filepath.Join(t.TempDir(), "old.log")}
		if err := os.WriteFile(p.log, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		err := p.logProblems()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}
