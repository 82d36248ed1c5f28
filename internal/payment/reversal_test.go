package payment_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestReverseACreditWithADebitOnce: a processed credit is reversed by a
// pending debit of the same amount and source; the credit shows its
// reversal and payment.reversed fires with it; a second reversal, a
// reversal of the reversal, a pending, a failed payment and a bad reason
// are refused and store nothing.
func TestReverseACreditWithADebitOnce(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "444455556666").ID // Unverified: a credit's reversal needs no debit authorization
	credit, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src, Amount: json.RawMessage(`"42.00"`), Direction: payment.Credit})
	if err != nil {
		t.Fatal(err)
	}
	other := f.Source(scope, f.Customer(scope), "777788889999").ID // R03 removes it
	failed, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: other, Amount: json.RawMessage(`"13.03"`), Direction: payment.Credit})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Payments.Reverse(ctx, scope, credit.ID, payment.ReverseInput{Reason: "duplicate"}); !errs.Is(err, errs.Conflict) {
		t.Errorf("reversal of a pending sandbox payment: %v, want conflict", err)
	}
	settle(t, f)
	if _, err := f.Payments.Reverse(ctx, scope, credit.ID, payment.ReverseInput{Reason: "typo"}); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("bad reason: %v, want invalid_request", err)
	} else if e, _ := errs.As(err); e.Param != "reason" {
		t.Errorf("bad reason: param %q, want reason", e.Param)
	}
	got, err := f.Payments.Reverse(ctx, scope, credit.ID, payment.ReverseInput{Reason: "wrong_amount"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != credit.ID || got.Reversal == nil || got.Reversal.Reason != "wrong_amount" {
		t.Fatalf("reversed credit = %+v", got)
	}
	r, err := f.Payments.Get(ctx, scope, got.Reversal.PaymentID)
	if err != nil || r.Direction != payment.Debit || r.Cents != 4200 || r.SourceID != src || r.Status != payment.Pending ||
		r.ReversalOf == nil || *r.ReversalOf != credit.ID || r.MandateID != nil {
		t.Fatalf("reversal = %+v, %v", r, err)
	}
	again, err := f.Payments.Get(ctx, scope, credit.ID)
	if err != nil || again.Reversal == nil || again.Reversal.PaymentID != r.ID || !again.Reversal.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("credit read back = %+v, %v", again.Reversal, err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2 AND data->'reversal'->>'payment_id' = $3`,
		event.PaymentReversed, credit.ID, r.ID); err != nil || n != 1 {
		t.Errorf("payment.reversed events = %d, %v; want 1", n, err)
	}
	for _, c := range []struct{ name, id string }{{"second reversal", credit.ID}, {"reversal of a reversal", r.ID}, {"failed payment", failed.ID}} {
		if _, err := f.Payments.Reverse(ctx, scope, c.id, payment.ReverseInput{Reason: "duplicate"}); !errs.Is(err, errs.Conflict) {
			t.Errorf("%s: %v, want conflict", c.name, err)
		}
	}
	if err := f.SQL().Get(&n, `SELECT count(*) FROM payments WHERE reversal_of IS NOT NULL`); err != nil || n != 1 {
		t.Errorf("reversals stored = %d, %v; want 1", n, err)
	}
}

// TestReversalWindowIsFiveBankingDays: a payment settled on Wednesday
// 2026-11-04 may be reversed through Thursday 2026-11-12 (the weekend and
// Veterans Day, Wednesday 11-11, are no banking days) and not on Friday
// 2026-11-13.
func TestReversalWindowIsFiveBankingDays(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	f.Clock.Set(time.Date(2026, 11, 4, 15, 0, 0, 0, time.UTC))
	inWindow, late := sandboxDebit(t, f, scope, src, "20.00"), sandboxDebit(t, f, scope, src, "21.00")
	settle(t, f)
	if got := calendar.AddBusinessDays(calendar.DateOf(f.Clock.Now()), 5).Format(time.DateOnly); got != "2026-11-12" {
		t.Fatalf("fifth banking day = %s", got)
	}
	f.Clock.Set(time.Date(2026, 11, 13, 4, 59, 0, 0, time.UTC)) // 23:59 on 2026-11-12 in New York
	if _, err := f.Payments.Reverse(ctx, scope, inWindow.ID, payment.ReverseInput{Reason: "duplicate"}); err != nil {
		t.Errorf("reversal on the fifth banking day: %v", err)
	}
	f.Clock.Advance(2 * time.Minute) // 2026-11-13, the sixth
	_, err := f.Payments.Reverse(ctx, scope, late.ID, payment.ReverseInput{Reason: "duplicate"})
	if e, ok := errs.As(err); !ok || e.Code != errs.ReversalWindowClosed {
		t.Errorf("reversal on the sixth banking day: %v, want reversal_window_closed", err)
	}
}

// TestConcurrentReversalsStoreOne: reversals of one payment that race
// store one; every other call is 409 conflict.
func TestConcurrentReversalsStoreOne(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	p := sandboxDebit(t, f, scope, src, "20.00")
	settle(t, f)
	const n = 6
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, results[i] = f.Payments.Reverse(ctx, scope, p.ID, payment.ReverseInput{Reason: "duplicate"})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case !errs.Is(err, errs.Conflict):
			t.Errorf("a racing reversal: %v, want conflict", err)
		}
	}
	var stored int
	if err := f.SQL().Get(&stored, `SELECT count(*) FROM payments WHERE reversal_of = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || stored != 1 {
		t.Errorf("%d reversals succeeded and %d stored, want 1 and 1", ok, stored)
	}
}

// TestAReversalMustLeaveInAWindowByItsLastDay: an entry settled Tuesday
// 2026-11-03 may be reversed until Tuesday 2026-11-10 (Veterans Day,
// Wednesday 11-11, is no banking day). In production a reversal asked for
// before the last window (20:00 in New York) of that day leaves that day;
// one asked for after it would leave in the next window, Thursday 11-12,
// too late; in sandbox it leaves the day it is asked for.
func TestAReversalMustLeaveInAWindowByItsLastDay(t *testing.T) {
	settled := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	last := payment.ReversalLastDay(settled)
	if got := last.Format(time.DateOnly); got != "2026-11-10" {
		t.Fatalf("ReversalLastDay = %s, want 2026-11-10", got)
	}
	at := func(day, hh, mm int) time.Time { return time.Date(2026, 11, day, hh, mm, 0, 0, calendar.Eastern) }
	for _, c := range []struct {
		name  string
		live  bool
		now   time.Time
		leave string
	}{
		{"production, the fifth banking day before its last window", true, at(10, 19, 59), "2026-11-10"},
		{"production, the fifth banking day after its last window", true, at(10, 20, 0), "2026-11-12"},
		{"production, the fourth banking day after its last window", true, at(9, 21, 0), "2026-11-10"},
		{"production, the holiday", true, at(11, 9, 0), "2026-11-12"},
		{"sandbox, the fifth banking day late in the evening", false, at(10, 23, 30), "2026-11-10"},
		{"sandbox, the holiday", false, at(11, 9, 0), "2026-11-11"},
	} {
		leaves := payment.ReversalLeaves(calendar.DefaultSchedule(), c.live, c.now)
		if got := leaves.Format(time.DateOnly); got != c.leave {
			t.Errorf("%s: leaves %s, want %s", c.name, got, c.leave)
		}
		if inTime, want := !leaves.After(last), c.leave <= "2026-11-10"; inTime != want {
			t.Errorf("%s: in time = %v, want %v", c.name, inTime, want)
		}
	}
}

// TestAReturnOfAReversedDebitCancelsOrAlerts: two sandbox debits of
// 40.00 settle and are reversed; one reversal settles too. Both debits
// then come back R10: the unsettled reversal is canceled
// (original_returned, payment.canceled), the settled one stays, and its
// debit's return records a reversal_then_return alert that the
// monitoring report counts.
func TestAReturnOfAReversedDebitCancelsOrAlerts(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	left := sandboxDebit(t, f, scope, f.VerifiedSource(scope, cus, "444455556666").ID, "40.00")
	waiting := sandboxDebit(t, f, scope, f.VerifiedSource(scope, cus, "444455557777").ID, "40.00")
	settle(t, f)
	leftRev, err := f.Payments.Reverse(ctx, scope, left.ID, payment.ReverseInput{Reason: "duplicate"})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, f)
	waitingRev, err := f.Payments.Reverse(ctx, scope, waiting.ID, payment.ReverseInput{Reason: "duplicate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{left.ID, waiting.ID} {
		if _, err := f.Consequences.SimulateReturn(ctx, scope, id, "R10"); err != nil {
			t.Fatal(err)
		}
	}
	w, err := f.Payments.Get(ctx, scope, waitingRev.Reversal.PaymentID)
	if err != nil || w.Status != payment.Voided || w.CancelReason == nil || *w.CancelReason != payment.CancelOriginalReturned {
		t.Errorf("the reversal that had not left = %+v, %v; want canceled original_returned", w, err)
	}
	l, err := f.Payments.Get(ctx, scope, leftRev.Reversal.PaymentID)
	if err != nil || l.Status != payment.Processed {
		t.Errorf("the reversal that left = %+v, %v; want it processed", l, err)
	}
	var canceled int
	if err := f.SQL().Get(&canceled, `SELECT count(*) FROM events WHERE type = $1 AND data->>'payment_id' = $2`,
		event.PaymentCanceled, w.ID); err != nil || canceled != 1 {
		t.Errorf("payment.canceled of the reversal = %d, %v", canceled, err)
	}
	var alerted []string
	if err := f.SQL().Select(&alerted, `SELECT payment_id FROM fraud_alerts WHERE rule_id = $1`, payment.AlertReversalThenReturn); err != nil ||
		len(alerted) != 1 || alerted[0] != left.ID {
		t.Errorf("reversal_then_return alerts = %v, %v; want one, of %s", alerted, err, left.ID)
	}
	m, err := f.Payments.Monitoring(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Alerts[len(m.Alerts)-1]; a.RuleID != payment.AlertReversalThenReturn || a.Alerts != 1 {
		t.Errorf("monitoring's last alert count = %+v", a)
	}
}
