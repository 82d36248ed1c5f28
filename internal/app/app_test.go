package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/app"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type cli struct {
	t   *testing.T
	env map[string]string
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, env: map[string]string{"DATABASE_URL": pgtest.URL(t), "DATA_DIR": t.TempDir()}}
}

func (c *cli) run(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := app.Run(context.Background(), args, app.IO{
		Getenv: func(k string) string { return c.env[k] },
		Stdout: &out, Stderr: &errOut,
	})
	return out.String(), errOut.String(), err
}

func (c *cli) json(args ...string) map[string]any {
	c.t.Helper()
	out, stderr, err := c.run(append(args, "--json")...)
	if err != nil {
		c.t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		c.t.Fatalf("%v: stdout is not one JSON object: %v\n%s", args, err, out)
	}
	return m
}

// principal authenticates key against the command's database.
func principal(t *testing.T, c *cli, key string) (merchant.Principal, error) {
	t.Helper()
	db, err := postgres.Open(context.Background(), c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return merchant.NewService(db.Merchants(), nil, time.Now).Authenticate(context.Background(), key)
}

func keyWorks(t *testing.T, c *cli, key string) bool {
	t.Helper()
	_, err := principal(t, c, key)
	return err == nil
}

func TestMerchantLifecycleCommands(t *testing.T) {
	c := newCLI(t)
	created := c.json("merchant", "create", "--name", "Acme Ltd", "--email", "Ops@Acme.example")
	id, _ := created["merchant_id"].(string)
	sandbox, _ := created["sandbox"].(map[string]any)
	secret, _ := sandbox["secret_key"].(string)
	if !strings.HasPrefix(id, "mer_") || !strings.HasPrefix(secret, "sk_test_") ||
		!strings.HasPrefix(sandbox["public_key"].(string), "pk_test_") {
		t.Fatalf("create = %v", created)
	}
	if pw := created["dashboard"].(map[string]any)["password"].(string); len(pw) < 12 {
		t.Errorf("generated password %q shorter than 12", pw)
	}
	if !keyWorks(t, c, secret) {
		t.Fatal("new sandbox key does not authenticate")
	}

	// Production: roll-key and grants need activation first.
	if _, _, err := c.run("merchant", "roll-key", id, "--env", "production"); err == nil {
		t.Error("roll-key on production before activation succeeded")
	}
	prod := c.json("merchant", "activate-production", id)["production"].(map[string]any)
	live := prod["secret_key"].(string)
	if !strings.HasPrefix(live, "sk_live_") || !strings.HasPrefix(prod["public_key"].(string), "pk_live_") {
		t.Fatalf("activate-production = %v", prod)
	}
	if _, _, err := c.run("merchant", "activate-production", id); err == nil {
		t.Error("second activate-production succeeded")
	}

	rolled := c.json("merchant", "roll-key", id, "--env", "sandbox")["secret_key"].(string)
	if rolled == secret || keyWorks(t, c, secret) || !keyWorks(t, c, rolled) {
		t.Errorf("after roll-key: old works = %v, new works = %v", keyWorks(t, c, secret), keyWorks(t, c, rolled))
	}

	// Flags may come before the merchant id too.
	if g := c.json("merchant", "grant-on-demand", "--env", "production", id); g["permission"] != "on_demand_funding_source" {
		t.Errorf("grant-on-demand = %v", g)
	}
	if e := c.json("merchant", "enable-third-party-verification", id, "--env", "production"); e["third_party_verification"] != true {
		t.Errorf("enable-third-party-verification = %v", e)
	}
	p, err := principal(t, c, live)
	if err != nil || !p.ThirdPartyVerification || !p.Can(merchant.PermOnDemand) || p.Scope.Env != "production" {
		t.Errorf("production key: principal %+v, err %v", p, err)
	}
	// The grant survives a roll of the production key.
	live = c.json("merchant", "roll-key", id, "--env", "production")["secret_key"].(string)
	if p, err := principal(t, c, live); err != nil || !p.Can(merchant.PermOnDemand) {
		t.Errorf("rolled production key lost its permission: %+v, %v", p, err)
	}

	// Unknown merchant: a clear error, not a crash.
	if _, _, err := c.run("merchant", "grant-on-demand", "mer_doesnotexist", "--env", "sandbox"); err == nil ||
		!strings.Contains(err.Error(), "mer_doesnotexist") {
		t.Errorf("unknown merchant: err = %v", err)
	}
	// Duplicate email.
	if _, _, err := c.run("merchant", "create", "--name", "Other", "--email", "ops@acme.example"); err == nil {
		t.Error("second merchant with the same email created")
	}
}

func TestRedirectOriginCommands(t *testing.T) {
	c := newCLI(t)
	id := c.json("merchant", "create", "--name", "Acme", "--email", "ops@acme.example")["merchant_id"].(string)
	origins := func(m map[string]any) []any { l, _ := m["redirect_origins"].([]any); return l }

	// Normalized on the way in, listed sorted, allowing twice changes nothing.
	got := c.json("merchant", "allow-redirect-origin", id, "--env", "sandbox", "HTTP://LocalHost:3000/")
	if l := origins(got); len(l) != 1 || l[0] != "http://localhost:3000" {
		t.Errorf("allow = %v", got)
	}
	c.json("merchant", "allow-redirect-origin", id, "https://shop.example:443", "--env", "sandbox")
	c.json("merchant", "allow-redirect-origin", id, "https://shop.example", "--env", "sandbox")
	if l := origins(c.json("merchant", "redirect-origins", id, "--env", "sandbox")); fmt.Sprint(l) != "[http://localhost:3000 https://shop.example]" {
		t.Errorf("list = %v", l)
	}
	out, _, err := c.run("merchant", "redirect-origins", id, "--env", "sandbox")
	if err != nil || !strings.Contains(out, "  https://shop.example\n") {
		t.Errorf("text list = %q, %v", out, err)
	}

	// Production: only after activation, and https only.
	if _, _, err := c.run("merchant", "allow-redirect-origin", id, "--env", "production", "https://shop.example"); err == nil {
		t.Error("production origin allowed before activation")
	}
	c.json("merchant", "activate-production", id)
	if _, _, err := c.run("merchant", "allow-redirect-origin", id, "--env", "production", "http://shop.example"); err == nil ||
		!strings.Contains(err.Error(), "https") {
		t.Errorf("plain http production origin: err = %v", err)
	}
	for _, bad := range []string{"https://shop.example/path", "javascript:alert(1)", "https://u@shop.example", "shop.example"} {
		if _, _, err := c.run("merchant", "allow-redirect-origin", id, "--env", "production", bad); err == nil {
			t.Errorf("origin %q allowed", bad)
		}
	}
	c.json("merchant", "allow-redirect-origin", id, "--env", "production", "https://shop.example")
	if l := origins(c.json("merchant", "redirect-origins", id, "--env", "production")); len(l) != 1 {
		t.Errorf("production list = %v", l)
	}

	// Removal is per environment.
	if l := origins(c.json("merchant", "remove-redirect-origin", id, "--env", "sandbox", "https://shop.example")); len(l) != 1 || l[0] != "http://localhost:3000" {
		t.Errorf("after remove: %v", l)
	}
	if _, _, err := c.run("merchant", "remove-redirect-origin", id, "--env", "sandbox", "https://shop.example"); err == nil {
		t.Error("removing an origin that is not allowed succeeded")
	}
	if l := origins(c.json("merchant", "redirect-origins", id, "--env", "production")); len(l) != 1 {
		t.Errorf("production list changed by a sandbox removal: %v", l)
	}
}

func TestBadArgumentsPrintUsage(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"merchant"},
		{"merchant", "create", "--name", "X"},
		{"merchant", "create", "--email", "x@example.com"},
		{"merchant", "roll-key", "mer_x"},
		{"merchant", "roll-key", "mer_x", "--env", "staging"},
		{"merchant", "activate-production"},
		{"merchant", "activate-production", "not-a-merchant-id"},
		{"merchant", "grant-on-demand", "mer_a", "mer_b", "--env", "sandbox"},
		{"merchant", "create", "--name", "X", "--email", "x@example.com", "--bogus"},
		{"merchant", "allow-redirect-origin", "mer_x", "--env", "sandbox"},
		{"merchant", "allow-redirect-origin", "--env", "sandbox", "https://shop.example"},
		{"merchant", "redirect-origins", "mer_x", "https://shop.example", "--env", "sandbox"},
	} {
		_, stderr, err := c.run(args...)
		if !errors.Is(err, app.ErrUsage) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
		if !strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: no usage message on stderr: %q", args, stderr)
		}
	}
}

func TestCreateRefusesShortPasswordAndBadEmail(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"merchant", "create", "--name", "A", "--email", "a@example.com", "--password", "short"},
		{"merchant", "create", "--name", "A", "--email", "not-an-email"},
	} {
		if _, _, err := c.run(args...); err == nil || errors.Is(err, app.ErrUsage) {
			t.Errorf("%q: err = %v, want a validation error", args, err)
		}
	}
}

func TestACHCommands(t *testing.T) {
	c := newCLI(t)
	if _, _, err := c.run("ach", "originate"); err == nil || !strings.Contains(err.Error(), "ACH_ODFI_ROUTING") {
		t.Errorf("originate without configuration: %v", err)
	}
	c.env["ACH_ODFI_ROUTING"], c.env["ACH_COMPANY_NAME"], c.env["ACH_COMPANY_ID"] = "121042882", "FUNDSOURCE", "1234567890"
	if _, _, err := c.run("ach", "originate"); err == nil || !strings.Contains(err.Error(), "ACH_OFFSET_ACCOUNT") {
		t.Errorf("originate without the offset account: %v", err)
	}
	c.env["ACH_OFFSET_ACCOUNT"] = "31337"
	c.env["ACH_OUTBOX_DIR"] = t.TempDir()
	if out := c.json("ach", "originate"); fmt.Sprint(out["files"]) != "[]" || out["outbox"] != c.env["ACH_OUTBOX_DIR"] {
		t.Errorf("originate with nothing waiting = %v", out)
	}
	empty := filepath.Join(t.TempDir(), "returns.ach")
	if err := os.WriteFile(empty, []byte("not an ACH file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.run("ach", "import-returns", empty); err == nil {
		t.Error("a file that is not ACH was imported")
	}
	for _, args := range [][]string{{"ach"}, {"ach", "send"}, {"ach", "import-returns"}, {"ach", "originate", "extra"}} {
		if _, _, err := c.run(args...); !errors.Is(err, app.ErrUsage) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	c.env["ACH_ODFI_ROUTING"] = "12345"
	if _, _, err := c.run("ach", "originate"); err == nil || !strings.Contains(err.Error(), "9-digit") {
		t.Errorf("a bad routing number: %v", err)
	}
}

func TestSetPolicyCommand(t *testing.T) {
	c := newCLI(t)
	created := c.json("merchant", "create", "--name", "Acme", "--email", "policy@acme.example")
	id, key := created["merchant_id"].(string), created["sandbox"].(map[string]any)["secret_key"].(string)
	if p, err := principal(t, c, key); err != nil || p.AccountCheck != "flag" || p.Ownership != "flag" {
		t.Fatalf("defaults: %+v, %v", p.Policies, err)
	}
	got := c.json("merchant", "set-policy", id, "--env", "sandbox", "--account-check", "block_fail")
	if got["account_check_policy"] != "block_fail" || got["ownership_policy"] != "flag" {
		t.Errorf("set-policy = %v", got)
	}
	got = c.json("merchant", "set-policy", id, "--ownership", "require_match", "--env", "sandbox")
	if got["account_check_policy"] != "block_fail" || got["ownership_policy"] != "require_match" {
		t.Errorf("set-policy keeps the other policy: %v", got)
	}
	if p, err := principal(t, c, key); err != nil || p.AccountCheck != "block_fail" || p.Ownership != "require_match" {
		t.Errorf("the key's principal: %+v, %v", p.Policies, err)
	}
	for _, bad := range [][]string{{"--account-check", "refuse"}, {"--ownership", "block_fail"}} {
		if _, _, err := c.run(append([]string{"merchant", "set-policy", id, "--env", "sandbox"}, bad...)...); err == nil {
			t.Errorf("set-policy %v succeeded", bad)
		}
	}
	if _, _, err := c.run("merchant", "set-policy", id, "--env", "production", "--account-check", "flag"); err == nil {
		t.Error("production policy set before activation")
	}
}
