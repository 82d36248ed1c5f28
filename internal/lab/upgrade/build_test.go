package upgrade

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tinyRepo is a git repository whose one commit has a cmd/fundsource that
// builds in a moment, and that commit.
func tinyRepo(t *testing.T, say string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                 "module example.test/tiny\n\ngo 1.22\n",
		"cmd/fundsource/main.go": "package main\n\nfunc main() { println(\"" + say + "\") }\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.test"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", ".")
	run("commit", "-q", "-m", "tiny")
	return dir, run("rev-parse", "HEAD")
}

// TestBuildsOfOneCommitAtOnceBothSucceed: two builds of the same commit
// at once (two checkouts' tests on one machine) each get the whole
// binary, and a build of another commit leaves a fresh build's folder
// alone: each build unpacks into a folder of its own.
func TestBuildsOfOneCommitAtOnceBothSucceed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo, commit := tinyRepo(t, "one")
	var wg sync.WaitGroup
	bins, errs := make([]string, 3), make([]error, 3)
	for i := range bins {
		wg.Go(func() { bins[i], errs[i] = Build(context.Background(), repo, commit, io.Discard) })
	}
	wg.Wait()
	for i := range bins {
		if errs[i] != nil {
			t.Fatalf("build %d: %v", i, errs[i])
		}
		if out, err := exec.Command(bins[i]).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "one" {
			t.Fatalf("build %d's binary %s: %v %q", i, bins[i], err, out)
		}
	}
	other, otherCommit := tinyRepo(t, "two")
	if _, err := Build(context.Background(), other, otherCommit, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bins[0]); err != nil {
		t.Errorf("another commit's build removed the fresh build of %s: %v", commit, err)
	}
	// A folder older than any build still running is removed.
	old := time.Now().Add(-2 * staleBuild)
	if err := os.Chtimes(filepath.Dir(bins[0]), old, old); err != nil {
		t.Fatal(err)
	}
	third, thirdCommit := tinyRepo(t, "three")
	if _, err := Build(context.Background(), third, thirdCommit, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(bins[0])); !os.IsNotExist(err) {
		t.Errorf("the stale build folder of %s is still there: %v", commit, err)
	}
}
