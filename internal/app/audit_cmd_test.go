package app_test

import (
	"context"
	"errors"
	"os/user"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/app"
)

// auditMerchant makes a merchant through the operator commands, which
// leave four events in its chain, and returns its id.
func auditMerchant(t *testing.T, c *cli, email string) string {
	t.Helper()
	id := c.json("merchant", "create", "--name", "Acme", "--email", email)["merchant_id"].(string)
	c.json("merchant", "activate-production", id)
	c.json("merchant", "roll-key", id, "--env", "sandbox")
	c.json("merchant", "grant-on-demand", id, "--env", "production")
	c.json("merchant", "allow-redirect-origin", id, "--env", "sandbox", "https://shop.example")
	return id
}

func TestAuditVerifyFindsChangedRemovedAndReorderedEvents(t *testing.T) {
	c := newCLI(t)
	db, err := sqlx.Open("postgres", c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ids := map[string]string{}
	for _, name := range []string{"intact", "changed", "removed", "reordered", "truncated"} {
		ids[name] = auditMerchant(t, c, name+"@acme.example")
	}

	// Operator commands are recorded with the operating-system user and no address.
	var rows []struct {
		Action  string `db:"action"`
		Type    string `db:"actor_type"`
		ActorID string `db:"actor_id"`
		IP      string `db:"actor_ip"`
	}
	if err := db.SelectContext(ctx, &rows, `SELECT action, actor_type, actor_id, actor_ip FROM audit_events WHERE merchant_id = $1 ORDER BY seq`, ids["intact"]); err != nil {
		t.Fatal(err)
	}
	u, _ := user.Current()
	var got []string
	for _, r := range rows {
		got = append(got, r.Action)
		if r.Type != "operator" || r.IP != "" || (u != nil && r.ActorID != u.Username) {
			t.Errorf("%s: actor %s %q ip %q", r.Action, r.Type, r.ActorID, r.IP)
		}
	}
	if want := "merchant.production_activated api_key.rolled merchant.permission_changed settings.changed"; strings.Join(got, " ") != want {
		t.Errorf("actions %v, want %s", got, want)
	}

	out, stderr, err := c.run("audit", "verify")
	if err != nil || strings.Count(out, ": ok") != 5 || !strings.Contains(out, "5 chains verified") {
		t.Fatalf("verify of intact chains: %v\n%s%s", err, out, stderr)
	}

	nth := func(name string, seq int) string {
		var id string
		if err := db.GetContext(ctx, &id, `SELECT id FROM audit_events WHERE merchant_id = $1 AND seq = $2`, ids[name], seq); err != nil {
			t.Fatal(err)
		}
		return id
	}
	changed, removedNext, reordered, last := nth("changed", 2), nth("removed", 3), nth("reordered", 3), nth("truncated", 4)
	for _, q := range []string{
		`UPDATE audit_events SET actor_ip = '198.51.100.66' WHERE id = '` + changed + `'`,
		`DELETE FROM audit_events WHERE merchant_id = '` + ids["removed"] + `' AND seq = 2`,
		// Swap events 2 and 3 through a free number.
		`UPDATE audit_events SET seq = 100 WHERE merchant_id = '` + ids["reordered"] + `' AND seq = 2`,
		`UPDATE audit_events SET seq = 2 WHERE merchant_id = '` + ids["reordered"] + `' AND seq = 3`,
		`UPDATE audit_events SET seq = 3 WHERE merchant_id = '` + ids["reordered"] + `' AND seq = 100`,
		`DELETE FROM audit_events WHERE id = '` + last + `'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	for name, want := range map[string]string{
		"changed":   "BROKEN at event 2 (" + changed + "): its hash does not match",
		"removed":   "BROKEN at event 2 (" + removedNext + "): found sequence number 3",
		"reordered": "BROKEN at event 2 (" + reordered + "): its hash does not match",
		"truncated": "BROKEN at event 4: the chain ends at 3 but its head says 4",
	} {
		out, _, err := c.run("audit", "verify", "--merchant", ids[name])
		if !errors.Is(err, app.ErrAuditBroken) || errors.Is(err, app.ErrUsage) || !strings.Contains(out, ids[name]+": "+want) {
			t.Errorf("%s: err %v, output:\n%s\nwant %q", name, err, out, want)
		}
	}
	out, _, err = c.run("audit", "verify")
	if !errors.Is(err, app.ErrAuditBroken) || !strings.Contains(out, ids["intact"]+": ok") || strings.Count(out, "BROKEN") != 4 {
		t.Errorf("verify all: %v\n%s", err, out)
	}
	if out, _, err := c.run("audit", "verify", "--merchant", ids["intact"]); err != nil || !strings.Contains(out, "1 chain verified") {
		t.Errorf("verify intact: %v\n%s", err, out)
	}

	if _, _, err := c.run("audit", "verify", "--merchant", "cus_x"); !errors.Is(err, app.ErrUsage) {
		t.Errorf("bad merchant id: %v", err)
	}
	if _, _, err := c.run("audit"); !errors.Is(err, app.ErrUsage) {
		t.Errorf("no subcommand: %v", err)
	}
}
