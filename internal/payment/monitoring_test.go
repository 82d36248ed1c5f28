package payment_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

const day = 24 * time.Hour

// account is the i-th made-up account number of a test.
func account(i int) string { return fmt.Sprintf("5%011d", i) }

// money is a payment request of amount dollars.
func money(sourceID string, d payment.Direction, amount string) payment.Input {
	return payment.Input{SourceID: sourceID, Amount: json.RawMessage(`"` + amount + `"`), Direction: d}
}

// create creates a payment and returns its status and hold reason.
func create(t *testing.T, f *fixture.Fixture, scope tenant.Scope, in payment.Input) (payment.Payment, string) {
	t.Helper()
	p, err := f.Payments.Create(ctx, scope, in)
	if err != nil {
		t.Fatalf("create %s %s: %v", in.Direction, in.Amount, err)
	}
	reason := ""
	if p.HoldReason != nil {
		reason = *p.HoldReason
	}
	stored, err := f.Payments.Get(ctx, scope, p.ID)
	if err != nil || stored.Status != p.Status {
		t.Fatalf("stored payment: %s %v, answered %s", stored.Status, err, p.Status)
	}
	return p, reason
}

// wantHold checks that a payment is held for reason, or pending for "".
func wantHold(t *testing.T, what string, p payment.Payment, reason, want string) {
	t.Helper()
	if want == "" && (p.Status != payment.Pending || reason != "") {
		t.Errorf("%s: got %s (%q), want pending", what, p.Status, reason)
	}
	if want != "" && (p.Status != payment.Held || reason != want) {
		t.Errorf("%s: got %s (%q), want held for %q", what, p.Status, reason, want)
	}
}

func alerts(t *testing.T, f *fixture.Fixture, paymentID string) []string {
	t.Helper()
	var rules []string
	if err := f.SQL().Select(&rules, `SELECT rule_id FROM fraud_alerts WHERE payment_id = $1 ORDER BY rule_id`, paymentID); err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestFirstDebitAmountRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := func(acct string) string { return f.VerifiedSource(scope, f.Customer(scope), acct).ID }

	p, r := create(t, f, scope, money(src("100000000001"), payment.Debit, "2500.00"))
	wantHold(t, "first debit at the threshold", p, r, "")
	p, r = create(t, f, scope, money(src("100000000002"), payment.Debit, "2500.01"))
	wantHold(t, "first debit a cent over", p, r, "fraud_rule:first_debit_amount")
	if got := alerts(t, f, p.ID); len(got) != 1 || got[0] != payment.RuleFirstDebitAmount {
		t.Errorf("alerts: got %v, want [first_debit_amount]", got)
	}

	second := src("100000000003")
	create(t, f, scope, money(second, payment.Debit, "1.00"))
	p, r = create(t, f, scope, money(second, payment.Debit, "2500.01"))
	wantHold(t, "second debit over the threshold", p, r, "")

	day7, day8 := src("100000000004"), src("100000000005")
	f.Clock.Advance(7 * day)
	p, r = create(t, f, scope, money(day7, payment.Debit, "2500.01"))
	wantHold(t, "first debit on day 7", p, r, "fraud_rule:first_debit_amount")
	f.Clock.Advance(day)
	p, r = create(t, f, scope, money(day8, payment.Debit, "2500.01"))
	wantHold(t, "first debit on day 8", p, r, "")
}

func TestFirstCreditAmountRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := func(acct string) string { return f.VerifiedSource(scope, f.Customer(scope), acct).ID }

	p, r := create(t, f, scope, money(src("110000000001"), payment.Credit, "2500.00"))
	wantHold(t, "first credit at the threshold", p, r, "")
	p, r = create(t, f, scope, money(src("110000000002"), payment.Credit, "2500.01"))
	wantHold(t, "first credit a cent over", p, r, "fraud_rule:first_credit_amount")
	if got := alerts(t, f, p.ID); len(got) != 1 || got[0] != payment.RuleFirstCreditAmount {
		t.Errorf("alerts: got %v, want [first_credit_amount]", got)
	}

	second := src("110000000003")
	create(t, f, scope, money(second, payment.Credit, "1.00"))
	p, r = create(t, f, scope, money(second, payment.Credit, "2500.01"))
	wantHold(t, "second credit over the threshold", p, r, "")

	// A debit is no credit: a source debited first still has its first credit judged.
	debited := src("110000000004")
	create(t, f, scope, money(debited, payment.Debit, "1.00"))
	p, r = create(t, f, scope, money(debited, payment.Credit, "2500.01"))
	wantHold(t, "first credit after a debit", p, r, "fraud_rule:first_credit_amount")

	day7, day8 := src("110000000005"), src("110000000006")
	f.Clock.Advance(7 * day)
	p, r = create(t, f, scope, money(day7, payment.Credit, "2500.01"))
	wantHold(t, "first credit on day 7", p, r, "fraud_rule:first_credit_amount")
	f.Clock.Advance(day)
	p, r = create(t, f, scope, money(day8, payment.Credit, "2500.01"))
	wantHold(t, "first credit on day 8", p, r, "")
}

func TestDailyVelocityRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	count := f.VerifiedSource(scope, f.Customer(scope), "200000000001").ID
	for i := range 5 {
		p, r := create(t, f, scope, money(count, payment.Debit, "1.00"))
		wantHold(t, "debit "+string(rune('1'+i))+" of the day", p, r, "")
	}
	p, r := create(t, f, scope, money(count, payment.Debit, "1.00"))
	wantHold(t, "sixth debit of the day", p, r, "fraud_rule:daily_velocity")

	amount := f.VerifiedSource(scope, f.Customer(scope), "200000000002").ID
	for range 4 {
		p, r := create(t, f, scope, money(amount, payment.Debit, "2500.00"))
		wantHold(t, "10,000.00 in the day", p, r, "")
	}
	p, r = create(t, f, scope, money(amount, payment.Debit, "0.01"))
	wantHold(t, "10,000.01 in the day", p, r, "fraud_rule:daily_velocity")

	// The next banking day counts afresh; a Saturday counts with Monday.
	f.Clock.Advance(day)
	p, r = create(t, f, scope, money(count, payment.Debit, "1.00"))
	wantHold(t, "first debit of the next banking day", p, r, "")
}

func TestBankingDayStart(t *testing.T) {
	et := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, mustEastern())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ at, want string }{
		{"2026-11-03 10:00", "2026-11-03 00:00"}, // Tuesday
		{"2026-11-07 10:00", "2026-11-07 00:00"}, // Saturday: Monday's banking day began Saturday
		{"2026-11-09 09:00", "2026-11-07 00:00"}, // Monday
		{"2026-11-12 09:00", "2026-11-11 00:00"}, // Thursday after Veterans Day
	} {
		if got := payment.BankingDayStart(et(c.at)); !got.Equal(et(c.want)) {
			t.Errorf("%s: got %s, want %s", c.at, got, c.want)
		}
	}
}

func mustEastern() *time.Location {
	l, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return l
}

func TestRiskyAccountRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	for i, c := range []struct {
		check, amount, want string
	}{
		{"caution", "500.00", ""},
		{"caution", "500.01", "fraud_rule:risky_account"},
		{"fail", "500.01", "fraud_rule:risky_account"},
		{"pass", "500.01", ""},
	} {
		src := f.VerifiedSource(scope, f.Customer(scope), account(i))
		if _, err := f.SQL().Exec(`UPDATE funding_sources SET check_result = $1 WHERE id = $2`, c.check, src.ID); err != nil {
			t.Fatal(err)
		}
		p, r := create(t, f, scope, money(src.ID, payment.Debit, c.amount))
		wantHold(t, c.check+" "+c.amount, p, r, c.want)
	}
}

// TestRiskyAccountReadsTheCheckAsGetAnswersIt: another merchant's debit
// of the same account, from a source removed since, comes back R03 late,
// which marks the source's kept check stale; the rule judges by the check
// GET answers (fail), at the threshold and a cent over.
func TestRiskyAccountReadsTheCheckAsGetAnswersIt(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Other")
	if _, err := f.SQL().Exec(`UPDATE originators SET rule_thresholds = $3::jsonb WHERE merchant_id = $1 AND environment = $2`,
		scope.MerchantID, scope.Env, `{"risky_account":"10.00"}`); err != nil {
		t.Fatal(err)
	}
	const acct = "600000000001"
	theirs := f.VerifiedSource(other, f.Customer(other), acct).ID
	p, err := f.Payments.Create(ctx, other, money(theirs, payment.Debit, "1.00"))
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Consequences.Remove(ctx, other, theirs); err != nil {
		t.Fatal(err)
	}
	src := f.VerifiedSource(scope, f.Customer(scope), acct).ID
	if c, err := f.Funding.Get(ctx, scope, src); err != nil || c.AccountCheck.Result == funding.CheckFail {
		t.Fatalf("check before the return: %v %v", c.AccountCheck, err)
	}
	if _, err := f.Consequences.SimulateReturn(ctx, other, p.ID, "R03"); err != nil {
		t.Fatal(err)
	}
	var kept *string
	if err := f.SQL().Get(&kept, `SELECT check_result FROM funding_sources WHERE id = $1`, src); err != nil || kept != nil {
		t.Fatalf("kept check after another merchant's R03: %v %v, want stale (NULL)", kept, err)
	}
	p, r := create(t, f, scope, money(src, payment.Debit, "10.00"))
	wantHold(t, "10.00 at the threshold, check fail", p, r, "")
	p, r = create(t, f, scope, money(src, payment.Debit, "10.01"))
	wantHold(t, "10.01 over the threshold, check fail", p, r, "fraud_rule:risky_account")
	if got := alerts(t, f, p.ID); len(got) != 1 || got[0] != payment.RuleRiskyAccount {
		t.Errorf("alerts: got %v, want [risky_account]", got)
	}
	if c, err := f.Funding.Get(ctx, scope, src); err != nil || c.AccountCheck.Result != funding.CheckFail {
		t.Errorf("GET's check: %v %v, want fail", c.AccountCheck, err)
	}
}

func TestUnverifiedCreditRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	unverified := f.Source(scope, f.Customer(scope), "300000000001").ID
	verified := f.VerifiedSource(scope, f.Customer(scope), "300000000002").ID
	p, r := create(t, f, scope, money(unverified, payment.Credit, "1000.00"))
	wantHold(t, "credit of 1,000.00 to an Unverified source", p, r, "")
	p, r = create(t, f, scope, money(unverified, payment.Credit, "1000.01"))
	wantHold(t, "credit of 1,000.01 to an Unverified source", p, r, "fraud_rule:unverified_credit")
	p, r = create(t, f, scope, money(verified, payment.Credit, "1000.01"))
	wantHold(t, "credit of 1,000.01 to a Verified source", p, r, "")
}

func TestChangedAccountRule(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	change := func(id, account string) {
		_, err := f.Funding.SimulateChange(ctx, scope, id, funding.Correction{ChangeCode: "C01",
			CorrectedData: funding.CorrectedData{AccountNumber: account}})
		if err != nil {
			t.Fatal(err)
		}
	}
	a := f.VerifiedSource(scope, f.Customer(scope), "400000000001").ID
	b := f.VerifiedSource(scope, f.Customer(scope), "400000000002").ID
	typ := f.VerifiedSource(scope, f.Customer(scope), "400000000003").ID
	change(a, "400000000011")
	change(b, "400000000012")
	if _, err := f.Funding.SimulateChange(ctx, scope, typ, funding.Correction{ChangeCode: "C05",
		CorrectedData: funding.CorrectedData{AccountType: "savings"}}); err != nil {
		t.Fatal(err)
	}
	p, r := create(t, f, scope, money(a, payment.Debit, "500.00"))
	wantHold(t, "500.00 after a change", p, r, "")
	p, r = create(t, f, scope, money(a, payment.Debit, "500.01"))
	wantHold(t, "500.01 after a change", p, r, "fraud_rule:changed_account")
	p, r = create(t, f, scope, money(typ, payment.Debit, "500.01"))
	if r == "fraud_rule:changed_account" {
		t.Errorf("a C05 (account type only) held a debit as a changed account")
	}

	f.Clock.Advance(30 * day)
	p, r = create(t, f, scope, money(b, payment.Debit, "500.01"))
	wantHold(t, "500.01 on day 30 after a change", p, r, "fraud_rule:changed_account")
	f.Clock.Advance(day)
	p, r = create(t, f, scope, money(b, payment.Debit, "500.01"))
	for _, rule := range alerts(t, f, p.ID) {
		if rule == payment.RuleChangedAccount {
			t.Errorf("500.01 on day 31 after a change: alert %s (%s %q)", rule, p.Status, r)
		}
	}
}

// TestChangedAccountRuleJudgesCredits: a credit above the threshold
// within 30 days after a NOC changed the account is held like a debit.
func TestChangedAccountRuleJudgesCredits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "410000000001").ID
	if _, err := f.Funding.SimulateChange(ctx, scope, src, funding.Correction{ChangeCode: "C01",
		CorrectedData: funding.CorrectedData{AccountNumber: "410000000011"}}); err != nil {
		t.Fatal(err)
	}
	p, r := create(t, f, scope, money(src, payment.Credit, "500.00"))
	wantHold(t, "credit of 500.00 after a change", p, r, "")
	p, r = create(t, f, scope, money(src, payment.Credit, "500.01"))
	wantHold(t, "credit of 500.01 after a change", p, r, "fraud_rule:changed_account")
	if got := alerts(t, f, p.ID); len(got) != 1 || got[0] != payment.RuleChangedAccount {
		t.Errorf("alerts: got %v, want [changed_account]", got)
	}
	f.Clock.Advance(30 * day)
	p, r = create(t, f, scope, money(src, payment.Credit, "500.00"))
	wantHold(t, "credit of 500.00 on day 30", p, r, "")
	p, r = create(t, f, scope, money(src, payment.Credit, "500.01"))
	wantHold(t, "credit of 500.01 on day 30", p, r, "fraud_rule:changed_account")
	f.Clock.Advance(day)
	p, r = create(t, f, scope, money(src, payment.Credit, "500.01"))
	wantHold(t, "credit of 500.01 on day 31", p, r, "")
}

// TestPerOriginatorThresholds: the thresholds the operator set for one
// originator judge its payments; another originator keeps the defaults.
func TestPerOriginatorThresholds(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	strict, other := f.Sandbox("Strict"), f.Sandbox("Other")
	// As the originator resource keeps them: in its row, read with the
	// payment's risk facts.
	if _, err := f.SQL().Exec(`UPDATE originators SET rule_thresholds = $3::jsonb WHERE merchant_id = $1 AND environment = $2`,
		strict.MerchantID, strict.Env, `{"first_debit_amount":"100.00","daily_velocity":"1/50000.00"}`); err != nil {
		t.Fatal(err)
	}
	p, r := create(t, f, strict, money(f.VerifiedSource(strict, f.Customer(strict), account(1)).ID, payment.Debit, "100.00"))
	wantHold(t, "100.00 at the originator's threshold", p, r, "")
	src := f.VerifiedSource(strict, f.Customer(strict), account(2)).ID
	p, r = create(t, f, strict, money(src, payment.Debit, "100.01"))
	wantHold(t, "100.01 over the originator's threshold", p, r, "fraud_rule:first_debit_amount")
	var threshold string
	if err := f.SQL().Get(&threshold, `SELECT threshold FROM fraud_alerts WHERE payment_id = $1`, p.ID); err != nil || threshold != "100.00" {
		t.Errorf("alert threshold: got %q %v, want 100.00", threshold, err)
	}
	p, r = create(t, f, strict, money(src, payment.Debit, "1.00"))
	wantHold(t, "second debit of the day at a count of 1", p, r, "fraud_rule:daily_velocity")
	p, r = create(t, f, other, money(f.VerifiedSource(other, f.Customer(other), account(3)).ID, payment.Debit, "100.01"))
	wantHold(t, "100.01 at another originator (default)", p, r, "")
}

func TestValidThreshold(t *testing.T) {
	for _, c := range []struct {
		id, v string
		ok    bool
	}{
		{"first_debit_amount", "2500.00", true},
		{"first_debit_amount", "2500.001", false},
		{"first_debit_amount", "-1", false},
		{"daily_velocity", "5/10000.00", true},
		{"daily_velocity", "0/10000.00", false},
		{"daily_velocity", "10000.00", false},
		{"no_such_rule", "1.00", false},
	} {
		if err := payment.ValidThreshold(c.id, c.v); (err == nil) != c.ok {
			t.Errorf("%s=%s: got %v, want ok %v", c.id, c.v, err, c.ok)
		}
	}
}
