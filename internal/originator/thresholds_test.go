package originator_test

import (
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestTheOperatorsRuleThresholdsHoldPayments: a threshold set with
// `originator set --rule` is the one the payment service's monitoring
// applies to that originator's payments, at it and one cent over; another
// merchant keeps the default.
func TestTheOperatorsRuleThresholdsHoldPayments(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope, other := f.Sandbox("Acme"), f.Sandbox("Beta")
	if _, err := f.Originators.Set(ctx, scope, originator.Change{Rules: map[string]string{"first_debit_amount": "100.00"}},
		audit.Operator("ops@example.com")); err != nil {
		t.Fatal(err)
	}
	debit := func(s tenant.Scope, account, amount string) payment.Payment {
		t.Helper()
		src := f.VerifiedSource(s, f.Customer(s), account)
		p, err := f.Payments.Create(ctx, s, payment.Input{SourceID: src.ID, Direction: payment.Debit,
			Amount: json.RawMessage(`"` + amount + `"`)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := debit(scope, "300000000001", "100.00"); p.Status != payment.Pending {
		t.Errorf("a first debit at the operator's threshold: %s, want pending", p.Status)
	}
	p := debit(scope, "300000000002", "100.01")
	if p.Status != payment.Held || p.HoldReason == nil || *p.HoldReason != "fraud_rule:first_debit_amount" {
		t.Errorf("a first debit a cent over the operator's threshold: %s %v, want held for fraud_rule:first_debit_amount", p.Status, p.HoldReason)
	}
	if p := debit(other, "300000000003", "100.01"); p.Status != payment.Pending {
		t.Errorf("another merchant's first debit under the default threshold: %s, want pending", p.Status)
	}
}

// TestFirstCreditAmountThreshold: first_credit_amount takes the operator's
// threshold like the other rules, and the monitoring report shows it.
func TestFirstCreditAmountThreshold(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	if _, err := f.Originators.Set(ctx, scope, originator.Change{Rules: map[string]string{"first_credit_amount": "50"}},
		audit.Operator("ops@example.com")); err != nil {
		t.Fatal(err)
	}
	credit := func(account, amount string) payment.Payment {
		t.Helper()
		src := f.VerifiedSource(scope, f.Customer(scope), account)
		p, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src.ID, Direction: payment.Credit,
			Amount: json.RawMessage(`"` + amount + `"`)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := credit("310000000001", "50.00"); p.Status != payment.Pending {
		t.Errorf("a first credit at the operator's threshold: %s, want pending", p.Status)
	}
	p := credit("310000000002", "50.01")
	if p.Status != payment.Held || p.HoldReason == nil || *p.HoldReason != "fraud_rule:first_credit_amount" {
		t.Errorf("a first credit a cent over the operator's threshold: %s %v, want held for fraud_rule:first_credit_amount", p.Status, p.HoldReason)
	}
	m, err := f.Payments.Monitoring(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	shown := ""
	for _, r := range m.Rules {
		if r.ID == payment.RuleFirstCreditAmount {
			shown = r.Threshold
		}
	}
	if shown != "50.00" {
		t.Errorf("monitoring's first_credit_amount threshold: %q, want 50.00", shown)
	}
}
