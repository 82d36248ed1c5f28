package app_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/wiring"
)

// heldPayments makes, on the command's database, a customer whose name
// the sample list holds and two credits to its source, held for sanctions
// screening; it returns the customer and the payments.
func heldPayments(t *testing.T, c *cli, merchantID string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := config.Load(func(k string) string { return c.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s, err := wiring.Build(cfg, wiring.Deps{DB: db, Log: fixture.Discard(), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: merchantID, Env: tenant.Sandbox}
	cu, err := s.Customers.Create(ctx, scope, customer.Input{FirstName: "Mirela", LastName: "Drakovic", Email: "m@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: cu.ID, RoutingNumber: fixture.RoutingNumber, AccountNumber: "123456789"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		p, err := s.Payments.Create(ctx, scope, payment.Input{SourceID: src.ID, Amount: json.RawMessage(`"5.00"`), Direction: payment.Credit})
		if err != nil || p.Status != payment.Held {
			t.Fatalf("payment: %s, %v; want held", p.Status, err)
		}
		ids = append(ids, p.ID)
	}
	return cu.ID, ids
}

func TestReviewCommands(t *testing.T) {
	c := newCLI(t)
	id := c.json("merchant", "create", "--name", "Acme", "--email", "acme@example.com")["merchant_id"].(string)
	customerID, held := heldPayments(t, c, id)

	list := c.json("review", "list")
	if got, _ := list["held_payments"].([]any); len(got) != 2 {
		t.Fatalf("review list: got %v, want 2 held payments", list)
	}
	if got := c.json("review", "reject", held[0], "--note", "fake customer"); got["status"] != "canceled" || got["cancel_reason"] != "rejected_by_review" {
		t.Errorf("review reject: got %v", got)
	}
	if _, _, err := c.run("review", "release", held[0]); err == nil {
		t.Errorf("release of a rejected payment succeeded")
	}
	cleared := c.json("review", "clear-screening", customerID, "--note", "date of birth differs")
	if rel, _ := cleared["released_payments"].([]any); len(rel) != 1 || rel[0] != held[1] {
		t.Errorf("clear-screening: got %v, want %s released", cleared, held[1])
	}
	if _, _, err := c.run("review", "clear-screening", customerID); err == nil {
		t.Errorf("clear-screening without --note succeeded")
	}
	r := c.json("review", "attest", "--year", "2026", "--by", "Risk Officer", "--note", "thresholds reviewed")
	if r["year"] != float64(2026) || r["reviewed_by"] != "Risk Officer" {
		t.Errorf("attest: got %v", r)
	}
	if _, _, err := c.run("review", "attest", "--year", "2026"); err == nil {
		t.Errorf("attest without --by succeeded")
	}
	if _, _, err := c.run("review", "bogus"); err == nil {
		t.Errorf("an unknown subcommand succeeded")
	}

	db, err := sqlx.Open("postgres", c.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var actions []string
	if err := db.Select(&actions, `SELECT action FROM audit_events WHERE merchant_id = $1 AND actor_type = 'operator'
		AND action IN ('payment.rejected', 'customer.screening_cleared') ORDER BY seq`, id); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 2 {
		t.Errorf("audited review actions: got %v, want payment.rejected and customer.screening_cleared", actions)
	}
}
