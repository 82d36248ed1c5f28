package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/app"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
)

// verifyJSON runs audit verify --json and returns its result and error.
func verifyJSON(t *testing.T, c *cli, args ...string) (map[string]any, error) {
	t.Helper()
	out, stderr, err := c.run(append([]string{"audit", "verify", "--json"}, args...)...)
	var m map[string]any
	if jerr := json.Unmarshal([]byte(out), &m); jerr != nil {
		t.Fatalf("audit verify --json: %v (%v)\n%s%s", jerr, err, out, stderr)
	}
	return m, err
}

// firstBreak is the break of the only chain in a verify --json result.
func firstBreak(m map[string]any) map[string]any {
	chains, _ := m["chains"].([]any)
	if len(chains) != 1 {
		return nil
	}
	b, _ := chains[0].(map[string]any)["break"].(map[string]any)
	return b
}

// TestAuditVerifyFindsForgeriesByADatabaseWriter: a script with write
// access to the database but not AUDIT_KEY (1) changes an event's IP and
// re-hashes the rest of the chain and its head the old way, (2) deletes
// the newest event and moves the head back, (3) deletes a merchant's whole
// log, head and all. Against the key and the checkpoint file written by
// the service, audit verify reports each (exit 1, the first bad event,
// --json), and the untouched chain is still ok.
func TestAuditVerifyFindsForgeriesByADatabaseWriter(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := sqlx.Open("postgres", c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := map[string]string{}
	for _, name := range []string{"clean", "rehashed", "newest", "wholelog"} {
		ids[name] = auditMerchant(t, c, name+"@acme.example")
	}

	// The service's checkpoint job, as serve runs it every minute.
	cfg, err := config.Load(func(k string) string { return c.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	pg, err := postgres.Open(ctx, c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	cp := audit.NewService(pg.Audit(), cfg.AuditKey).Checkpointer(cfg.AuditCheckpointFile, time.Now)
	if n, err := cp.Write(ctx); err != nil || n != 4 {
		t.Fatalf("checkpoints: %d, %v; want 4", n, err)
	}
	if n, err := cp.Write(ctx); err != nil || n != 0 {
		t.Fatalf("unchanged heads written again: %d, %v", n, err)
	}
	if m, err := verifyJSON(t, c); err != nil || m["verified"] != 4.0 || m["broken"] != 0.0 {
		t.Fatalf("before the forgeries: %v %v", m, err)
	}

	// (1) Change event 2's IP and re-hash events 2 to 4 and the head
	// without the key: plain SHA-256, as unkeyed events.
	evs, err := pg.Audit().AuditChain(ctx, ids["rehashed"], 0, 10)
	if err != nil || len(evs) != 4 || evs[0].Version != audit.Keyed {
		t.Fatalf("chain: %v %v", evs, err)
	}
	prev := evs[0].Hash
	for _, e := range evs[1:] {
		e.Version = audit.Unkeyed
		if e.Seq == 2 {
			e.Actor.IP = "198.51.100.66"
		}
		e.Hash = audit.Link(nil, prev, e)
		prev = e.Hash
		if _, err := db.ExecContext(ctx, `UPDATE audit_events SET actor_ip = $1, version = 1, hash = $2 WHERE id = $3`, e.Actor.IP, e.Hash, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	// (2) Delete the newest event and move the head back to event 3.
	// (3) Delete the whole log.
	for _, q := range []string{
		`UPDATE audit_heads SET hash = '\x` + fmt.Sprintf("%x", prev) + `' WHERE merchant_id = '` + ids["rehashed"] + `'`,
		`DELETE FROM audit_events WHERE merchant_id = '` + ids["newest"] + `' AND seq = 4`,
		`UPDATE audit_heads SET seq = 3, hash = (SELECT hash FROM audit_events WHERE merchant_id = '` + ids["newest"] + `' AND seq = 3) WHERE merchant_id = '` + ids["newest"] + `'`,
		`DELETE FROM audit_events WHERE merchant_id = '` + ids["wholelog"] + `'`,
		`DELETE FROM audit_heads WHERE merchant_id = '` + ids["wholelog"] + `'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	for name, want := range map[string]struct {
		seq     float64
		eventID string
		says    string
	}{
		"rehashed": {2, evs[1].ID, "re-hashed without the key"},
		"newest":   {4, "", "the chain ends at 3 but the checkpoint of"},
		"wholelog": {1, "", "the merchant's log is gone but the checkpoint of"},
	} {
		m, err := verifyJSON(t, c, "--merchant", ids[name])
		b := firstBreak(m)
		if !errors.Is(err, app.ErrAuditBroken) || b == nil || b["seq"] != want.seq || (want.eventID != "" && b["event_id"] != want.eventID) ||
			!strings.Contains(fmt.Sprint(b["reason"]), want.says) {
			t.Errorf("%s: %v, %v; want a break at %v saying %q", name, err, m, want.seq, want.says)
		}
	}
	// Every merchant: the deleted log is found through the checkpoints.
	m, err := verifyJSON(t, c)
	if !errors.Is(err, app.ErrAuditBroken) || m["verified"] != 1.0 || m["broken"] != 3.0 {
		t.Errorf("verify all: %v %v", err, m)
	}
	out, _, err := c.run("audit", "verify")
	if !errors.Is(err, app.ErrAuditBroken) || !strings.Contains(out, ids["clean"]+": ok") || !strings.Contains(out, ids["wholelog"]+": BROKEN at event 1") {
		t.Errorf("verify all, text: %v\n%s", err, out)
	}
}

// TestAuditConcurrentWritersStayLinear: writers racing on one merchant's
// chain still make one line of keyed events that verifies.
func TestAuditConcurrentWritersStayLinear(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	id := auditMerchant(t, c, "race@acme.example")
	cfg, err := config.Load(func(k string) string { return c.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	pg, err := postgres.Open(ctx, c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	pg.SetAuditKey(cfg.AuditKey)
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			errc <- pg.Audit().RecordAudit(ctx, audit.Account(id, audit.SettingsChanged, audit.Operator("race"), map[string]string{"n": fmt.Sprint(i)}))
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := verifyJSON(t, c, "--merchant", id)
	if err != nil || m["verified"] != 1.0 {
		t.Fatalf("after racing writers: %v %v", err, m)
	}
	evs, err := pg.Audit().AuditChain(ctx, id, 0, 100)
	if err != nil || len(evs) != 20 || evs[19].Seq != 20 || evs[19].Version != audit.Keyed {
		t.Fatalf("chain of %d events, %v", len(evs), err)
	}
}

// TestEveryOperatorCommandTakesJSON: each operator command prints one
// JSON object with --json (the ach commands' are tested with their
// configuration in TestACHCommands).
func TestEveryOperatorCommandTakesJSON(t *testing.T) {
	c := newCLI(t)
	id := c.json("merchant", "create", "--name", "Acme", "--email", "json@acme.example")["merchant_id"].(string)
	for _, args := range [][]string{
		{"migrate"},
		{"merchant", "activate-production", id},
		{"merchant", "roll-key", id, "--env", "sandbox"},
		{"merchant", "grant-on-demand", id, "--env", "production"},
		{"merchant", "enable-third-party-verification", id, "--env", "sandbox"},
		{"merchant", "allow-redirect-origin", id, "--env", "sandbox", "https://shop.example"},
		{"merchant", "redirect-origins", id, "--env", "sandbox"},
		{"merchant", "remove-redirect-origin", id, "--env", "sandbox", "https://shop.example"},
		{"merchant", "set-policy", id, "--env", "sandbox", "--account-check", "flag"},
		{"audit", "verify"},
		{"audit", "verify", "--merchant", id},
	} {
		if m := c.json(args...); len(m) == 0 {
			t.Errorf("%v --json: empty object", args)
		}
	}
	if _, _, err := c.run("migrate", "extra"); !errors.Is(err, app.ErrUsage) {
		t.Errorf("migrate extra: %v", err)
	}
}
