package payment_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// wantRefundRefused checks that err is refund_not_allowed for reason.
func wantRefundRefused(t *testing.T, err error, reason string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != errs.RefundNotAllowed || e.Details["reason"] != reason {
		t.Errorf("refund: %v, want refund_not_allowed for %s", err, reason)
	}
}

// TestRefundRuleAtItsEdges: a processed debit is refunded on the 180th
// day after its settlement and not the 181st, for its remaining amount
// and not a cent more; a credit, a pending and a failed debit are not.
func TestRefundRuleAtItsEdges(t *testing.T) {
	settled := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	debit := payment.Payment{Direction: payment.Debit, Status: payment.Processed, Cents: 5000, Amount: "50.00", RefundedCents: 2000}
	facts := func(p payment.Payment, day int, cents int64) payment.RefundFacts {
		return payment.RefundFacts{Payment: p, Settled: settled, HasSettle: true, Today: settled.AddDate(0, 0, day), Cents: cents}
	}
	if err := payment.RefundRule(facts(debit, 180, 3000)); err != nil {
		t.Errorf("day 180, the remaining amount: %v, want allowed", err)
	}
	wantRefundRefused(t, payment.RefundRule(facts(debit, 181, 100)), payment.RefundWindowClosed)
	wantRefundRefused(t, payment.RefundRule(facts(debit, 10, 3001)), payment.RefundOverRemaining)
	credit := debit
	credit.Direction = payment.Credit
	wantRefundRefused(t, payment.RefundRule(facts(credit, 1, 100)), payment.RefundNotDebit)
	for _, st := range []payment.Status{payment.Pending, payment.Failed, payment.Held, payment.Voided} {
		p := debit
		p.Status = st
		wantRefundRefused(t, payment.RefundRule(facts(p, 1, 100)), payment.RefundNotProcessed)
	}
	e, _ := errs.As(payment.RefundRule(facts(debit, 10, 3001)))
	if e == nil || e.Details["remaining"] != "30.00" {
		t.Errorf("over the remaining amount: %+v, want remaining 30.00", e)
	}
}

// refundable is a processed sandbox debit of amount.
func refundable(t *testing.T, f *fixture.Fixture, scope tenant.Scope, account, amount string) payment.Payment {
	t.Helper()
	d := sandboxDebit(t, f, scope, f.VerifiedSource(scope, f.Customer(scope), account).ID, amount)
	settle(t, f)
	return d
}

// achRefunds turns scope's instant payouts off, so its refunds go by ACH
// (method auto's fallback) and stay pending until they settle.
func achRefunds(t *testing.T, f *fixture.Fixture, scope tenant.Scope) tenant.Scope {
	t.Helper()
	off := false
	if _, err := f.Originators.Set(ctx, scope, orig.Change{Instant: &off}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return scope
}

func refund(f *fixture.Fixture, scope tenant.Scope, id, amount string) (payment.Payment, error) {
	in := payment.RefundInput{}
	if amount != "" {
		in.Amount = json.RawMessage(`"` + amount + `"`)
	}
	r, err := f.Payments.Refund(ctx, scope, id, in)
	if err != nil || r.PendingInstant == nil {
		return r, err
	}
	// An instant refund leaves once the refund committed, as the API sends it.
	return f.Consequences.DeliverInstant(ctx, *r.PendingInstant)
}

// TestARefundIsACreditToTheSameSource: a refund is a pending credit to
// the debit's source naming it; the debit carries refunded_amount and
// payment.refunded fires with it; the remaining amount is refunded
// without naming it, and then not a cent more; nothing over is stored.
func TestARefundIsACreditToTheSameSource(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	d := refundable(t, f, scope, "444455556666", "50.00")
	reason := "  returned the goods  "
	r, err := f.Payments.Refund(ctx, scope, d.ID, payment.RefundInput{Amount: json.RawMessage(`"20.00"`), Reason: &reason})
	if err != nil {
		t.Fatal(err)
	}
	if r.Direction != payment.Credit || r.Cents != 2000 || r.SourceID != d.SourceID || r.RefundOf == nil || *r.RefundOf != d.ID ||
		r.RefundReason == nil || *r.RefundReason != "returned the goods" || r.Status != payment.Pending {
		t.Fatalf("refund = %+v", r)
	}
	if got, err := f.Payments.Get(ctx, scope, r.ID); err != nil || got.RefundOf == nil || *got.RefundOf != d.ID {
		t.Errorf("refund read back = %+v, %v", got, err)
	}
	if got, err := f.Payments.Get(ctx, scope, d.ID); err != nil || got.RefundedAmount == nil || *got.RefundedAmount != "20.00" {
		t.Errorf("debit read back: refunded_amount %v, %v; want 20.00", got.RefundedAmount, err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2 AND data->>'refunded_amount' = '20.00'`,
		event.PaymentRefunded, d.ID); err != nil || n != 1 {
		t.Errorf("payment.refunded events = %d, %v; want 1", n, err)
	}
	wantRefundRefused(t, func() error { _, err := refund(f, scope, d.ID, "30.01"); return err }(), payment.RefundOverRemaining)
	rest, err := refund(f, scope, d.ID, "")
	if err != nil || rest.Cents != 3000 {
		t.Fatalf("refund of the rest = %+v, %v; want 30.00", rest, err)
	}
	wantRefundRefused(t, func() error { _, err := refund(f, scope, d.ID, "0.01"); return err }(), payment.RefundOverRemaining)
	wantRefundRefused(t, func() error { _, err := refund(f, scope, d.ID, ""); return err }(), payment.RefundOverRemaining)
	wantRefundRefused(t, func() error { _, err := refund(f, scope, r.ID, ""); return err }(), payment.RefundNotDebit)
	if err := f.SQL().Get(&n, `SELECT count(*) FROM payments WHERE refund_of = $1`, d.ID); err != nil || n != 2 {
		t.Errorf("refunds stored = %d, %v; want 2", n, err)
	}
	pending := sandboxDebit(t, f, scope, d.SourceID, "5.00")
	wantRefundRefused(t, func() error { _, err := refund(f, scope, pending.ID, ""); return err }(), payment.RefundNotProcessed)
	if _, err := refund(f, scope, "pay_unknown", ""); !errs.Is(err, errs.PaymentNotFound) {
		t.Errorf("unknown payment: %v", err)
	}
	long := string(make([]rune, 501))
	if _, err := f.Payments.Refund(ctx, scope, d.ID, payment.RefundInput{Reason: &long}); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("a reason of 501: %v, want invalid_request", err)
	}
}

// TestARefundIsJudgedAsACredit: the originator's daily credit limit
// refuses a refund over it, and nothing is stored.
func TestARefundIsJudgedAsACredit(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	d := refundable(t, f, scope, "444455556666", "50.00")
	setLimits(t, f, scope, "1000.00", "5000.00", "10.00")
	_, err := refund(f, scope, d.ID, "10.01")
	if !errs.Is(err, errs.LimitExceeded) {
		t.Errorf("refund over the daily credit limit: %v, want limit_exceeded", err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM payments WHERE refund_of = $1`, d.ID); err != nil || n != 0 {
		t.Errorf("refunds stored = %d, %v; want none", n, err)
	}
	if _, err := refund(f, scope, d.ID, "10.00"); err != nil {
		t.Errorf("refund at the limit: %v", err)
	}
}

// TestTheRefundWindowIs180Days: on a test clock, a debit settles the
// bank's way; 180 days after its settlement date it is refunded, 181 days
// after it is not.
func TestTheRefundWindowIs180Days(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	start := fixture.Start
	clock, err := f.TestClocks.Create(ctx, scope, testclock.Input{FrozenTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	advance := func(to time.Time) context.Context {
		t.Helper()
		if _, err := f.TestClocks.Advance(ctx, scope, clock.ID, testclock.AdvanceInput{FrozenTime: &to}); err != nil {
			t.Fatal(err)
		}
		if n, err := f.Advances.RunDue(ctx); err != nil || n != 1 {
			t.Fatalf("advance to %s: %d, %v", to, n, err)
		}
		c, err := f.TestClocks.Get(ctx, scope, clock.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Context(ctx)
	}
	on := clock.Context(ctx)
	cu, err := f.Customers.Create(on, scope, customer.Input{FirstName: "Ada", LastName: "L", Email: "ada@example.com", TestClock: &clock.ID})
	if err != nil {
		t.Fatal(err)
	}
	src, err := f.Funding.CreateOnDemand(on, funding.Caller{Scope: scope, OnDemand: true, ThirdPartyVerification: true},
		funding.Input{CustomerID: cu.ID, RoutingNumber: fixture.RoutingNumber, AccountNumber: "444455556666"})
	if err != nil {
		t.Fatal(err)
	}
	var debits []payment.Payment
	for range 2 {
		d, err := f.Payments.Create(on, scope, payment.Input{SourceID: src.ID, Amount: json.RawMessage(`"10.00"`), Direction: payment.Debit})
		if err != nil {
			t.Fatal(err)
		}
		debits = append(debits, d)
	}
	advance(start.AddDate(0, 0, 7))
	d, err := f.Payments.Get(ctx, scope, debits[0].ID)
	if err != nil || d.Status != payment.Processed || d.SettlementDate == nil {
		t.Fatalf("the debit after a week: %+v %v", d, err)
	}
	settled, err := time.ParseInLocation(time.DateOnly, *d.SettlementDate, calendar.Eastern)
	if err != nil {
		t.Fatal(err)
	}
	refundOn := func(at context.Context, id string) error {
		_, err := f.Payments.Refund(at, scope, id, payment.RefundInput{})
		return err
	}
	at := advance(settled.AddDate(0, 0, 180).Add(12 * time.Hour))
	if err := refundOn(at, debits[0].ID); err != nil {
		t.Errorf("day 180: %v, want refunded", err)
	}
	at = advance(settled.AddDate(0, 0, 181).Add(12 * time.Hour))
	wantRefundRefused(t, refundOn(at, debits[1].ID), payment.RefundWindowClosed)
}

// TestTwoRefundsRaceForTheLastDollar: of two refunds of the whole
// remaining dollar at once, one is stored and the other refused.
func TestTwoRefundsRaceForTheLastDollar(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	d := refundable(t, f, scope, "444455556666", "1.00")
	var wg sync.WaitGroup
	results := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = refund(f, scope, d.ID, "1.00")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range results {
		switch {
		case err == nil:
			won++
		default:
			wantRefundRefused(t, err, payment.RefundOverRemaining)
		}
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM payments WHERE refund_of = $1`, d.ID); err != nil || n != 1 || won != 1 {
		t.Errorf("refunds stored = %d, %v, %d won; want exactly one", n, err, won)
	}
}

// TestARefundedDebitReturnedUnauthorizedAlerts: a debit returned R10
// after its refund left raises refund_then_return, which the monitoring
// report counts; one returned R01 does not, nor one whose refund had not
// left.
func TestARefundedDebitReturnedUnauthorizedAlerts(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := achRefunds(t, f, f.Sandbox("Acme"))
	left := refundable(t, f, scope, "444455556666", "40.00")
	insufficient := refundable(t, f, scope, "444455557777", "40.00")
	for _, id := range []string{left.ID, insufficient.ID} {
		if _, err := refund(f, scope, id, "10.00"); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, f)
	waiting := refundable(t, f, scope, "444455558888", "40.00")
	if _, err := refund(f, scope, waiting.ID, "10.00"); err != nil {
		t.Fatal(err)
	}
	for id, code := range map[string]string{left.ID: "R10", insufficient.ID: "R01", waiting.ID: "R05"} {
		if _, err := f.Consequences.SimulateReturn(ctx, scope, id, code); err != nil {
			t.Fatal(err)
		}
	}
	var alerted []string
	if err := f.SQL().Select(&alerted, `SELECT payment_id FROM fraud_alerts WHERE rule_id = $1`, payment.AlertRefundThenReturn); err != nil ||
		len(alerted) != 1 || alerted[0] != left.ID {
		t.Errorf("refund_then_return alerts = %v, %v; want one, of %s", alerted, err, left.ID)
	}
	m, err := f.Payments.Monitoring(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range m.Alerts {
		found = found || (a.RuleID == payment.AlertRefundThenReturn && a.Alerts == 1)
	}
	if n, err := f.Payments.RefundedThenReturned(ctx, scope); !found || n != 1 || err != nil {
		t.Errorf("monitoring alerts = %+v, counted %d, %v; want refund_then_return 1", m.Alerts, n, err)
	}
}

// TestARefundGoesInstantWhereItCan: a refund goes by method auto: to a
// bank an instant rail reaches, with the originator's instant payouts on,
// it is an instant credit, processed at once and final; with them off it
// is an ACH credit that says why (originator_instant_off).
func TestARefundGoesInstantWhereItCan(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	d := refundable(t, f, scope, "444455556666", "50.00")
	r, err := refund(f, scope, d.ID, "20.00")
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != payment.MethodAuto || (r.Rail != payment.RailRTP && r.Rail != payment.RailFedNow) || r.Status != payment.Processed ||
		r.RefundOf == nil || *r.RefundOf != d.ID {
		t.Fatalf("instant refund = method %s, rail %s, status %s", r.Method, r.Rail, r.Status)
	}
	achRefunds(t, f, scope)
	r, err = refund(f, scope, d.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Rail != payment.RailACH || r.FallbackReason == nil || *r.FallbackReason != payment.FallbackInstantOff || r.Status != payment.Pending || r.Cents != 3000 {
		t.Fatalf("ACH refund = rail %s, fallback %v, status %s, %d cents", r.Rail, r.FallbackReason, r.Status, r.Cents)
	}
}
