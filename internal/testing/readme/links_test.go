package readme_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, seen from this package's folder.
var root = filepath.Join("..", "..", "..")

var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	slugDrop   = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// prose is a Markdown file without its fenced blocks and inline code,
// where a link is a link.
func prose(doc string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(inlineCode.ReplaceAllString(line, ""))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(prose(doc), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out[strings.ReplaceAll(slugDrop.ReplaceAllString(title, ""), " ", "-")] = true
	}
	return out
}

// TestEveryRelativeLinkResolves: every relative link and image in
// README.md and docs/*.md names a file that exists and, with a #fragment,
// a heading of that file.
func TestEveryRelativeLinkResolves(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 6 {
		t.Fatalf("README.md and docs/*.md: found only %v", files)
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			checked++
			doc, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s links to %s: %v", file, target, err)
				continue
			}
			if frag != "" && !anchors(string(doc))[frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", file, target, dest, frag)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d relative links; the pattern no longer finds them", checked)
	}
}

// TestLayoutNamesEveryPackage: the README's layout section names every
// package of the module (each folder with a .go file, as go list ./...
// lists them) and no package that does not exist.
func TestLayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Layout")
	if i < 0 {
		t.Fatal("README.md has no Layout section")
	}
	section := doc[i+len("## Layout"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	named := map[string]bool{}
	for _, f := range strings.Fields(section) {
		named[f] = true
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("found only %d packages", len(pkgs))
	}
	for p := range pkgs {
		if !named[p] {
			t.Errorf("the README's layout does not name package %s", p)
		}
	}
	for f := range named {
		if (strings.HasPrefix(f, "internal/") || strings.HasPrefix(f, "cmd/") || strings.HasPrefix(f, "web/")) && !pkgs[f] {
			t.Errorf("the README's layout names %s, which is no package", f)
		}
	}
}
