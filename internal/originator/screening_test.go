package originator_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestCompanyNamesAreScreened against the embedded sample list: a
// pending originator may take a listed name (the audit notes the match)
// but is not activated with it; an active one does not take it; a name
// off the list activates.
func TestCompanyNamesAreScreened(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	op := audit.Operator("test")
	m := f.Merchant("Harbor Goods")
	if _, err := f.Merchants.ActivateProduction(ctx, m.Merchant.ID, op); err != nil {
		t.Fatal(err)
	}
	production := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}

	// The bank's company id is set with it, so the name is what activation weighs.
	o, err := f.Originators.Set(ctx, production, originator.Change{CompanyName: ptr("Kestrel Trading"), CompanyID: ptr("1987654321")}, op)
	if err != nil || o.CompanyName != "KESTREL TRADING" {
		t.Fatalf("set a listed name on a pending originator: %+v, %v", o, err)
	}
	if sc := f.Originators.Screen(o.CompanyName); sc.Status != sanctions.PotentialMatch || sc.SDNEntry.Num != "9000002" {
		t.Errorf("screening of %q: %+v", o.CompanyName, sc)
	}
	if got := auditActions(t, f, production, audit.OriginatorChanged); len(got) != 1 || !strings.Contains(got[0], "potential_match of SDN entry 9000002") {
		t.Errorf("audit: %q", got)
	}
	_, err = f.Originators.Activate(ctx, production, op)
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "9000002") || !strings.Contains(err.Error(), "KESTREL TRADING FZE") {
		t.Fatalf("activate with a listed name: %v, want a conflict naming the entry", err)
	}
	if v, _ := f.Originators.Get(ctx, production); v.Status != originator.PendingReview {
		t.Errorf("status after the refusal: %s", v.Status)
	}

	// A person's name as the company name (a sole proprietor's).
	if _, err := f.Originators.Set(ctx, production, originator.Change{CompanyName: ptr("Mirela Drakovic")}, op); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Activate(ctx, production, op); !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "9000001") {
		t.Fatalf("activate under a listed person's name: %v", err)
	}

	if _, err := f.Originators.Set(ctx, production, originator.Change{CompanyName: ptr("Harbor Goods")}, op); err != nil {
		t.Fatal(err)
	}
	if o, err := f.Originators.Activate(ctx, production, op); err != nil || o.Status != originator.Active {
		t.Fatalf("activate with a clear name: %+v, %v", o, err)
	}
	// An active originator does not take a listed name; its name stays.
	_, err = f.Originators.Set(ctx, production, originator.Change{CompanyName: ptr("Orinoco Blueship")}, op)
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "9000004") {
		t.Fatalf("a listed name on an active originator: %v", err)
	}
	if v, _ := f.Originators.Get(ctx, production); v.CompanyName != "HARBOR GOODS" || v.Status != originator.Active {
		t.Errorf("after the refusal: %s %s", v.CompanyName, v.Status)
	}
	// Names that only share a word with listed ones are clear.
	for _, name := range []string{"Kestrel Bakery", "Mirela Jones", "Blue Shipping"} {
		if _, err := f.Originators.Set(ctx, production, originator.Change{CompanyName: ptr(name)}, op); err != nil {
			t.Errorf("%q on an active originator: %v", name, err)
		}
	}
}
