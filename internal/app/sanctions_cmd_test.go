package app_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/app"
)

// sdnFile writes an sdn.csv of n entries in the Treasury's layout (12
// fields, "-0- " for empty) and returns its path and SHA-256.
func sdnFile(t *testing.T, dir string, n int) (string, string) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,\"LISTED%d, Given Middle\",individual,\"SDGT] [SYRIA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n", i, i)
	}
	b.WriteString("\x1a")
	path := filepath.Join(dir, "sdn.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(b.String()))
	return path, hex.EncodeToString(h[:])
}

func TestSanctionsStatusCommand(t *testing.T) {
	dir := t.TempDir()
	sdn, sum := sdnFile(t, dir, 1000)
	alt := filepath.Join(dir, "alt.csv")
	if err := os.WriteFile(alt, []byte("1,1,\"aka\",\"OTHER, Name\",-0- \r\n2,2,\"fka\",\"FORMER, Name\",-0- \r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, env: map[string]string{"DATA_DIR": t.TempDir(), "OFAC_SDN_FILE": sdn, "OFAC_ALT_FILE": alt}}
	st := c.json("sanctions", "status")
	if st["entries"] != 1000.0 || st["aliases"] != 2.0 || st["sdn_sha256"] != sum || st["sdn_file"] != sdn || st["alt_file"] != alt || st["loaded_at"] == nil {
		t.Errorf("status --json: %v", st)
	}
	out, _, err := c.run("sanctions", "status")
	if err != nil || !strings.Contains(out, "entries: 1000\n") || !strings.Contains(out, "aliases: 2\n") || !strings.Contains(out, "sdn_sha256: "+sum+"\n") {
		t.Errorf("status: %v\n%s", err, out)
	}

	// A file of fewer entries than the Treasury's is refused, saying why.
	short, _ := sdnFile(t, t.TempDir(), 999)
	c.env["OFAC_SDN_FILE"] = short
	if _, _, err := c.run("sanctions", "status"); err == nil || errors.Is(err, app.ErrUsage) || !strings.Contains(err.Error(), short) || !strings.Contains(err.Error(), "999 entries") {
		t.Errorf("999 entries: got %v", err)
	}
	// So is alt.csv given as sdn.csv.
	c.env["OFAC_SDN_FILE"] = alt
	if _, _, err := c.run("sanctions", "status"); err == nil || !strings.Contains(err.Error(), alt) || !strings.Contains(err.Error(), "5 fields") {
		t.Errorf("alt.csv as sdn.csv: got %v", err)
	}

	// Without a file: the embedded sample.
	c.env = map[string]string{"DATA_DIR": t.TempDir()}
	if st := c.json("sanctions", "status"); st["entries"] != 6.0 || st["sdn_file"] != "" {
		t.Errorf("sample: %v", st)
	}
	for _, args := range [][]string{{"sanctions"}, {"sanctions", "reload"}, {"sanctions", "status", "extra"}} {
		if _, stderr, err := c.run(args...); !errors.Is(err, app.ErrUsage) || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: %v, %q", args, err, stderr)
		}
	}
}

// TestOriginatorCompanyNameIsScreened: a company name on the list (the
// embedded sample) is shown as a potential match when set, and
// activation refuses it (exit 1, not a usage error), saying why.
func TestOriginatorCompanyNameIsScreened(t *testing.T) {
	c := newCLI(t)
	id := c.json("merchant", "create", "--name", "Harbor Goods", "--email", "ops@harbor.example")["merchant_id"].(string)
	c.json("merchant", "activate-production", id)
	if o := c.json("originator", "show", id, "--env", "production"); o["screening"].(map[string]any)["status"] != "clear" {
		t.Errorf("show: %v", o["screening"])
	}
	o := c.json("originator", "set", id, "--env", "production", "--company-name", "Kestrel Trading", "--company-id", "1987654321")
	sc, _ := o["screening"].(map[string]any)
	if sc["status"] != "potential_match" || sc["sdn_entry"].(map[string]any)["ent_num"] != "9000002" || sc["programs"].([]any)[0] != "SDGT" {
		t.Errorf("set: screening %v", o["screening"])
	}
	out, _, err := c.run("originator", "show", id, "--env", "production")
	if err != nil || !strings.Contains(out, `screening: potential_match of SDN entry 9000002 "KESTREL TRADING FZE" (programs SDGT`) {
		t.Errorf("show: %v\n%s", err, out)
	}
	_, _, err = c.run("originator", "activate", id, "--env", "production")
	if err == nil || errors.Is(err, app.ErrUsage) || !strings.Contains(err.Error(), "potential match") || !strings.Contains(err.Error(), "9000002") {
		t.Fatalf("activate: %v, want a refusal naming the entry", err)
	}
	c.json("originator", "set", id, "--env", "production", "--company-name", "Harbor Goods")
	if o := c.json("originator", "activate", id, "--env", "production"); o["status"] != "active" {
		t.Errorf("activate with a clear name: %v", o)
	}
}
