package payment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// envs is a merchant's sandbox and its activated production scope.
func envs(t *testing.T, f *fixture.Fixture) map[string]tenant.Scope {
	t.Helper()
	m := f.Merchant("Acme")
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return map[string]tenant.Scope{
		"sandbox":    {MerchantID: m.Merchant.ID, Env: tenant.Sandbox},
		"production": {MerchantID: m.Merchant.ID, Env: tenant.Production},
	}
}

// newDebit creates a debit of cents on src under a new single mandate.
func newDebit(t *testing.T, f *fixture.Fixture, scope tenant.Scope, src string, cents int) payment.Payment {
	t.Helper()
	in := payment.Input{SourceID: src, Amount: json.RawMessage(fmt.Sprintf(`"%d.%02d"`, cents/100, cents%100)),
		Direction: payment.Debit, Authorization: consent()}
	p, err := f.Payments.Create(ctx, scope, in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newCredit(t *testing.T, f *fixture.Fixture, scope tenant.Scope, src string) payment.Payment {
	t.Helper()
	p, err := f.Payments.Create(ctx, scope, pay(src, payment.Credit))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantState checks a payment's status and cancel_reason ("" for none).
func wantState(t *testing.T, f *fixture.Fixture, scope tenant.Scope, id string, status payment.Status, reason string) {
	t.Helper()
	p, err := f.Payments.Get(ctx, scope, id)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	if p.CancelReason != nil {
		got = *p.CancelReason
	}
	if p.Status != status || got != reason {
		t.Errorf("%s: %s (cancel_reason %q), want %s (%q)", id, p.Status, got, status, reason)
	}
}

// canceledEvents returns the cancel_reason of each payment.canceled event
// by payment id.
func canceledEvents(t *testing.T, f *fixture.Fixture) map[string]string {
	t.Helper()
	var rows []struct {
		ID     string  `db:"id"`
		Reason *string `db:"reason"`
	}
	if err := f.SQL().Select(&rows, `SELECT data->>'payment_id' AS id, data->>'cancel_reason' AS reason FROM events WHERE type = 'payment.canceled'`); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		if r.Reason == nil {
			t.Errorf("payment.canceled of %s has no cancel_reason", r.ID)
			continue
		}
		out[r.ID] = *r.Reason
	}
	return out
}

// originator writes production files into a temporary folder.
func originator(t *testing.T, f *fixture.Fixture) *ach.Originator {
	cfg := ach.Config{Dir: t.TempDir(), ODFIRouting: "121042882", DestinationRouting: "231380104", DestinationName: "Federal Reserve Bank",
		OriginName: "Fundsource Bank", CompanyName: "FUNDSOURCE", CompanyID: "1234567890"}
	return ach.NewOriginator(cfg, f.DB.ACH(), f.Funding, f.Payments, f.Consequences, f.Clock.Now)
}

// inFile says whether a payment has an ACH entry.
func inFile(t *testing.T, f *fixture.Fixture, id string) bool {
	t.Helper()
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM ach_entries WHERE payment_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestABlockCancelsTheSourcesUnsentDebitsAtOnce: a return that blocks a
// source (R10) cancels its other pending debits in the return's
// transaction (funding_source_blocked, payment.canceled with the reason)
// and leaves its credits and other sources' debits alone; in production a
// debit already in a file is not touched.
func TestABlockCancelsTheSourcesUnsentDebitsAtOnce(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	for env, scope := range envs(t, f) {
		t.Run(env, func(t *testing.T) {
			src := f.VerifiedSource(scope, f.Customer(scope), "44440001").ID
			other := f.VerifiedSource(scope, f.Customer(scope), "55550002").ID
			returned := newDebit(t, f, scope, src, 2500)
			var sent payment.Payment
			if scope.Env == tenant.Production {
				sent = newDebit(t, f, scope, src, 2600)
				if _, err := originator(t, f).Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			unsent := newDebit(t, f, scope, src, 2700)
			credit := newCredit(t, f, scope, src)
			elsewhere := newDebit(t, f, scope, other, 2800)

			if scope.Env == tenant.Sandbox {
				if _, err := f.Consequences.SimulateReturn(ctx, scope, returned.ID, "R10"); err != nil {
					t.Fatal(err)
				}
			} else {
				err := f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
					return f.Consequences.ReturnTx(ctx, tx, scope, returned.ID, "R10")
				})
				if err != nil {
					t.Fatal(err)
				}
				wantState(t, f, scope, sent.ID, payment.Pending, "")
			}
			wantState(t, f, scope, returned.ID, payment.Failed, "")
			wantState(t, f, scope, unsent.ID, payment.Voided, payment.CancelSourceBlocked)
			wantState(t, f, scope, credit.ID, payment.Pending, "")
			wantState(t, f, scope, elsewhere.ID, payment.Pending, "")
			if got := canceledEvents(t, f)[unsent.ID]; got != payment.CancelSourceBlocked {
				t.Errorf("payment.canceled cancel_reason = %q, want %q", got, payment.CancelSourceBlocked)
			}
		})
	}
}

// TestARemovalCancelsTheSourcesUnsentDebitsAndCredits: removing a source
// cancels its pending debits and credits (funding_source_removed); in
// production one already in a file goes on.
func TestARemovalCancelsTheSourcesUnsentDebitsAndCredits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	for env, scope := range envs(t, f) {
		t.Run(env, func(t *testing.T) {
			src := f.VerifiedSource(scope, f.Customer(scope), "66660003").ID
			var sent payment.Payment
			if scope.Env == tenant.Production {
				sent = newCredit(t, f, scope, src)
				if _, err := originator(t, f).Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			debit, credit := newDebit(t, f, scope, src, 1200), newCredit(t, f, scope, src)
			if _, err := f.Consequences.Remove(ctx, scope, src); err != nil {
				t.Fatal(err)
			}
			wantState(t, f, scope, debit.ID, payment.Voided, payment.CancelSourceRemoved)
			wantState(t, f, scope, credit.ID, payment.Voided, payment.CancelSourceRemoved)
			if sent.ID != "" {
				wantState(t, f, scope, sent.ID, payment.Pending, "")
			}
			ev := canceledEvents(t, f)
			if ev[debit.ID] != payment.CancelSourceRemoved || ev[credit.ID] != payment.CancelSourceRemoved {
				t.Errorf("payment.canceled reasons = %v", ev)
			}
		})
	}
}

// TestARevocationCancelsTheMandatesUnsentDebits: revoking a single
// mandate cancels its debit, and revoking a recurring one its
// subscription's pending debit (mandate_revoked); a debit under another
// mandate of the same source stays pending; a merchant's cancel says
// requested.
func TestARevocationCancelsTheMandatesUnsentDebits(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	for env, scope := range envs(t, f) {
		t.Run(env, func(t *testing.T) {
			src := f.VerifiedSource(scope, f.Customer(scope), "77770004").ID
			single, kept, canceled := newDebit(t, f, scope, src, 1300), newDebit(t, f, scope, src, 1400), newDebit(t, f, scope, src, 1500)
			sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.00"`),
				Interval: payment.Monthly, StartDate: "2026-11-02", Authorization: consent()})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := f.Payments.RunDue(ctx); err != nil || n != 1 {
				t.Fatalf("RunDue = %d, %v", n, err)
			}
			var subDebit string
			if err := f.SQL().Get(&subDebit, `SELECT id FROM payments WHERE subscription_id = $1`, sub.ID); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{*single.MandateID, *sub.MandateID} {
				if _, err := f.Payments.Revoke(ctx, scope, m, payment.RevokeInput{}, audit.Operator("test")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.Payments.Cancel(ctx, scope, canceled.ID); err != nil {
				t.Fatal(err)
			}
			wantState(t, f, scope, single.ID, payment.Voided, payment.CancelMandateRevoked)
			wantState(t, f, scope, subDebit, payment.Voided, payment.CancelMandateRevoked)
			wantState(t, f, scope, kept.ID, payment.Pending, "")
			wantState(t, f, scope, canceled.ID, payment.Voided, payment.CancelRequested)
			ev := canceledEvents(t, f)
			if ev[single.ID] != payment.CancelMandateRevoked || ev[subDebit] != payment.CancelMandateRevoked || ev[canceled.ID] != payment.CancelRequested {
				t.Errorf("payment.canceled reasons = %v", ev)
			}
		})
	}
}

// standingCase puts a pending payment in a state the revocation-time
// cancellation did not see (written straight to the rows, as a change
// racing the claim would leave it), for the check at departure.
type standingCase struct {
	name   string
	credit bool
	spoil  string // SQL on $1 merchant, $2 environment, $3 payment id
	want   string // cancel_reason, "" when it leaves
}

var standingCases = []standingCase{
	{"blocked source, debit", false, `UPDATE funding_sources SET block_code = 'R10', blocked_at = now()
		WHERE (merchant_id, environment, id) = (SELECT merchant_id, environment, funding_source_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3)`,
		payment.CancelSourceBlocked},
	{"blocked source, credit", true, `UPDATE funding_sources SET block_code = 'R10', blocked_at = now()
		WHERE (merchant_id, environment, id) = (SELECT merchant_id, environment, funding_source_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3)`,
		""},
	{"removed source, debit", false, `UPDATE funding_sources SET removed_at = now()
		WHERE (merchant_id, environment, id) = (SELECT merchant_id, environment, funding_source_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3)`,
		payment.CancelSourceRemoved},
	{"removed source, credit", true, `UPDATE funding_sources SET removed_at = now()
		WHERE (merchant_id, environment, id) = (SELECT merchant_id, environment, funding_source_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3)`,
		payment.CancelSourceRemoved},
	{"revoked mandate", false, `UPDATE mandates SET status = 'revoked', revoked_at = now()
		WHERE (merchant_id, environment, id) = (SELECT merchant_id, environment, mandate_id FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3)`,
		payment.CancelMandateRevoked},
	{"single mandate used by an earlier debit", false, `INSERT INTO payments (merchant_id, environment, id, funding_source_id, customer_id, direction,
		amount_cents, status, created_at, mandate_id)
		SELECT merchant_id, environment, id || 'x', funding_source_id, customer_id, 'debit', amount_cents, 'processed', created_at - interval '1 day', mandate_id
		FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		payment.CancelMandateRevoked},
	{"single mandate whose earlier debit failed", false, `INSERT INTO payments (merchant_id, environment, id, funding_source_id, customer_id, direction,
		amount_cents, status, failure_code, created_at, mandate_id)
		SELECT merchant_id, environment, id || 'x', funding_source_id, customer_id, 'debit', amount_cents, 'failed', 'R01', created_at - interval '1 day', mandate_id
		FROM payments WHERE merchant_id = $1 AND environment = $2 AND id = $3`,
		""},
	{"nothing changed", false, `SELECT $1::text, $2::text, $3::text`, ""},
}

// TestDepartureChecksTheAuthorizationAgain: a payment whose source or
// mandate changed after it was created is canceled, with the reason and
// payment.canceled, by the transaction that claims it for an ACH file
// (production) or settles it (sandbox), and is not in the file; the others
// leave.
func TestDepartureChecksTheAuthorizationAgain(t *testing.T) {
	t.Parallel()
	for _, c := range standingCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fixture.New(t)
			for env, scope := range envs(t, f) {
				src := f.VerifiedSource(scope, f.Customer(scope), "88880005").ID
				var p payment.Payment
				if c.credit {
					p = newCredit(t, f, scope, src)
				} else {
					p = newDebit(t, f, scope, src, 1600)
				}
				if _, err := f.SQL().Exec(c.spoil, scope.MerchantID, scope.Env, p.ID); err != nil {
					t.Fatal(err)
				}
				if scope.Env == tenant.Production {
					if _, err := originator(t, f).Run(ctx); err != nil {
						t.Fatal(err)
					}
					if got := inFile(t, f, p.ID); got != (c.want == "") {
						t.Errorf("%s: in the file = %v, want %v", env, got, c.want == "")
					}
				} else {
					f.Clock.Advance(f.Config.PaymentSettleDelay)
					if _, err := f.Consequences.SettleDue(ctx); err != nil {
						t.Fatal(err)
					}
				}
				switch {
				case c.want != "":
					wantState(t, f, scope, p.ID, payment.Voided, c.want)
					if got := canceledEvents(t, f)[p.ID]; got != c.want {
						t.Errorf("%s: payment.canceled cancel_reason = %q, want %q", env, got, c.want)
					}
				case scope.Env == tenant.Production:
					wantState(t, f, scope, p.ID, payment.Pending, "") // sent, settles later
				default:
					wantState(t, f, scope, p.ID, payment.Processed, "")
				}
			}
		})
	}
}

// suspended says no originator may send entries.
type suspended struct{}

// SameDay reports false: a suspended originator sends nothing same-day.
func (suspended) SameDay(context.Context, tenant.Scope) (bool, error) { return false, nil }

func (suspended) State(context.Context, payment.Store, tenant.Scope) (payment.OriginatorState, error) {
	return payment.OriginatorState{CompanyIDAssigned: true}, nil
}

// TestASuspendedOriginatorsPaymentsDoNotLeave: the originator hook cancels
// at departure (originator_suspended), debits and credits alike.
func TestASuspendedOriginatorsPaymentsDoNotLeave(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := envs(t, f)["production"]
	src := f.VerifiedSource(scope, f.Customer(scope), "99990001").ID
	debit, credit := newDebit(t, f, scope, src, 1700), newCredit(t, f, scope, src)
	f.Payments.WithOriginators(suspended{})
	if written, err := originator(t, f).Run(ctx); err != nil || len(written) != 0 {
		t.Fatalf("Run = %v, %v; want no file", written, err)
	}
	wantState(t, f, scope, debit.ID, payment.Voided, payment.CancelOriginatorSuspended)
	wantState(t, f, scope, credit.ID, payment.Voided, payment.CancelOriginatorSuspended)
}

// TestARevocationRacingOriginationNeverBoth: revocations, removals and
// blocks commit while origination claims the same debits; each debit ends
// either in the file (still pending, its cancellation having found it
// sent) or canceled and in no file, never both and never neither.
func TestARevocationRacingOriginationNeverBoth(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := envs(t, f)["production"]
	o := originator(t, f)
	var ids []string
	for round := range 12 {
		src := f.VerifiedSource(scope, f.Customer(scope), fmt.Sprintf("1212%04d", round)).ID
		debits := []payment.Payment{newDebit(t, f, scope, src, 1000+round), newDebit(t, f, scope, src, 1100+round)}
		for _, d := range debits {
			ids = append(ids, d.ID)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, errs[0] = o.Run(ctx) })
		wg.Go(func() {
			switch round % 3 {
			case 0:
				_, errs[1] = f.Payments.Revoke(ctx, scope, *debits[0].MandateID, payment.RevokeInput{}, audit.Operator("test"))
				if errs[1] == nil {
					_, errs[1] = f.Payments.Revoke(ctx, scope, *debits[1].MandateID, payment.RevokeInput{}, audit.Operator("test"))
				}
			case 1:
				_, errs[1] = f.Consequences.Remove(ctx, scope, src)
			default:
				errs[1] = f.DB.Consequences().WithTx(ctx, func(tx consequence.Tx) error {
					return f.Consequences.SourceReturnedTx(ctx, tx, scope, src, "R10")
				})
			}
		})
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if _, err := o.Run(ctx); err != nil { // whatever the race left pending and unclaimed
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, id := range ids {
		p, err := f.Payments.Get(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		sent := inFile(t, f, id)
		switch {
		case sent && p.Status == payment.Pending:
			outcomes["sent"]++
		case !sent && p.Status == payment.Voided && p.CancelReason != nil:
			outcomes["canceled"]++
		default:
			t.Errorf("%s: in a file %v, status %s, cancel_reason %v", id, sent, p.Status, p.CancelReason)
		}
	}
	var keys []string
	for k, n := range outcomes {
		keys = append(keys, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(keys)
	t.Logf("outcomes: %s", strings.Join(keys, " "))
}
