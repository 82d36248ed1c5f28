package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// held creates a payment that the unverified_credit rule holds.
func held(t *testing.T, f *fixture.Fixture, scope tenant.Scope, sourceID string) payment.Payment {
	t.Helper()
	p, r := create(t, f, scope, money(sourceID, payment.Credit, "1000.01"))
	wantHold(t, "credit to an Unverified source", p, r, "fraud_rule:unverified_credit")
	return p
}

func events(t *testing.T, f *fixture.Fixture, typ, paymentID string) int {
	t.Helper()
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2`, typ, paymentID); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHeldPaymentsWaitForReview(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), account(1)).ID
	release, reject := held(t, f, scope, src), held(t, f, scope, src)
	if n := events(t, f, "payment.held", release.ID); n != 1 {
		t.Errorf("payment.held events: got %d, want 1", n)
	}

	// A held payment does not settle, however long it waits.
	f.Clock.Advance(10 * f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := f.Payments.Get(ctx, scope, release.ID); p.Status != payment.Held {
		t.Fatalf("after the settle delay: got %s, want held", p.Status)
	}
	queue, err := f.Payments.Held(ctx, nil, 100)
	if err != nil || len(queue) != 2 {
		t.Fatalf("held queue: got %d, %v; want 2", len(queue), err)
	}

	by := audit.Operator("reviewer")
	p, err := f.Payments.Release(ctx, release.ID, "called the customer", by)
	if err != nil || p.Status != payment.Pending || p.HoldReason != nil {
		t.Fatalf("release: got %s %v, %v; want pending", p.Status, p.HoldReason, err)
	}
	if n := events(t, f, "payment.released", release.ID); n != 1 {
		t.Errorf("payment.released events: got %d, want 1", n)
	}
	if _, err := f.Payments.Release(ctx, release.ID, "", by); !errs.Is(err, errs.Conflict) {
		t.Errorf("release of a pending payment: got %v, want conflict", err)
	}
	p, err = f.Payments.Reject(ctx, reject.ID, "", by)
	if err != nil || p.Status != payment.Voided || p.CancelReason == nil || *p.CancelReason != payment.CancelRejected {
		t.Fatalf("reject: got %s %v, %v; want canceled rejected_by_review", p.Status, p.CancelReason, err)
	}
	if n := events(t, f, "payment.canceled", reject.ID); n != 1 {
		t.Errorf("payment.canceled events: got %d, want 1", n)
	}
	if _, err := f.Payments.Reject(ctx, "pay_unknown", "", by); !errs.Is(err, errs.PaymentNotFound) {
		t.Errorf("reject of an unknown payment: got %v, want payment_not_found", err)
	}
	var actions []string
	if err := f.SQL().Select(&actions, `SELECT action FROM audit_events WHERE merchant_id = $1 AND action LIKE 'payment.%' ORDER BY seq`, scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 2 || actions[0] != payment.AuditReleased || actions[1] != payment.AuditRejected {
		t.Errorf("audit: got %v, want [payment.released payment.rejected]", actions)
	}

	// Released, it settles after the delay from its release.
	f.Clock.Advance(f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := f.Payments.Get(ctx, scope, release.ID); p.Status != payment.Processed {
		t.Errorf("released payment after the delay: got %s, want processed", p.Status)
	}
}

func TestReviewNoteIsChecked(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	p := held(t, f, scope, f.Source(scope, f.Customer(scope), account(1)).ID)
	if _, err := f.Payments.Release(ctx, p.ID, "bad\x00note", audit.Operator("r")); !errs.Is(err, errs.InvalidRequest) {
		t.Fatalf("control character: got %v, want invalid_request", err)
	}
	if got, _ := f.Payments.Get(ctx, scope, p.ID); got.Status != payment.Held {
		t.Errorf("after a refused release: got %s, want held", got.Status)
	}
}

func TestABlockCancelsHeldDebits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), account(1)).ID
	first, r := create(t, f, scope, money(src, payment.Debit, "1.00"))
	wantHold(t, "first debit", first, r, "")
	for range 4 {
		create(t, f, scope, money(src, payment.Debit, "1.00"))
	}
	h, r := create(t, f, scope, money(src, payment.Debit, "1.00"))
	wantHold(t, "sixth debit", h, r, "fraud_rule:daily_velocity")
	if _, err := f.Consequences.SimulateReturn(ctx, scope, first.ID, "R10"); err != nil {
		t.Fatal(err)
	}
	p, _ := f.Payments.Get(ctx, scope, h.ID)
	if p.Status != payment.Voided || p.CancelReason == nil || *p.CancelReason != payment.CancelSourceBlocked {
		t.Errorf("held debit of a blocked source: got %s %v, want canceled funding_source_blocked", p.Status, p.CancelReason)
	}
	if _, err := f.Payments.Release(ctx, h.ID, "", audit.Operator("r")); !errs.Is(err, errs.Conflict) {
		t.Errorf("release of a canceled payment: got %v, want conflict", err)
	}
}

func TestMerchantCancelsAHeldPayment(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	p := held(t, f, scope, f.Source(scope, f.Customer(scope), account(1)).ID)
	if _, err := f.Payments.Reverse(ctx, scope, p.ID, payment.ReverseInput{Reason: "duplicate"}); !errs.Is(err, errs.Conflict) {
		t.Errorf("reversal of a held payment: got %v, want conflict", err)
	}
	got, err := f.Payments.Cancel(ctx, scope, p.ID)
	if err != nil || got.Status != payment.Voided {
		t.Fatalf("cancel of a held payment: got %s, %v; want canceled", got.Status, err)
	}
	list, _, err := f.Payments.Search(ctx, scope, payment.Filter{Status: "held"}, paging.Page{Limit: 10})
	if err != nil || len(list) != 0 {
		t.Errorf("held after cancel: got %d, %v", len(list), err)
	}
}

func TestAttest(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	if _, err := f.Payments.Attest(ctx, 1999, "Risk Officer", ""); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("year 1999: got %v, want invalid_request", err)
	}
	if _, err := f.Payments.Attest(ctx, 2026, " ", ""); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("no reviewer: got %v, want invalid_request", err)
	}
	r, err := f.Payments.Attest(ctx, 2026, "Risk Officer", "rules and thresholds reviewed")
	if err != nil || r.Year != 2026 {
		t.Fatalf("attest: got %+v, %v", r, err)
	}
	m, err := f.Payments.Monitoring(ctx, f.Sandbox("Acme"))
	if err != nil || m.LastReview == nil || m.LastReview.ID != r.ID {
		t.Fatalf("monitoring's last review: got %+v, %v; want %s", m.LastReview, err, r.ID)
	}
}
