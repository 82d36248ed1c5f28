package readme_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pathTemplate is an API path with at least one {parameter}, as the
// documents write them.
// A method written before it (GET /v2/…) must be one of the path's.
var pathTemplate = regexp.MustCompile(`(?:(GET|POST|PUT|PATCH|DELETE) )?(/v2/[A-Za-z0-9_./{}-]*\{[A-Za-z0-9_]+\}[A-Za-z0-9_./{}-]*)`)

// TestDocumentedPathsAreTheOpenAPIs: every /v2 path with a {parameter}
// that README.md or docs/*.md writes is a path of web/api/openapi.json,
// with the same parameter names (and, where a method is written before it,
// that operation), so a reader who looks a path up finds it.
func TestDocumentedPathsAreTheOpenAPIs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "web", "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("read openapi.json: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	found := 0
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(doc), "\n") {
			for _, m := range pathTemplate.FindAllStringSubmatch(line, -1) {
				method, p := strings.ToLower(m[1]), strings.TrimRight(m[2], ".")
				found++
				ops, ok := spec.Paths[p]
				switch {
				case !ok:
					t.Errorf("%s:%d writes %s, which openapi.json does not have%s", filepath.Base(f), i+1, p, like(p, spec.Paths))
				case method != "" && ops[method] == nil:
					t.Errorf("%s:%d writes %s, which openapi.json does not have", filepath.Base(f), i+1, m[0])
				}
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d path templates in the documents; the pattern is broken", found)
	}
}

// paramName matches a path's parameters.
var paramName = regexp.MustCompile(`\{[A-Za-z0-9_]+\}`)

// like names the OpenAPI path that p would be with other parameter names.
func like(p string, paths map[string]map[string]json.RawMessage) string {
	shape := paramName.ReplaceAllString(p, "{}")
	for q := range paths {
		if paramName.ReplaceAllString(q, "{}") == shape {
			return " (openapi.json has " + q + ")"
		}
	}
	return ""
}
