package readme_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is the module path the packages' import paths start with.
const module = "github.com/fundsource/fundsource/"

// roles reads the README's layout: each package it names, by the heading
// of its group ("the domain: …", "test infrastructure", …).
func roles(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Layout")
	if i < 0 {
		t.Fatal("README.md has no Layout section")
	}
	block := doc[i:]
	start := strings.Index(block, "```\n")
	end := strings.Index(block[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the Layout section has no package list")
	}
	out := map[string]string{}
	heading := ""
	for _, line := range strings.Split(block[start+4:start+4+end], "\n") {
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			heading = line
			continue
		}
		// A line names packages, then (after a wide gap) what they are.
		names := strings.TrimLeft(line, " ")
		if k := strings.Index(names, "   "); k >= 0 {
			names = names[:k]
		}
		for _, f := range strings.Fields(names) {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil {
				out[f] = heading
			}
		}
	}
	return out
}

// TestImportsPointDownTheLayout holds the module's imports to the
// README's rule: the shared vocabulary imports only the standard library
// and itself; the domain and the adapters never import web, app, wiring,
// dev, test infrastructure or the lab; test infrastructure and the lab
// import neither internal/app nor, outside their tests, each other (the
// chaos suite runs its bank on the test sshd).
func TestImportsPointDownTheLayout(t *testing.T) {
	role := roles(t)
	kind := func(pkg string) string {
		h := role[pkg]
		switch {
		case strings.HasPrefix(h, "shared vocabulary"):
			return "core"
		case strings.HasPrefix(h, "the domain"), strings.HasPrefix(h, "adapters"):
			return "domain"
		case strings.HasPrefix(h, "test infrastructure"):
			return "testing"
		case strings.HasPrefix(h, "the lab"):
			return "lab"
		case strings.HasPrefix(pkg, "web"), pkg == "internal/app", pkg == "internal/wiring", strings.HasPrefix(pkg, "internal/dev/"),
			strings.HasPrefix(pkg, "cmd/"):
			return "upper"
		}
		return "" // configuration, templates, static files and migrations: read by whoever needs them
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[[2]string]bool{{"internal/lab/chaos", "internal/testing/sftptest"}: true}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list line %q", line)
		}
		pkg := strings.TrimPrefix(parts[0], module)
		from := kind(pkg)
		if role[pkg] == "" {
			t.Errorf("package %s is not in the README's layout", pkg)
			continue
		}
		checked++
		for _, imp := range strings.Fields(parts[1]) {
			first, _, _ := strings.Cut(imp, "/")
			local := strings.HasPrefix(imp, module)
			to := kind(strings.TrimPrefix(imp, module))
			switch {
			case from == "core" && (local && to != "core" || !local && strings.Contains(first, ".")):
				t.Errorf("%s (shared vocabulary) imports %s: only the standard library and core", pkg, imp)
			case from == "domain" && local && (to == "upper" || to == "testing" || to == "lab"):
				t.Errorf("%s (domain or adapter) imports %s, which sits above it", pkg, imp)
			}
		}
		if from != "testing" && from != "lab" {
			continue
		}
		for _, imp := range strings.Fields(parts[1] + " " + parts[2]) {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			target := strings.TrimPrefix(imp, module)
			if target == "internal/app" {
				t.Errorf("%s imports internal/app: test infrastructure and the lab run the product as a binary or through wiring", pkg)
			}
		}
		for _, imp := range strings.Fields(parts[1]) {
			target := strings.TrimPrefix(imp, module)
			to := kind(target)
			if (from == "testing" && to == "lab" || from == "lab" && to == "testing") && !allowed[[2]string{pkg, target}] {
				t.Errorf("%s imports %s: test infrastructure and the lab do not import each other", pkg, target)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked only %d packages", checked)
	}
}
