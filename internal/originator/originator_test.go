package originator_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func ptr[T any](v T) *T { return &v }

// auditActions are scope's audit actions with their details, oldest first.
func auditActions(t *testing.T, f *fixture.Fixture, scope tenant.Scope, prefix string) []string {
	t.Helper()
	var out []string
	if err := f.SQL().Select(&out, `SELECT action || ' ' || details::text FROM audit_events
		WHERE merchant_id = $1 AND environment = $2 AND action LIKE $3 || '%' ORDER BY seq`, scope.MerchantID, scope.Env, prefix); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestANewMerchantsOriginators: sign-up gives the sandbox an active
// originator with the sandbox's limits and Same Day on; production
// activation gives production one pending review, with production's
// defaults and Same Day off. Both are named after the merchant, folded,
// and carry a placeholder company id.
func TestANewMerchantsOriginators(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m, err := f.Merchants.Create(ctx, "Zoë's Café, Ørsted & Søn", "zoe@example.com", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	sandbox := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	o, err := f.Originators.Get(ctx, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != originator.Active || o.Limits != (originator.Limits{PerEntryDebit: "10000.00", DailyDebit: "50000.00", DailyCredit: "50000.00",
		PerEntryInstantCredit: "10000.00", DailyInstantCredit: "50000.00"}) || !o.Instant ||
		!o.SameDay || o.CompanyName != "ZOE'S CAFE, ORST" || o.Environment != "sandbox" {
		t.Errorf("sandbox originator = %+v", o.Originator)
	}
	placeholder := regexp.MustCompile(`^1[0-9]{9}$`)
	if !placeholder.MatchString(o.CompanyID) {
		t.Errorf("company_id %q is not 1 and nine digits", o.CompanyID)
	}
	production := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if _, err := f.Originators.Get(ctx, production); !errs.Is(err, errs.NotFound) {
		t.Errorf("production originator before activation: %v, want not found", err)
	}
	if _, err := f.Merchants.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	p, err := f.Originators.Get(ctx, production)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != originator.PendingReview || p.Limits != (originator.Limits{PerEntryDebit: "5000.00", DailyDebit: "25000.00", DailyCredit: "25000.00",
		PerEntryInstantCredit: "10000.00", DailyInstantCredit: "50000.00"}) || p.Instant ||
		p.SameDay || !placeholder.MatchString(p.CompanyID) || p.CompanyID == o.CompanyID {
		t.Errorf("production originator = %+v", p.Originator)
	}
	if same, err := f.Payments.SameDay(ctx, production); err != nil || same {
		t.Errorf("production SameDay = %v, %v", same, err)
	}
	if same, err := f.Payments.SameDay(ctx, sandbox); err != nil || !same {
		t.Errorf("sandbox SameDay = %v, %v", same, err)
	}

	// Letters beyond Latin-1 are spelled as the ACH entries spell names,
	// in both environments.
	l, err := f.Merchants.Create(ctx, "Łódź Coffee Roasters", "lodz@example.com", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Merchants.ActivateProduction(ctx, l.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	for _, env := range []tenant.Environment{tenant.Sandbox, tenant.Production} {
		o, err := f.Originators.Get(ctx, tenant.Scope{MerchantID: l.Merchant.ID, Env: env})
		if err != nil || o.CompanyName != "LODZ COFFEE ROAS" {
			t.Errorf("%s company_name = %q (%v), want LODZ COFFEE ROAS", env, o.CompanyName, err)
		}
	}
}

// TestSetRefusesBadInputAndChangesNothing: each bad field is refused with
// invalid_request naming it, and nothing of the change is stored.
func TestSetRefusesBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	before, err := f.Originators.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		param string
		in    originator.Change
	}{
		{"a company name too long", "company_name", originator.Change{CompanyName: ptr("Acme Widgets International"), DailyDebit: ptr("1.00")}},
		{"an empty company name", "company_name", originator.Change{CompanyName: ptr("  ??  ")}},
		{"a company id of 9", "company_id", originator.Change{CompanyID: ptr("123456789")}},
		{"a company id with a dash", "company_id", originator.Change{CompanyID: ptr("12-4567890")}},
		{"a negative limit", "daily_debit", originator.Change{DailyDebit: ptr("-1.00")}},
		{"three decimals", "per_entry_debit", originator.Change{PerEntryDebit: ptr("1.001")}},
		{"an unknown rule", "rule", originator.Change{Rules: map[string]string{"first_debit": "1.00"}}},
		{"a velocity without an amount", "rule", originator.Change{Rules: map[string]string{"daily_velocity": "5"}}},
		{"a velocity of none", "rule", originator.Change{Rules: map[string]string{"daily_velocity": "0/100.00"}}},
		{"a rule amount in words", "rule", originator.Change{DailyCredit: ptr("2.00"), Rules: map[string]string{"risky_account": "five"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Originators.Set(ctx, scope, c.in, audit.Operator("test"))
			e, ok := errs.As(err)
			if !ok || e.Code != errs.InvalidRequest || e.Param != c.param {
				t.Fatalf("got %v, want invalid_request on %s", err, c.param)
			}
		})
	}
	after, err := f.Originators.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if after.Limits != before.Limits || after.CompanyName != before.CompanyName || after.CompanyID != before.CompanyID || len(after.Rules) != 0 {
		t.Errorf("after refused changes: %+v, was %+v", after.Originator, before.Originator)
	}
	if got := auditActions(t, f, scope, "originator."); len(got) != 0 {
		t.Errorf("audit events of refused changes: %v", got)
	}
}

// TestChangesAreStoredAndAudited: a change stores each field (company
// name folded, rule thresholds normalized, an empty threshold removed)
// and records originator.changed with what changed; activation and
// suspension record theirs; a change that changes nothing records none.
func TestChangesAreStoredAndAudited(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	by := audit.Operator("ops@example.com")
	o, err := f.Originators.Set(ctx, scope, originator.Change{CompanyName: ptr("Acmé Widgets"), CompanyID: ptr("1987654321"),
		PerEntryDebit: ptr("2500"), DailyDebit: ptr("20000.5"), DailyCredit: ptr("7500.00"), SameDay: ptr(false),
		PerEntryInstantCredit: ptr("300"), DailyInstantCredit: ptr("900.00"), Instant: ptr(false),
		Rules: map[string]string{"daily_velocity": "7/12000", "risky_account": "250", "first_debit_amount": "3000.00"}}, by)
	if err != nil {
		t.Fatal(err)
	}
	want := originator.Limits{PerEntryDebit: "2500.00", DailyDebit: "20000.50", DailyCredit: "7500.00",
		PerEntryInstantCredit: "300.00", DailyInstantCredit: "900.00"}
	if o.CompanyName != "ACME WIDGETS" || o.CompanyID != "1987654321" || o.Limits != want || o.SameDay || o.Instant {
		t.Errorf("after Set = %+v", o)
	}
	if _, err := f.Originators.Set(ctx, scope, originator.Change{Rules: map[string]string{"first_debit_amount": ""}}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Set(ctx, scope, originator.Change{DailyCredit: ptr("7500")}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Suspend(ctx, scope, by); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Activate(ctx, scope, by); err != nil {
		t.Fatal(err)
	}
	stored, err := f.Originators.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Rules) != 2 || stored.Rules["daily_velocity"] != "7/12000.00" || stored.Rules["risky_account"] != "250.00" ||
		stored.Limits != want || stored.Status != originator.Active || stored.Instant {
		t.Errorf("stored = %+v rules %v", stored.Originator, stored.Rules)
	}
	got := auditActions(t, f, scope, "originator.")
	wantActions := []string{
		`originator.changed {"same_day": "true -> false", "company_id": "`,
		`originator.changed {"rule.first_debit_amount": "3000.00 -> "}`,
		`originator.suspended {"to": "suspended", "from": "active"}`,
		`originator.activated {"to": "active", "from": "suspended"}`,
	}
	if len(got) != len(wantActions) {
		t.Fatalf("audit = %v, want %d events", got, len(wantActions))
	}
	for i, w := range wantActions {
		if i == 0 {
			for _, part := range []string{`"company_name": "ACME -> ACME WIDGETS"`, `"daily_debit": "50000.00 -> 20000.50"`,
				`"rule.daily_velocity": " -> 7/12000.00"`, `"per_entry_debit": "10000.00 -> 2500.00"`,
				`"instant": "true -> false"`, `"per_entry_instant_credit": "10000.00 -> 300.00"`} {
				if !regexp.MustCompile(regexp.QuoteMeta(part)).MatchString(got[0]) {
					t.Errorf("first change %s lacks %s", got[0], part)
				}
			}
			continue
		}
		if got[i] != w {
			t.Errorf("audit %d = %s, want %s", i, got[i], w)
		}
	}
}

// TestProductionActivationNeedsTheCompanyID: new originators' company ids
// are placeholders, not assigned; a production originator is not
// activated until an operator set the id (409 conflict saying so, nothing
// changed nor audited), and is once it is; changing the id again keeps it
// assigned. A sandbox originator, whose entries reach no bank, is
// reactivated without one.
func TestProductionActivationNeedsTheCompanyID(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	if _, err := f.Merchants.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	by := audit.Operator("ops@example.com")
	production := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	sandbox := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	for _, scope := range []tenant.Scope{production, sandbox} {
		if o, err := f.Originators.Get(ctx, scope); err != nil || o.CompanyIDAssigned {
			t.Errorf("%s: a new originator's company id counts as assigned: %+v, %v", scope.Env, o.Originator, err)
		}
	}
	_, err := f.Originators.Activate(ctx, production, by)
	if e, ok := errs.As(err); !ok || e.Code != errs.Conflict || !regexp.MustCompile(`--company-id`).MatchString(e.Message) {
		t.Fatalf("activation with the placeholder: %v, want conflict naming --company-id", err)
	}
	if o, _ := f.Originators.Get(ctx, production); o.Status != originator.PendingReview {
		t.Errorf("a refused activation left status %s", o.Status)
	}
	if got := auditActions(t, f, production, "originator.activated"); len(got) != 0 {
		t.Errorf("a refused activation was audited: %v", got)
	}

	o, err := f.Originators.Set(ctx, production, originator.Change{CompanyID: ptr("1987654321")}, by)
	if err != nil || !o.CompanyIDAssigned || o.CompanyID != "1987654321" {
		t.Fatalf("set company id = %+v, %v", o, err)
	}
	if o, err = f.Originators.Activate(ctx, production, by); err != nil || o.Status != originator.Active {
		t.Fatalf("activation with an assigned id = %+v, %v", o, err)
	}
	if o, err = f.Originators.Set(ctx, production, originator.Change{CompanyID: ptr("1987654322")}, by); err != nil || !o.CompanyIDAssigned {
		t.Errorf("a second change of the id = %+v, %v", o, err)
	}
	if stored, err := f.Originators.Get(ctx, production); err != nil || !stored.CompanyIDAssigned || stored.CompanyID != "1987654322" {
		t.Errorf("stored = %+v, %v", stored.Originator, err)
	}
	got := auditActions(t, f, production, "originator.changed")
	if len(got) != 2 || !regexp.MustCompile(`"company_id_assigned": "false -> true"`).MatchString(got[0]) ||
		regexp.MustCompile(`company_id_assigned`).MatchString(got[1]) {
		t.Errorf("audit = %v, want the first change to note the assignment", got)
	}

	// Setting the placeholder's own value assigns it too: the operator
	// said it is the bank's.
	sb, err := f.Originators.Get(ctx, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := f.Originators.Set(ctx, sandbox, originator.Change{CompanyID: ptr(sb.CompanyID)}, by); err != nil || !o.CompanyIDAssigned {
		t.Errorf("setting the same id = %+v, %v", o, err)
	}
	if _, err := f.Originators.Suspend(ctx, production, by); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SQL().Exec(`UPDATE originators SET company_id_assigned = false WHERE merchant_id = $1`, m.Merchant.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Suspend(ctx, sandbox, by); err != nil {
		t.Fatal(err)
	}
	if o, err := f.Originators.Activate(ctx, sandbox, by); err != nil || o.Status != originator.Active {
		t.Errorf("sandbox reactivation without an assigned id = %+v, %v", o, err)
	}
	if _, err := f.Originators.Activate(ctx, production, by); !errs.Is(err, errs.Conflict) {
		t.Errorf("production reactivation without an assigned id: %v, want conflict", err)
	}
}
