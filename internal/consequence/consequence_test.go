package consequence_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

var ctx = context.Background()

func debit(t *testing.T, f *fixture.Fixture, scope tenant.Scope, src, amount string) payment.Payment {
	t.Helper()
	text, ip, ua, at := "I authorize Acme to debit my account.", "203.0.113.7", "Mozilla/5.0", "2026-11-01T15:04:05Z"
	p, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src, Amount: json.RawMessage(`"` + amount + `"`),
		Direction: payment.Debit, Authorization: &payment.Authorization{AcceptedAt: &at, IPAddress: &ip, UserAgent: &ua, Text: &text}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// events are the types of the events recorded about ids.
func events(t *testing.T, f *fixture.Fixture, ids ...string) []string {
	t.Helper()
	var types []string
	err := f.SQL().Select(&types, `SELECT type FROM events
		WHERE coalesce(data->>'payment_id', data->>'funding_source_id') = ANY($1) ORDER BY created_at`, ids)
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// TestAReturnSetsOffItsConsequences: an R10 fails the payment, blocks its
// source and cancels the source's other unsent debit, in one transaction,
// each with its event.
func TestAReturnSetsOffItsConsequences(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "44440001").ID
	returned, unsent := debit(t, f, scope, src, "25.00"), debit(t, f, scope, src, "26.00")

	if err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
		return f.Consequences.ReturnTx(ctx, tx, scope, returned.ID, "R10")
	}); err != nil {
		t.Fatal(err)
	}
	s, err := f.Funding.Get(ctx, scope, src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Block == nil || s.Block.Code != "R10" {
		t.Fatalf("source block = %+v, want R10", s.Block)
	}
	got, err := f.Payments.Get(ctx, scope, unsent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.Voided || got.CancelReason == nil || *got.CancelReason != payment.CancelSourceBlocked {
		t.Fatalf("the other debit is %s (%v), want canceled for the block", got.Status, got.CancelReason)
	}
	for id, want := range map[string]string{returned.ID: "payment.failed", src: "funding_source.blocked", unsent.ID: "payment.canceled"} {
		if !slices.Contains(events(t, f, id), want) {
			t.Errorf("no %s for %s", want, id)
		}
	}

	// Applying the same return again changes nothing more.
	before := len(events(t, f, returned.ID, unsent.ID, src))
	if err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
		return f.Consequences.ReturnTx(ctx, tx, scope, returned.ID, "R10")
	}); err != nil {
		t.Fatal(err)
	}
	if after := len(events(t, f, returned.ID, unsent.ID, src)); after != before {
		t.Fatalf("a second application recorded %d more events", after-before)
	}
}

// TestWhatChangedNothingSetsOffNothing: a Finished that did not change
// the payment, and an Outcome that left the source as it was, touch
// nothing else.
func TestWhatChangedNothingSetsOffNothing(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "44440002").ID
	p := debit(t, f, scope, src, "25.00")
	before := len(events(t, f, p.ID, src))
	if err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
		if err := f.Consequences.FinishedTx(ctx, tx, payment.Finished{Scope: scope, SourceID: src, Code: "R10"}); err != nil {
			return err
		}
		return f.Consequences.SourceChangedTx(ctx, tx, scope, src, funding.Outcome{})
	}); err != nil {
		t.Fatal(err)
	}
	if after := len(events(t, f, p.ID, src)); after != before {
		t.Fatalf("%d events recorded for nothing done", after-before)
	}
	got, err := f.Payments.Get(ctx, scope, p.ID)
	if err != nil || got.Status != payment.Pending {
		t.Fatalf("payment %s, %v; want pending", got.Status, err)
	}
}

// TestARemovalEndsTheSourcesPaymentsWithIt: a merchant's removal cancels
// the source's unsent payments (funding_source_removed) in its own
// transaction; removing it again is answered as it is, with nothing more.
func TestARemovalEndsTheSourcesPaymentsWithIt(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "44440003").ID
	p := debit(t, f, scope, src, "25.00")
	for range 2 {
		s, err := f.Consequences.Remove(ctx, scope, src)
		if err != nil || !s.Removed {
			t.Fatalf("remove = %+v, %v", s.Removed, err)
		}
	}
	got, err := f.Payments.Get(ctx, scope, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payment.Voided || got.CancelReason == nil || *got.CancelReason != payment.CancelSourceRemoved {
		t.Fatalf("debit %s (%v), want canceled for the removal", got.Status, got.CancelReason)
	}
	if n := len(slices.DeleteFunc(events(t, f, p.ID), func(s string) bool { return s != "payment.canceled" })); n != 1 {
		t.Fatalf("%d payment.canceled events, want 1", n)
	}
}
