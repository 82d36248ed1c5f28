package devrun

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/wiring"
	"golang.org/x/crypto/bcrypt"
)

// TestDemoMerchantSurvivesRollsAndRestarts: a key rolled while 'make run'
// serves (as the dashboard rolls it) is written to demo.env, and a restart
// keeps that key and the password; a key rolled where no run saw it is
// not rolled again either.
func TestDemoMerchantSurvivesRollsAndRestarts(t *testing.T) {
	cfg := fixture.Config(t)
	cfg.DataDir = t.TempDir()
	svc, err := wiring.Build(cfg, wiring.Deps{DB: pgtest.Open(t, pgtest.URL(t)), Log: fixture.Discard(), Now: wiring.Clock, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	h := svc
	ctx := context.Background()
	path := filepath.Join(cfg.DataDir, "demo.env")
	start := func() (map[string]string, string) {
		t.Helper()
		var out bytes.Buffer
		s := &run{Services: svc, io: IO{Stdout: &out, Stderr: &out, Getenv: os.Getenv}}
		if err := s.ensureDemoMerchant(ctx); err != nil {
			t.Fatal(err)
		}
		return config.ReadEnvFile(path), out.String()
	}
	signIn := func(email, password string) {
		t.Helper()
		if _, err := h.Merchants.SignIn(ctx, email, password, "192.0.2.1"); err != nil {
			t.Errorf("sign-in with demo.env's password: %v", err)
		}
	}
	authenticates := func(key string) bool {
		_, err := h.Merchants.Authenticate(ctx, key)
		return err == nil
	}

	first, out := start()
	if !strings.Contains(out, "Demo merchant (created;") || !authenticates(first["DEMO_SECRET_KEY"]) {
		t.Fatalf("first run:\n%s", out)
	}
	scope := tenant.Scope{MerchantID: first["DEMO_MERCHANT_ID"], Env: tenant.Sandbox}
	rolled, err := h.Merchants.RollKey(ctx, scope, audit.Operator("test"))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.ReadEnvFile(path)["DEMO_SECRET_KEY"]; got != rolled {
		t.Errorf("demo.env after a roll holds %q, want the rolled key", got)
	}

	// Sourced by a shell, the file exports SK and PK, the rolled key's.
	sourced, err := exec.Command("bash", "-c", `. "$1" && bash -c 'printf "%s %s" "$SK" "$PK"'`, "bash", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := rolled + " " + first["DEMO_PUBLIC_KEY"]; string(sourced) != want || first["DEMO_PUBLIC_KEY"] == "" {
		t.Errorf("a shell that sourced demo.env exports SK and PK %q, want %q", sourced, want)
	}
	if f := config.ReadEnvFile(path); f["SK"] != rolled || f["PK"] != first["DEMO_PUBLIC_KEY"] {
		t.Errorf("demo.env's SK and PK: %v", f)
	}

	second, out := start()
	if !strings.Contains(out, "Demo merchant (reused;") || second["DEMO_SECRET_KEY"] != rolled || !strings.Contains(out, rolled) {
		t.Errorf("restart after a roll:\n%s", out)
	}
	if second["DEMO_MERCHANT_ID"] != first["DEMO_MERCHANT_ID"] || second["DEMO_PASSWORD"] != first["DEMO_PASSWORD"] {
		t.Errorf("restart changed the merchant or password: %v then %v", first, second)
	}
	if !authenticates(rolled) {
		t.Error("the rolled key stopped working after a restart")
	}
	signIn(demoEmail, first["DEMO_PASSWORD"])

	// A roll this process did not see (another process, the old file put
	// back): the restart leaves the key and the password alone.
	h.Merchants.OnKeyRolled(nil)
	elsewhere, err := h.Merchants.RollKey(ctx, scope, audit.Operator("test"))
	if err != nil {
		t.Fatal(err)
	}
	_, out = start()
	if !strings.Contains(out, "replaced outside this run") || !authenticates(elsewhere) {
		t.Errorf("restart after a roll elsewhere:\n%s", out)
	}
	signIn(demoEmail, first["DEMO_PASSWORD"])

	// A lost demo.env: a new key and password for the same merchant.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fresh, out := start()
	if fresh["DEMO_MERCHANT_ID"] != first["DEMO_MERCHANT_ID"] || !authenticates(fresh["DEMO_SECRET_KEY"]) || !strings.Contains(out, "created") {
		t.Errorf("after losing demo.env: %v\n%s", fresh, out)
	}
	signIn(demoEmail, fresh["DEMO_PASSWORD"])
}
