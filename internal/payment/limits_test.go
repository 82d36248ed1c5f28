package payment_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	orig "github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// setLimits sets scope's originator limits, in dollars.
func setLimits(t *testing.T, f *fixture.Fixture, scope tenant.Scope, perEntry, daily, dailyCredit string) {
	t.Helper()
	if _, err := f.Originators.Set(ctx, scope, orig.Change{PerEntryDebit: &perEntry, DailyDebit: &daily,
		DailyCredit: &dailyCredit}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
}

// amountOf is an input of amount dollars in direction d on src.
func amountOf(src, amount string, d payment.Direction) payment.Input {
	return payment.Input{SourceID: src, Amount: json.RawMessage(`"` + amount + `"`), Direction: d}
}

// wantLimit checks that err is limit_exceeded naming limit, with remaining.
func wantLimit(t *testing.T, err error, limit, remaining string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != errs.LimitExceeded {
		t.Fatalf("got %v, want limit_exceeded", err)
	}
	if e.Details["limit"] != limit || e.Details["remaining"] != remaining {
		t.Errorf("limit %v remaining %v, want %s %s", e.Details["limit"], e.Details["remaining"], limit, remaining)
	}
}

// count counts rows of a table of scope's merchant.
func count(t *testing.T, f *fixture.Fixture, table string, scope tenant.Scope) int {
	t.Helper()
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM `+table+` WHERE merchant_id = $1 AND environment = $2`, scope.MerchantID, scope.Env); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPerEntryDebitLimitAtItsEdge: a debit of exactly per_entry_debit
// passes, one cent more is refused naming the limit, and the refusal
// writes no payment and no mandate. Credits have no per-entry limit.
func TestPerEntryDebitLimitAtItsEdge(t *testing.T) {
	t.Parallel()
	f := fixture.New(t, func(c *config.Config) { c.PaymentMaxCents = 5_000_000 })
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "10000.00", payment.Debit)); err != nil {
		t.Fatalf("a debit of exactly the sandbox's 10,000.00: %v", err)
	}
	payments, mandates := count(t, f, "payments", scope), count(t, f, "mandates", scope)
	_, err := f.Payments.Create(ctx, scope, amountOf(src, "10000.01", payment.Debit))
	wantLimit(t, err, payment.LimitPerEntryDebit, "10000.00")
	if p, m := count(t, f, "payments", scope), count(t, f, "mandates", scope); p != payments || m != mandates {
		t.Errorf("after the refusal %d payments and %d mandates, want %d and %d", p, m, payments, mandates)
	}
	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "10000.01", payment.Credit)); err != nil {
		t.Errorf("a credit of 10,000.01: %v", err)
	}
}

// TestDailyLimitsAtTheirEdgesAndANewBankingDay: the day's debits may add
// up to exactly daily_debit and no cent more (remaining says what is
// left), credits likewise to daily_credit; on Saturday the totals belong
// to Monday, a new banking day, so they start from zero, and Monday goes
// on from Saturday's.
func TestDailyLimitsAtTheirEdgesAndANewBankingDay(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	friday := time.Date(2026, 11, 6, 22, 0, 0, 0, time.UTC) // 17:00 US Eastern
	f.Clock.Set(friday)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	setLimits(t, f, scope, "100.00", "250.00", "80.00")
	for _, amount := range []string{"100.00", "100.00", "49.99"} {
		if _, err := f.Payments.Create(ctx, scope, amountOf(src, amount, payment.Debit)); err != nil {
			t.Fatalf("debit %s: %v", amount, err)
		}
	}
	_, err := f.Payments.Create(ctx, scope, amountOf(src, "0.02", payment.Debit))
	wantLimit(t, err, payment.LimitDailyDebit, "0.01")
	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "0.01", payment.Debit)); err != nil {
		t.Fatalf("the last cent of the day: %v", err)
	}
	_, err = f.Payments.Create(ctx, scope, amountOf(src, "0.01", payment.Debit))
	wantLimit(t, err, payment.LimitDailyDebit, "0.00")

	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "80.00", payment.Credit)); err != nil {
		t.Fatalf("a credit of exactly daily_credit: %v", err)
	}
	_, err = f.Payments.Create(ctx, scope, amountOf(src, "0.01", payment.Credit))
	wantLimit(t, err, payment.LimitDailyCredit, "0.00")

	v, err := f.Originators.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if v.Usage != (orig.Usage{BankingDay: "2026-11-06", Debits: "250.00", Credits: "80.00"}) {
		t.Errorf("Friday's usage = %+v", v.Usage)
	}

	f.Clock.Set(friday.Add(18 * time.Hour)) // Saturday 11:00 Eastern: Monday's banking day
	for _, amount := range []string{"100.00", "100.00"} {
		if _, err := f.Payments.Create(ctx, scope, amountOf(src, amount, payment.Debit)); err != nil {
			t.Fatalf("Saturday's debit %s: %v", amount, err)
		}
	}
	f.Clock.Set(time.Date(2026, 11, 9, 14, 0, 0, 0, time.UTC)) // Monday 09:00 Eastern
	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "50.00", payment.Debit)); err != nil {
		t.Fatalf("Monday's 50.00 on top of Saturday's 200.00: %v", err)
	}
	_, err = f.Payments.Create(ctx, scope, amountOf(src, "0.01", payment.Debit))
	wantLimit(t, err, payment.LimitDailyDebit, "0.00")
	if v, err = f.Originators.Get(ctx, scope); err != nil {
		t.Fatal(err)
	}
	if v.Usage != (orig.Usage{BankingDay: "2026-11-09", Debits: "250.00", Credits: "0.00"}) {
		t.Errorf("Monday's usage = %+v", v.Usage)
	}
}

// TestConcurrentDebitsRaceForTheLastDollar: with one dollar left of the
// day, concurrent debits of one dollar each (on sources of their own, so
// only the originator's row orders them) leave exactly one stored and the
// others refused, round after round.
func TestConcurrentDebitsRaceForTheLastDollar(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	const racers = 4
	var sources []string
	for i := range racers {
		sources = append(sources, f.VerifiedSource(scope, f.Customer(scope), fmt.Sprintf("5555%04d", i)).ID)
	}
	used := 0
	for round := range 6 {
		used += 100 // each round's limit leaves one dollar beyond the rounds before
		daily := fmt.Sprintf("%d.00", used/100)
		setLimits(t, f, scope, "100.00", daily, "100.00")
		var wg sync.WaitGroup
		results := make([]error, racers)
		for i := range racers {
			wg.Go(func() { _, results[i] = f.Payments.Create(ctx, scope, amountOf(sources[i], "1.00", payment.Debit)) })
		}
		wg.Wait()
		won := 0
		for _, err := range results {
			switch {
			case err == nil:
				won++
			case errs.Is(err, errs.LimitExceeded):
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d debits won the last dollar, want exactly 1", round, won)
		}
	}
	if n := count(t, f, "payments", scope); n != 6 {
		t.Errorf("%d payments stored, want 6", n)
	}
}

// TestAnOriginatorThatIsNotActiveTakesNoPayment: production starts
// pending_review; its debits, credits and subscriptions are refused
// (originator_not_active) until an operator activates it, and again once
// it is suspended.
func TestAnOriginatorThatIsNotActiveTakesNoPayment(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	if _, err := f.Merchants.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	sub := payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.99"`), Interval: payment.Monthly,
		StartDate: "2026-11-02", Authorization: consent()}
	try := func(want errs.Code) {
		t.Helper()
		d := amountOf(src, "12.34", payment.Debit)
		d.Authorization = consent()
		_, dErr := f.Payments.Create(ctx, scope, d)
		_, cErr := f.Payments.Create(ctx, scope, amountOf(src, "12.34", payment.Credit))
		_, sErr := f.Payments.Subscribe(ctx, scope, sub)
		for name, err := range map[string]error{"debit": dErr, "credit": cErr, "subscription": sErr} {
			if got := errs.CodeOf(err); got != want || (want == "" && err != nil) {
				t.Errorf("%s: %v, want %q", name, err, want)
			}
		}
	}
	try(errs.OriginatorNotActive)
	if n := count(t, f, "mandates", scope); n != 0 {
		t.Errorf("%d mandates written by refused requests", n)
	}
	id := fixture.BankCompanyID
	if _, err := f.Originators.Set(ctx, scope, orig.Change{CompanyID: &id}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Originators.Activate(ctx, scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	try("")
	if _, err := f.Originators.Suspend(ctx, scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	try(errs.OriginatorNotActive)
}

// TestSubscriptionsAndTheLimits: a subscription above per_entry_debit is
// refused, and a day's debit total never refuses one; its scheduled debits are counted into the day's usage, and one
// is created even when the day's debits have reached the limit.
func TestSubscriptionsAndTheLimits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	setLimits(t, f, scope, "50.00", "60.00", "60.00")
	in := payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"50.01"`), Interval: payment.Monthly, StartDate: "2026-11-02"}
	_, err := f.Payments.Subscribe(ctx, scope, in)
	wantLimit(t, err, payment.LimitPerEntryDebit, "50.00")
	in.Amount = json.RawMessage(`"50.00"`)
	if _, err := f.Payments.Subscribe(ctx, scope, in); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Payments.Create(ctx, scope, amountOf(src, "50.00", payment.Debit)); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Payments.RunDue(ctx); err != nil || n != 1 {
		t.Fatalf("RunDue = %d, %v; want the due debit created past the day's limit", n, err)
	}
	v, err := f.Originators.Get(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if v.Usage.Debits != "100.00" {
		t.Errorf("usage %s, want 100.00 (the scheduled debit counted)", v.Usage.Debits)
	}
	_, err = f.Payments.Create(ctx, scope, amountOf(src, "0.01", payment.Debit))
	wantLimit(t, err, payment.LimitDailyDebit, "0.00")
	// The day's debits are past the limit; a new subscription within
	// per_entry_debit is still taken.
	if _, err := f.Payments.Subscribe(ctx, scope, in); err != nil {
		t.Fatalf("a subscription on a day past the debit limit: %v", err)
	}
}

// TestASuspendedOriginatorsPendingPaymentsAreCanceledAtOrigination: the
// originator resource is the payment service's Originators: a production
// debit created while its originator was active, then suspended by the
// operator, is canceled (originator_suspended) by the run that would have
// sent it, and is in no file.
func TestASuspendedOriginatorsPendingPaymentsAreCanceledAtOrigination(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := envs(t, f)["production"]
	src := f.VerifiedSource(scope, f.Customer(scope), "99990001").ID
	debit, credit := newDebit(t, f, scope, src, 1700), newCredit(t, f, scope, src)
	if _, err := f.Originators.Suspend(ctx, scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if written, err := originator(t, f).Run(ctx); err != nil || len(written) != 0 {
		t.Fatalf("Run = %v, %v; want no file", written, err)
	}
	for _, id := range []string{debit.ID, credit.ID} {
		wantState(t, f, scope, id, payment.Voided, payment.CancelOriginatorSuspended)
		if inFile(t, f, id) {
			t.Errorf("%s is in a file", id)
		}
	}
	if got := canceledEvents(t, f)[debit.ID]; got != payment.CancelOriginatorSuspended {
		t.Errorf("payment.canceled of the debit: %q", got)
	}
}

// TestBankingDay: a payment counts toward its US Eastern date when that
// is a banking day, else toward the next one (weekends, holidays).
func TestBankingDay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 6, 3, 0, 0, 0, time.UTC), "2026-11-05"},   // Thursday 22:00 Eastern
		{time.Date(2026, 11, 7, 4, 59, 59, 0, time.UTC), "2026-11-06"}, // Friday 23:59:59 Eastern
		{time.Date(2026, 11, 7, 5, 0, 0, 0, time.UTC), "2026-11-09"},   // Saturday 00:00 Eastern
		{time.Date(2026, 11, 9, 4, 59, 0, 0, time.UTC), "2026-11-09"},  // Sunday 23:59 Eastern
		{time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC), "2026-11-27"}, // Thanksgiving
		{time.Date(2026, 12, 24, 23, 0, 0, 0, time.UTC), "2026-12-24"}, // Christmas Eve
		{time.Date(2026, 12, 25, 12, 0, 0, 0, time.UTC), "2026-12-28"}, // Christmas, a Friday
	} {
		if got := payment.BankingDay(c.at).Format(time.DateOnly); got != c.want {
			t.Errorf("BankingDay(%s) = %s, want %s", c.at, got, c.want)
		}
	}
}
