package payment_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// debit creates a sandbox debit of amount ("13.01" comes back R01).
func sandboxDebit(t *testing.T, f *fixture.Fixture, scope tenant.Scope, src, amount string) payment.Payment {
	t.Helper()
	p, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src, Amount: json.RawMessage(`"` + amount + `"`), Direction: payment.Debit})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// settle lets the sandbox's settle delay pass and settles what is due.
func settle(t *testing.T, f *fixture.Fixture) {
	t.Helper()
	f.Clock.Advance(f.Config.PaymentSettleDelay)
	if _, err := f.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks that err is retry_not_allowed with a message that
// names the rule.
func wantRefused(t *testing.T, err error, rule string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != errs.RetryNotAllowed || !strings.Contains(e.Message, rule) {
		t.Errorf("got %v, want retry_not_allowed saying %q", err, rule)
	}
}

// TestRetryPresentsAnR01DebitAgainAtMostTwice: a one-off debit returned
// R01 is presented again with the same amount, source, description and
// mandate, naming the original; while that is pending the original is
// not retried again; the third re-presentment is refused.
func TestRetryPresentsAnR01DebitAgainAtMostTwice(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	orig := sandboxDebit(t, f, scope, src, "13.01")
	settle(t, f)

	prev := orig
	for attempt := 2; attempt <= 3; attempt++ {
		r, err := f.Payments.Retry(ctx, scope, prev.ID)
		if err != nil {
			t.Fatalf("retry %d: %v", attempt, err)
		}
		if r.RetryOf == nil || *r.RetryOf != orig.ID || r.Attempt == nil || *r.Attempt != attempt || r.Cents != orig.Cents ||
			r.SourceID != src || r.Direction != payment.Debit || r.Status != payment.Pending || r.MandateID == nil || *r.MandateID != *orig.MandateID {
			t.Fatalf("retry %d = %+v; want a pending debit of %s under mandate %s", attempt, r, orig.ID, *orig.MandateID)
		}
		got, err := f.Payments.Get(ctx, scope, r.ID)
		if err != nil || got.RetryOf == nil || *got.RetryOf != orig.ID || got.Attempt == nil || *got.Attempt != attempt {
			t.Fatalf("stored retry = %+v, %v", got, err)
		}
		_, err = f.Payments.Retry(ctx, scope, orig.ID)
		wantRefused(t, err, "presented again already as "+r.ID+", which is pending")
		settle(t, f) // 13.01 comes back R01 again
		prev = r
	}
	_, err := f.Payments.Retry(ctx, scope, prev.ID)
	wantRefused(t, err, "twice already")
	_, err = f.Payments.Retry(ctx, scope, orig.ID)
	wantRefused(t, err, "presented again already as "+prev.ID)
	if _, err := f.Payments.Retry(ctx, scope, "pay_unknown"); !errs.Is(err, errs.PaymentNotFound) {
		t.Errorf("retry of an unknown payment: %v", err)
	}
}

// TestRetryRefusesWhatTheRuleDoesNotAllow: a credit, a processed debit,
// a pending one, a debit returned R02, and an R01 debit of a source a
// later return blocked are each refused with the rule that refuses them.
func TestRetryRefusesWhatTheRuleDoesNotAllow(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	credit, err := f.Payments.Create(ctx, scope, payment.Input{SourceID: src, Amount: json.RawMessage(`"13.01"`), Direction: payment.Credit})
	if err != nil {
		t.Fatal(err)
	}
	processed := sandboxDebit(t, f, scope, src, "5.00")
	// R02 removes its source: a source of its own.
	closed := sandboxDebit(t, f, scope, f.VerifiedSource(scope, f.Customer(scope), "222233334444").ID, "13.02")
	settle(t, f)

	blockedSrc := f.VerifiedSource(scope, f.Customer(scope), "777788889999").ID
	insufficient := sandboxDebit(t, f, scope, blockedSrc, "13.01")
	disputed := sandboxDebit(t, f, scope, blockedSrc, "7.00")
	settle(t, f)
	if _, err := f.Consequences.SimulateReturn(ctx, scope, disputed.ID, "R10"); err != nil {
		t.Fatal(err)
	}
	pending := sandboxDebit(t, f, scope, src, "6.00")
	for _, c := range []struct {
		name, id, rule string
	}{
		{"credit", credit.ID, "Only a debit"},
		{"processed debit", processed.ID, "This payment is processed"},
		{"pending debit", pending.ID, "This payment is pending"},
		{"returned R02", closed.ID, "came back R02"},
		{"blocked source", insufficient.ID, "blocked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Payments.Retry(ctx, scope, c.id)
			wantRefused(t, err, c.rule)
		})
	}
	list, _, err := f.Payments.List(ctx, scope, "", paging.Page{Limit: 100})
	if err != nil || len(list) != 6 {
		t.Errorf("payments after refused retries = %d, %v; want the 6 created", len(list), err)
	}
}

// TestRetryWithin180DaysOfSettlement: the 180th calendar day after the
// original settled is the last a retry is accepted; the 181st refuses it.
func TestRetryWithin180DaysOfSettlement(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	late, onTime := sandboxDebit(t, f, scope, src, "13.01"), sandboxDebit(t, f, scope, src, "13.01")
	settle(t, f)                                                               // Monday 2026-11-02, US Eastern
	day180 := time.Date(2027, 5, 1, 23, 59, 0, 0, time.UTC).Add(4 * time.Hour) // 2027-05-01 23:59 Eastern (EDT)
	f.Clock.Set(day180)
	if r, err := f.Payments.Retry(ctx, scope, onTime.ID); err != nil || *r.RetryOf != onTime.ID {
		t.Fatalf("retry on the 180th day: %+v, %v", r, err)
	}
	f.Clock.Advance(2 * time.Minute) // 2027-05-02, the 181st day
	_, err := f.Payments.Retry(ctx, scope, late.ID)
	wantRefused(t, err, "within 180 days of that, until 2027-05-01")
}

// TestConcurrentRetriesCreateOne: retries of one returned debit that race
// store one re-presentment; every other call is refused.
func TestConcurrentRetriesCreateOne(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	orig := sandboxDebit(t, f, scope, src, "13.01")
	settle(t, f)
	const n = 6
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, results[i] = f.Payments.Retry(ctx, scope, orig.ID)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case !errs.Is(err, errs.RetryNotAllowed):
			t.Errorf("a racing retry: %v, want retry_not_allowed", err)
		}
	}
	var stored int
	if err := f.SQL().Get(&stored, `SELECT count(*) FROM payments WHERE retry_of = $1`, orig.ID); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || stored != 1 {
		t.Errorf("%d retries succeeded and %d stored, want 1 and 1", ok, stored)
	}
}

// TestSubscriptionRetriesNameTheOriginalAndKeepTo180Days: a subscription's
// R01 debit is presented again with retry_of naming the first
// presentment; a re-presentment that comes back R01 after the 180 days
// ends the subscription instead of a third presentment.
func TestSubscriptionRetriesNameTheOriginalAndKeepTo180Days(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"13.01"`),
		Interval: payment.Monthly, StartDate: "2026-11-02"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.Payments.Advance(ctx, scope, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	settle(t, f)
	second, err := f.Payments.Advance(ctx, scope, sub.ID) // the scheduled re-presentment
	if err != nil {
		t.Fatal(err)
	}
	if second.RetryOf == nil || *second.RetryOf != first.ID || *second.Attempt != 2 {
		t.Fatalf("re-presentment = retry_of %v attempt %v; want %s, 2", second.RetryOf, second.Attempt, first.ID)
	}
	if _, err := f.Payments.Retry(ctx, scope, first.ID); !errs.Is(err, errs.RetryNotAllowed) {
		t.Errorf("a one-off retry of a subscription's debit: %v, want retry_not_allowed", err)
	}
	f.Clock.Advance(181 * 24 * time.Hour)
	if _, err := f.Consequences.SettleDue(ctx); err != nil { // the re-presentment comes back R01 on day 181
		t.Fatal(err)
	}
	got, err := f.Payments.GetSubscription(ctx, scope, sub.ID)
	if err != nil || got.Status != payment.Canceled || got.CancelReason == nil || *got.CancelReason != payment.CancelPaymentReturned || got.RetryDate != nil {
		t.Errorf("subscription after a return past 180 days = %+v, %v; want canceled payment_returned", got, err)
	}
}

// TestSandboxAmountReturnedOnceSettlesOnItsRetry: a sandbox debit of
// 13.91 comes back R01 and its re-presentment settles; another source's
// first debit of 13.91 still comes back R01, and 13.90 settles.
func TestSandboxAmountReturnedOnceSettlesOnItsRetry(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	orig := sandboxDebit(t, f, scope, src, "13.91")
	settle(t, f)
	if got, err := f.Payments.Get(ctx, scope, orig.ID); err != nil || got.Status != payment.Failed || got.FailureCode == nil || *got.FailureCode != "R01" {
		t.Fatalf("13.91 = %+v, %v; want failed R01", got, err)
	}
	r, err := f.Payments.Retry(ctx, scope, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	other := sandboxDebit(t, f, scope, f.VerifiedSource(scope, f.Customer(scope), "222233334444").ID, "13.91")
	near := sandboxDebit(t, f, scope, src, "13.90")
	settle(t, f)
	for _, c := range []struct {
		id, code string
		status   payment.Status
	}{{r.ID, "", payment.Processed}, {other.ID, "R01", payment.Failed}, {near.ID, "", payment.Processed}} {
		got, err := f.Payments.Get(ctx, scope, c.id)
		code := ""
		if got.FailureCode != nil {
			code = *got.FailureCode
		}
		if err != nil || got.Status != c.status || code != c.code {
			t.Errorf("%s (%s) = %s %q, %v; want %s %q", c.id, got.Amount, got.Status, code, err, c.status, c.code)
		}
	}
}
