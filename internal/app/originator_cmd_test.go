package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/app"
)

// TestOriginatorCommands: an operator shows, changes, activates and
// suspends a merchant environment's originator; each change is in the
// audit log under the operator; bad arguments exit as usage errors and
// bad values change nothing.
func TestOriginatorCommands(t *testing.T) {
	c := newCLI(t)
	id := c.json("merchant", "create", "--name", "Acme Widgets", "--email", "ops@acme.example")["merchant_id"].(string)
	c.json("merchant", "activate-production", id)

	o := c.json("originator", "show", id, "--env", "production")
	if o["status"] != "pending_review" || o["company_name"] != "ACME WIDGETS" || o["same_day"] != false || o["merchant_id"] != id {
		t.Errorf("show = %v", o)
	}
	if o["company_id_assigned"] != false || o["default_purpose"] != "other" {
		t.Errorf("show before set: company_id_assigned = %v, want false", o["company_id_assigned"])
	}
	if _, _, err := c.run("originator", "activate", id, "--env", "production"); err == nil || errors.Is(err, app.ErrUsage) ||
		!strings.Contains(err.Error(), "--company-id") {
		t.Errorf("activate with the placeholder company id: %v, want a refusal naming --company-id", err)
	}
	o = c.json("originator", "set", id, "--env", "production", "--company-name", "Acme", "--company-id", "1987654321",
		"--per-entry-debit", "2500.00", "--daily-debit", "10000", "--daily-credit", "5000.00", "--same-day", "on", "--default-purpose", "goods",
		"--rule", "daily_velocity=5/10000.00", "--rule", "risky_account=750")
	limits, _ := o["limits"].(map[string]any)
	rules, _ := o["rules"].(map[string]any)
	if o["company_name"] != "ACME" || o["company_id"] != "1987654321" || o["company_id_assigned"] != true || o["same_day"] != true ||
		o["default_purpose"] != "goods" ||
		limits["per_entry_debit"] != "2500.00" || limits["daily_debit"] != "10000.00" || limits["daily_credit"] != "5000.00" ||
		rules["daily_velocity"] != "5/10000.00" || rules["risky_account"] != "750.00" {
		t.Errorf("set = %v", o)
	}
	if o["instant"] != false {
		t.Errorf("production instant before set = %v, want false", o["instant"])
	}
	o = c.json("originator", "set", id, "--env", "production", "--instant", "on", "--per-entry-instant-credit", "750",
		"--daily-instant-credit", "3000.00")
	limits, _ = o["limits"].(map[string]any)
	if o["instant"] != true || limits["per_entry_instant_credit"] != "750.00" || limits["daily_instant_credit"] != "3000.00" {
		t.Errorf("set instant = %v", o)
	}
	if o = c.json("originator", "activate", id, "--env", "production"); o["status"] != "active" {
		t.Errorf("activate = %v", o)
	}
	out, _, err := c.run("originator", "suspend", id, "--env", "production")
	if err != nil || !strings.Contains(out, "instant: true") || !strings.Contains(out, "per_entry_instant_credit: 750.00") {
		t.Errorf("suspend text = %q, %v", out, err)
	}
	if err != nil || !strings.Contains(out, "status: suspended") || !strings.Contains(out, "company_id_assigned: true") || !strings.Contains(out, "default_purpose: goods") || !strings.Contains(out, "rule daily_velocity: 5/10000.00") {
		t.Errorf("suspend = %q, %v", out, err)
	}

	for _, args := range [][]string{
		{"originator", "set", id, "--env", "production"},
		{"originator", "set", id, "--env", "production", "--same-day", "yes"},
		{"originator", "set", id, "--env", "production", "--instant", "yes"},
		{"originator", "show", id},
		{"originator", "show", "acme", "--env", "sandbox"},
		{"originator", "explode", id, "--env", "sandbox"},
		{"originator", "set", id, "--env", "sandbox", "--rule", "no-equals-sign"},
	} {
		if _, _, err := c.run(args...); !errors.Is(err, app.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, _, err := c.run("originator", "set", id, "--env", "production", "--company-id", "12345", "--daily-debit", "1.00"); err == nil ||
		errors.Is(err, app.ErrUsage) {
		t.Errorf("a bad company id: %v, want a refusal", err)
	}
	if _, _, err := c.run("originator", "set", id, "--env", "production", "--default-purpose", "tips", "--daily-debit", "1.00"); err == nil ||
		errors.Is(err, app.ErrUsage) || !strings.Contains(err.Error(), "default_purpose") {
		t.Errorf("a bad default purpose: %v, want a refusal naming default_purpose", err)
	}
	if o = c.json("originator", "show", id, "--env", "production"); o["company_id"] != "1987654321" || o["limits"].(map[string]any)["daily_debit"] != "10000.00" {
		t.Errorf("a refused set changed the originator: %v", o)
	}

	db, err := sqlx.Open("postgres", c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var actions []string
	if err := db.Select(&actions, `SELECT action FROM audit_events WHERE merchant_id = $1 AND action LIKE 'originator.%'
		AND environment = 'production' AND actor_type = 'operator' ORDER BY seq`, id); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actions, " "); got != "originator.changed originator.changed originator.activated originator.suspended" {
		t.Errorf("audit = %s", got)
	}
}
