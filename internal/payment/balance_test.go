package payment_test

import (
	"encoding/json"
	"testing"

	cmoney "github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// ledger reads every line of scope's ledger, page by page, and checks
// that the balances' available and pending are the sums of its lines.
func ledger(t *testing.T, f *fixture.Fixture, scope tenant.Scope, after string) []payment.BalanceTransaction {
	t.Helper()
	var all []payment.BalanceTransaction
	p := paging.Page{Limit: 2}
	for {
		lines, more, err := f.Payments.BalanceTransactions(ctx, scope, p)
		if err != nil {
			t.Fatalf("%s: %v", after, err)
		}
		all = append(all, lines...)
		if !more {
			break
		}
		p.StartingAfter = lines[len(lines)-1].ID
	}
	var available, pending int64
	for i, l := range all {
		if l.Amount != cmoney.Format(l.Cents) || l.Currency != "USD" {
			t.Errorf("%s: line %s amount %q, cents %d", after, l.ID, l.Amount, l.Cents)
		}
		switch l.Status {
		case payment.LineAvailable:
			available += l.Cents
		case payment.LinePending:
			pending += l.Cents
		default:
			t.Errorf("%s: line %+v has status %q", after, l, l.Status)
		}
		if i > 0 && all[i-1].CreatedAt.Before(l.CreatedAt) {
			t.Errorf("%s: line %d is newer than the one before", after, i)
		}
	}
	b, err := f.Payments.Balances(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if b.Available != cmoney.Format(available) || b.Pending != cmoney.Format(pending) {
		t.Errorf("%s: balances available %s, pending %s; the lines sum to %s and %s",
			after, b.Available, b.Pending, cmoney.Format(available), cmoney.Format(pending))
	}
	return all
}

func lineTypes(lines []payment.BalanceTransaction) map[string]int64 {
	out := map[string]int64{}
	for _, l := range lines {
		out[l.Type+"/"+l.Status] += l.Cents
	}
	return out
}

// TestBalancesAreTheSumOfTheLedger: after a debit, a credit, a refund, a
// return and a reversal, the ledger has the line each one moved, with its
// sign and status, and available and pending are the sums of the lines.
// (A dishonor needs the bank: the end-to-end tests check it.)
func TestBalancesAreTheSumOfTheLedger(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	if got := ledger(t, f, scope, "nothing"); len(got) != 0 {
		t.Fatalf("empty ledger = %+v", got)
	}
	d := sandboxDebit(t, f, scope, src, "50.00")
	if got := lineTypes(ledger(t, f, scope, "a pending debit")); got["debit/pending"] != 5000 || len(got) != 1 {
		t.Errorf("lines after a pending debit = %v", got)
	}
	settle(t, f)
	lines := ledger(t, f, scope, "a processed debit")
	if l := lines[0]; l.Type != payment.LineDebit || l.Status != payment.LineAvailable || l.PaymentID != d.ID ||
		l.AvailableOn == nil || l.AtRiskUntil == nil {
		t.Errorf("processed debit's line = %+v", l)
	}
	if _, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src, Amount: json.RawMessage(`"7.00"`), Direction: payment.Credit}); err != nil {
		t.Fatal(err)
	}
	ledger(t, f, scope, "a credit")
	if _, err := refund(f, scope, d.ID, "10.00"); err != nil {
		t.Fatal(err)
	}
	if got := lineTypes(ledger(t, f, scope, "a refund")); got["refund/pending"] != -1000 || got["credit/pending"] != -700 {
		t.Errorf("lines after a refund = %v", got)
	}
	settle(t, f)
	ledger(t, f, scope, "the credit and refund settled")
	returned := sandboxDebit(t, f, scope, src, "20.00")
	settle(t, f)
	if _, err := f.Consequences.SimulateReturn(ctx, scope, returned.ID, "R01"); err != nil {
		t.Fatal(err)
	}
	if got := lineTypes(ledger(t, f, scope, "a return")); got["return/available"] != -2000 {
		t.Errorf("lines after a return = %v", got)
	}
	reversed := sandboxDebit(t, f, scope, src, "30.00")
	settle(t, f)
	if _, err := f.Payments.Reverse(ctx, scope, reversed.ID, payment.ReverseInput{Reason: "duplicate"}); err != nil {
		t.Fatal(err)
	}
	if got := lineTypes(ledger(t, f, scope, "a reversal")); got["reversal/pending"] != -3000 {
		t.Errorf("lines after a reversal = %v", got)
	}
	settle(t, f)
	got := lineTypes(ledger(t, f, scope, "everything settled"))
	want := map[string]int64{"debit/available": 5000 + 2000 + 3000, "credit/available": -700, "refund/available": -1000,
		"return/available": -2000, "reversal/available": -3000}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	b, _ := f.Payments.Balances(ctx, scope)
	if b.Available != cmoney.Format(5000+2000+3000-700-1000-2000-3000) || b.Pending != "0.00" {
		t.Errorf("balances = %+v", b)
	}
	if _, _, err := f.Payments.BalanceTransactions(ctx, scope, paging.Page{Limit: 2, StartingAfter: "txn_nothere"}); err == nil {
		t.Error("an unknown cursor was taken")
	}
}
