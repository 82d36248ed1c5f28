package postgres_test

import (
	"context"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/migrations"
)

// purposeMigration is the version of the migration that adds purposes
// and company_id_assigned, found by its name.
func purposeMigration(t *testing.T) int64 {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*_purpose_and_company_id.sql")
	if err != nil || len(names) != 1 {
		t.Fatalf("the purpose migration: %v, %v", names, err)
	}
	v, err := strconv.ParseInt(strings.SplitN(names[0], "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPurposeMigrationUpgradesOriginators runs the purpose migration on a database
// from before it: the originators that exist get default_purpose goods,
// and their company ids count as assigned only where the audit log holds
// an operator's change of the id; payments and subscriptions that exist
// are for goods; an originator created afterwards defaults to other, with
// its placeholder id not assigned.
func TestPurposeMigrationUpgradesOriginators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixture.New(t)
	set := f.Merchant("Set Id")
	placeholder := f.Merchant("Placeholder")
	src := f.VerifiedSource(tenant.Scope{MerchantID: set.Merchant.ID, Env: tenant.Sandbox},
		f.Customer(tenant.Scope{MerchantID: set.Merchant.ID, Env: tenant.Sandbox}), "700000000001")
	for _, m := range []string{set.Merchant.ID, placeholder.Merchant.ID} {
		if _, err := f.Merchants.ActivateProduction(ctx, m, audit.Operator("ops")); err != nil {
			t.Fatal(err)
		}
	}
	setScope := tenant.Scope{MerchantID: set.Merchant.ID, Env: tenant.Production}
	id := "1987654321"
	if _, err := f.Originators.Set(ctx, setScope, originator.Change{CompanyID: &id}, audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}
	// Only the company name changed for the other: not its id.
	name := "PLACEHOLDER CO"
	if _, err := f.Originators.Set(ctx, tenant.Scope{MerchantID: placeholder.Merchant.ID, Env: tenant.Production},
		originator.Change{CompanyName: &name}, audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}
	other := string(payment.PurposeOther)
	if _, err := f.Payments.Create(ctx, src.Scope, payment.Input{SourceID: src.ID, Amount: []byte(`"1.00"`), Direction: payment.Credit,
		Purpose: &other}); err != nil {
		t.Fatal(err)
	}

	p, err := goose.NewProvider(goose.DialectPostgres, f.SQL().DB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	version := purposeMigration(t)
	if _, err := p.DownTo(ctx, version-1); err != nil {
		t.Fatalf("down to %d: %v", version-1, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}

	type row struct {
		Merchant string `db:"merchant_id"`
		Env      string `db:"environment"`
		Purpose  string `db:"default_purpose"`
		Assigned bool   `db:"company_id_assigned"`
	}
	var rows []row
	if err := f.SQL().Select(&rows, `SELECT merchant_id, environment, default_purpose, company_id_assigned FROM originators`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d originators, want 4", len(rows))
	}
	for _, r := range rows {
		assigned := r.Merchant == set.Merchant.ID && r.Env == "production"
		if r.Purpose != "goods" || r.Assigned != assigned {
			t.Errorf("%s/%s after the upgrade: default_purpose %s, company_id_assigned %t; want goods, %t",
				r.Merchant, r.Env, r.Purpose, r.Assigned, assigned)
		}
	}
	var purposes []string
	if err := f.SQL().Select(&purposes, `SELECT purpose FROM payments`); err != nil || len(purposes) != 1 || purposes[0] != "goods" {
		t.Errorf("payments' purposes after the upgrade = %v, %v; want [goods]", purposes, err)
	}

	later := f.Merchant("Later")
	o, err := f.Originators.Get(ctx, tenant.Scope{MerchantID: later.Merchant.ID, Env: tenant.Sandbox})
	if err != nil || o.DefaultPurpose != payment.PurposeOther || o.CompanyIDAssigned {
		t.Errorf("an originator created after the upgrade = %q assigned %t, %v; want other, false", o.DefaultPurpose, o.CompanyIDAssigned, err)
	}
}
