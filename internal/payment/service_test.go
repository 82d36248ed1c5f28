package payment_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func pay(sourceID string, d payment.Direction) payment.Input {
	return payment.Input{SourceID: sourceID, Amount: json.RawMessage(`"12.34"`), Direction: d}
}

func TestCreateAppliesTheSourceRules(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	unverified := f.Source(scope, f.Customer(scope), "111122223333").ID
	verified := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	removed := f.VerifiedSource(scope, f.Customer(scope), "777788889999").ID
	if _, err := f.Consequences.Remove(ctx, scope, removed); err != nil {
		t.Fatal(err)
	}
	other := f.Sandbox("Other")
	for _, c := range []struct {
		name   string
		scope  tenant.Scope
		source string
		d      payment.Direction
		want   errs.Code
	}{
		{"debit of a Verified source", scope, verified, payment.Debit, ""},
		{"credit to a Verified source", scope, verified, payment.Credit, ""},
		{"credit to an Unverified source", scope, unverified, payment.Credit, ""},
		{"debit of an Unverified source", scope, unverified, payment.Debit, errs.DebitNotAllowed},
		{"debit of a removed source", scope, removed, payment.Debit, errs.FundingSourceRemoved},
		{"credit to a removed source", scope, removed, payment.Credit, errs.FundingSourceRemoved},
		{"unknown source", scope, "fs_unknown", payment.Credit, errs.FundingSourceNotFound},
		{"another merchant's source", other, verified, payment.Debit, errs.FundingSourceNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.Payments.Create(ctx, c.scope, pay(c.source, c.d))
			if got := errs.CodeOf(err); got != c.want || (err != nil && got == "") {
				t.Fatalf("got %v, want code %q", err, c.want)
			}
			if e, ok := errs.As(err); ok && e.Param != "funding_source_id" {
				t.Errorf("param = %q, want funding_source_id", e.Param)
			}
			if err == nil && (p.Status != payment.Pending || p.Amount != "12.34") {
				t.Errorf("payment = %s %s, want pending 12.34", p.Status, p.Amount)
			}
		})
	}
}

func TestCancelOnlyAPendingPayment(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	p, err := f.Payments.Create(ctx, scope, pay(src, payment.Debit))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // canceling a canceled payment returns it as it is
		got, err := f.Payments.Cancel(ctx, scope, p.ID)
		if err != nil || got.Status != payment.Voided {
			t.Fatalf("cancel = %s, %v; want %s", got.Status, err, payment.Voided)
		}
	}
	settled, err := f.Payments.Create(ctx, scope, pay(src, payment.Credit))
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.Payments.Cancel(ctx, scope, settled.ID)
	if !errs.Is(err, errs.Conflict) {
		t.Errorf("cancel of a processed payment: got %v, want conflict", err)
	}
	_, err = f.Payments.Cancel(ctx, scope, "pay_unknown")
	if !errs.Is(err, errs.PaymentNotFound) {
		t.Errorf("cancel of an unknown payment: got %v, want payment_not_found", err)
	}
}

func TestSimulatedReturnRules(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	p, err := f.Payments.Create(ctx, scope, pay(src, payment.Debit))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	production := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	for _, c := range []struct {
		name  string
		scope tenant.Scope
		id    string
		code  string
		want  errs.Code
	}{
		{"production scope", production, p.ID, "R01", errs.PermissionDenied},
		{"malformed code", scope, p.ID, "X01", errs.InvalidRequest},
		{"unknown payment", scope, "pay_unknown", "R01", errs.PaymentNotFound},
		{"pending payment", scope, p.ID, "R01", ""},
		{"failed payment", scope, p.ID, "R01", errs.Conflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.Consequences.SimulateReturn(ctx, c.scope, c.id, c.code)
			if code := errs.CodeOf(err); code != c.want || (err != nil && code == "") {
				t.Fatalf("got %v, want code %q", err, c.want)
			}
			if err == nil && (got.Status != payment.Failed || got.FailureCode == nil || *got.FailureCode != c.code) {
				t.Errorf("payment = %s, failure code %v; want failed with %s", got.Status, got.FailureCode, c.code)
			}
		})
	}
}
