package funding_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

var ctx = context.Background()

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code errs.Code) *errs.Error {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
	return e
}

// wantAttempts checks the attempts_remaining detail of an error.
func wantAttempts(t *testing.T, e *errs.Error, want int) {
	t.Helper()
	if got := e.Details["attempts_remaining"]; got != want {
		t.Errorf("attempts_remaining = %v, want %d", got, want)
	}
}

// pending is a fixture with one Unverified source whose micro-deposits
// were sent.
type pending struct {
	*fixture.Fixture
	scope tenant.Scope
	id    string
}

func newPending(t *testing.T) pending {
	t.Helper()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "123456789")
	if _, err := f.Funding.InitiateVerification(ctx, scope, src.ID); err != nil {
		t.Fatalf("initiate: %v", err)
	}
	return pending{Fixture: f, scope: scope, id: src.ID}
}

func (p pending) amounts(t *testing.T) [2]int {
	t.Helper()
	a, _, err := p.Funding.SandboxAmounts(ctx, p.scope, p.id)
	if err != nil {
		t.Fatalf("sandbox amounts: %v", err)
	}
	return a
}

// wrong returns a pair that differs from the deposited one.
func (p pending) wrong(t *testing.T) [2]int {
	right := p.amounts(t)
	if right[0] == funding.MaxDeposit || right[1] == funding.MaxDeposit {
		return [2]int{funding.MinDeposit, funding.MinDeposit}
	}
	return [2]int{funding.MaxDeposit, funding.MaxDeposit}
}

func (p pending) verify(amounts [2]int) (funding.Source, error) {
	return p.Funding.VerifyMicroDeposits(ctx, p.scope, p.id, amounts)
}

func TestInitiateVerificationOpensAPendingPair(t *testing.T) {
	t.Parallel()
	f := fixture.New(t) // Monday 2026-11-02 15:04:05 UTC
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "123456789")
	got, err := f.Funding.InitiateVerification(ctx, scope, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != funding.Unverified {
		t.Errorf("status = %s, want %s while deposits are pending", got.Status, funding.Unverified)
	}
	v := got.Verification
	if v == nil {
		t.Fatal("verification = nil, want the pending pair")
	}
	if v.Status != funding.DepositPending || v.AttemptsRemaining != funding.MaxAttempts {
		t.Errorf("verification = %s with %d attempts, want %s with %d", v.Status, v.AttemptsRemaining, funding.DepositPending, funding.MaxAttempts)
	}
	if want := fixture.Start.Add(funding.VerificationTTL); !v.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %v, want %v", v.ExpiresAt, want)
	}
	if v.ExpectedArrivalDate != "2026-11-02" {
		t.Errorf("expected_arrival_date = %s, want 2026-11-02 (same-day, in the 13:45 window)", v.ExpectedArrivalDate)
	}
	a, _, err := f.Funding.SandboxAmounts(ctx, scope, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range a {
		if c < funding.MinDeposit || c > funding.MaxDeposit {
			t.Errorf("deposit of %d cents, want %d to %d", c, funding.MinDeposit, funding.MaxDeposit)
		}
	}
}

func TestVerifyBeforeInitiationIsNotInitiated(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "123456789")
	_, err := f.Funding.VerifyMicroDeposits(ctx, scope, src.ID, [2]int{10, 20})
	wantCode(t, err, errs.VerificationNotInitiated)
	_, _, err = f.Funding.SandboxAmounts(ctx, scope, src.ID)
	wantCode(t, err, errs.VerificationNotInitiated)
}

func TestInitiateWhileDepositsAreOpenIsPending(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	_, err := p.Funding.InitiateVerification(ctx, p.scope, p.id)
	wantAttempts(t, wantCode(t, err, errs.VerificationPending), funding.MaxAttempts)
}

func TestMatchingAmountsVerifyTheSourceInEitherOrder(t *testing.T) {
	t.Parallel()
	for name, swap := range map[string]bool{"as sent": false, "reversed": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPending(t)
			a := p.amounts(t)
			if swap {
				a[0], a[1] = a[1], a[0]
			}
			got, err := p.verify(a)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != funding.Verified || got.Verification.Status != funding.DepositSucceeded {
				t.Errorf("got %s with verification %s, want %s with %s", got.Status, got.Verification.Status, funding.Verified, funding.DepositSucceeded)
			}
			stored, err := p.Funding.Get(ctx, p.scope, p.id)
			if err != nil || stored.Status != funding.Verified {
				t.Errorf("stored status = %s (%v), want %s", stored.Status, err, funding.Verified)
			}
		})
	}
}

func TestVerifiedSourceRefusesInitiationAndVerification(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	right := p.amounts(t)
	if _, err := p.verify(right); err != nil {
		t.Fatal(err)
	}
	_, err := p.verify(right)
	wantCode(t, err, errs.FundingSourceAlreadyVerified)
	_, err = p.Funding.InitiateVerification(ctx, p.scope, p.id)
	wantCode(t, err, errs.FundingSourceAlreadyVerified)

	// A source Verified at creation is refused the same way.
	v := p.VerifiedSource(p.scope, p.Customer(p.scope), "555566667777")
	_, err = p.Funding.InitiateVerification(ctx, p.scope, v.ID)
	wantCode(t, err, errs.FundingSourceAlreadyVerified)
}

func TestMismatchesCountDownAndTheThirdFailsTheVerification(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	wrong := p.wrong(t)
	for i, left := range []int{2, 1, 0} {
		refused, err := p.verify(wrong)
		e := wantCode(t, err, errs.VerificationFailed)
		if e.Param != "amounts" {
			t.Errorf("miss %d: param = %q, want amounts", i+1, e.Param)
		}
		wantAttempts(t, e, left)
		got, err := p.Funding.Get(ctx, p.scope, p.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Verification.AttemptsRemaining != left {
			t.Errorf("miss %d: stored attempts_remaining = %d, want %d", i+1, got.Verification.AttemptsRemaining, left)
		}
		// The refusal comes with the source as it left it, as stored.
		if v := refused.Verification; refused.ID != p.id || v == nil || v.AttemptsRemaining != left || v.Status != got.Verification.Status {
			t.Errorf("miss %d: refusal's source %q with verification %+v, want %s with the stored one %+v", i+1, refused.ID, v, p.id, got.Verification)
		}
	}
	got, err := p.Funding.Get(ctx, p.scope, p.id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verification.Status != funding.DepositFailed || got.Status != funding.Unverified {
		t.Errorf("after three misses: %s, verification %s; want %s, %s", got.Status, got.Verification.Status, funding.Unverified, funding.DepositFailed)
	}
	// Even the right pair is refused now.
	refused, err := p.verify(p.amounts(t))
	wantAttempts(t, wantCode(t, err, errs.VerificationAttemptsExceeded), 0)
	if v := refused.Verification; refused.ID != p.id || v == nil || v.Status != funding.DepositFailed {
		t.Errorf("attempts exceeded: source %q with verification %+v, want %s failed", refused.ID, v, p.id)
	}
}

func TestFourthInitiationIsLimitReached(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	for seq := 2; seq <= funding.MaxInitiations; seq++ {
		wrong := p.wrong(t)
		for range funding.MaxAttempts {
			if _, err := p.verify(wrong); !errs.Is(err, errs.VerificationFailed) {
				t.Fatalf("initiation %d: got %v, want verification_failed", seq-1, err)
			}
		}
		if _, err := p.Funding.InitiateVerification(ctx, p.scope, p.id); err != nil {
			t.Fatalf("initiation %d: %v", seq, err)
		}
	}
	// The third pair expires unused: still no fourth.
	p.Clock.Advance(funding.VerificationTTL)
	_, err := p.Funding.InitiateVerification(ctx, p.scope, p.id)
	wantCode(t, err, errs.VerificationLimitReached)
}

func TestExpiredDepositsRefuseVerificationAndAllowANewInitiation(t *testing.T) {
	t.Parallel()
	for _, sweep := range []bool{false, true} {
		name := map[bool]string{false: "found expired on verify", true: "expired by the sweep"}[sweep]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPending(t)
			right := p.amounts(t)
			p.Clock.Advance(funding.VerificationTTL - 1)
			if _, err := p.Funding.InitiateVerification(ctx, p.scope, p.id); !errs.Is(err, errs.VerificationPending) {
				t.Fatalf("just before expiry: got %v, want verification_pending", err)
			}
			p.Clock.Advance(1)
			if sweep {
				n, err := p.Funding.ExpireDue(ctx)
				if err != nil || n != 1 {
					t.Fatalf("ExpireDue = %d, %v; want 1, nil", n, err)
				}
			}
			for range 2 { // the expiry is committed: a retry is refused alike
				refused, err := p.verify(right)
				wantAttempts(t, wantCode(t, err, errs.VerificationExpired), 0)
				if v := refused.Verification; refused.ID != p.id || v == nil || v.Status != funding.DepositExpired {
					t.Errorf("expired: source %q with verification %+v, want %s expired", refused.ID, v, p.id)
				}
			}
			got, err := p.Funding.InitiateVerification(ctx, p.scope, p.id)
			if err != nil {
				t.Fatalf("initiate after expiry: %v", err)
			}
			if got.Verification.Status != funding.DepositPending || got.Verification.AttemptsRemaining != funding.MaxAttempts {
				t.Errorf("new verification = %s with %d attempts, want pending with %d", got.Verification.Status, got.Verification.AttemptsRemaining, funding.MaxAttempts)
			}
		})
	}
}

func TestParallelGuessesNeverExceedTheAttempts(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	wrong := p.wrong(t)
	const n = 10
	codes := make([]errs.Code, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := p.verify(wrong)
			codes[i] = errs.CodeOf(err)
		})
	}
	close(start)
	wg.Wait()
	count := map[errs.Code]int{}
	for _, c := range codes {
		count[c]++
	}
	want := map[errs.Code]int{errs.VerificationFailed: funding.MaxAttempts, errs.VerificationAttemptsExceeded: n - funding.MaxAttempts}
	if len(count) != len(want) || count[errs.VerificationFailed] != want[errs.VerificationFailed] ||
		count[errs.VerificationAttemptsExceeded] != want[errs.VerificationAttemptsExceeded] {
		t.Errorf("got %v, want %v", count, want)
	}
}

func TestVerificationOfUnknownOrRemovedSourceIsNotFound(t *testing.T) {
	t.Parallel()
	p := newPending(t)
	if _, err := p.Consequences.Remove(ctx, p.scope, p.id); err != nil {
		t.Fatal(err)
	}
	other := p.Sandbox("Other") // another merchant's scope does not see it
	for _, c := range []struct {
		name  string
		scope tenant.Scope
		id    string
	}{
		{"removed", p.scope, p.id},
		{"unknown", p.scope, "fs_unknown"},
		{"other merchant", other, p.id},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Funding.InitiateVerification(ctx, c.scope, c.id)
			wantCode(t, err, errs.FundingSourceNotFound)
			_, err = p.Funding.VerifyMicroDeposits(ctx, c.scope, c.id, [2]int{1, 2})
			wantCode(t, err, errs.FundingSourceNotFound)
		})
	}
}

// sourceEvents returns the status in each event of typ about the source,
// oldest first.
func (p pending) sourceEvents(t *testing.T, typ string) []string {
	t.Helper()
	var out []string
	err := p.SQL().Select(&out, `SELECT data->>'status' FROM events WHERE type = $1 AND data->>'funding_source_id' = $2 ORDER BY created_at, id`, typ, p.id)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantEvents fails unless the source has exactly the given statuses in
// events of typ.
func (p pending) wantEvents(t *testing.T, typ string, statuses ...string) {
	t.Helper()
	got := p.sourceEvents(t, typ)
	if strings.Join(got, ",") != strings.Join(statuses, ",") {
		t.Errorf("%s events with statuses %v, want %v", typ, got, statuses)
	}
}

// TestEachVerificationOutcomeRecordsOneEvent: initiation records
// verification_pending, and the outcome records one event whatever
// follows: verified, failed (not one per miss) or expired (whether the
// expiry is found by a verify or by the sweep, which then skips it).
func TestEachVerificationOutcomeRecordsOneEvent(t *testing.T) {
	t.Parallel()
	t.Run("verified", func(t *testing.T) {
		t.Parallel()
		p := newPending(t)
		p.wantEvents(t, event.FundingSourceVerificationPending, string(funding.PendingVerified))
		right := p.amounts(t)
		if _, err := p.verify(right); err != nil {
			t.Fatal(err)
		}
		if _, err := p.verify(right); !errs.Is(err, errs.FundingSourceAlreadyVerified) {
			t.Fatalf("a second verify: %v", err)
		}
		p.wantEvents(t, event.FundingSourceVerified, string(funding.Verified))
		p.wantEvents(t, event.FundingSourceVerificationFailed)
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		p := newPending(t)
		wrong := p.wrong(t)
		for range funding.MaxAttempts + 1 {
			p.verify(wrong)
		}
		p.wantEvents(t, event.FundingSourceVerificationFailed, string(funding.Unverified))
		p.wantEvents(t, event.FundingSourceVerified)
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		p := newPending(t)
		// A second source whose deposits only the sweep expires.
		swept := pending{Fixture: p.Fixture, scope: p.scope, id: p.Source(p.scope, p.Customer(p.scope), "987654321").ID}
		if _, err := p.Funding.InitiateVerification(ctx, p.scope, swept.id); err != nil {
			t.Fatal(err)
		}
		right := p.amounts(t)
		p.Clock.Advance(funding.VerificationTTL)
		for range 2 {
			if _, err := p.verify(right); !errs.Is(err, errs.VerificationExpired) {
				t.Fatalf("verify at expiry: %v", err)
			}
		}
		if n, err := p.Funding.ExpireDue(ctx); err != nil || n != 1 {
			t.Fatalf("ExpireDue = %d, %v; want only the source no verify found expired", n, err)
		}
		if n, err := p.Funding.ExpireDue(ctx); err != nil || n != 0 {
			t.Errorf("a second sweep expired %d, %v", n, err)
		}
		p.wantEvents(t, event.FundingSourceVerificationExpired, string(funding.Unverified))
		swept.wantEvents(t, event.FundingSourceVerificationExpired, string(funding.Unverified))
	})
}

// TestStoredAmountsSealToOneLength: whatever the amounts, one digit or two,
// every stored amounts ciphertext has the same length, and each opens to
// its amounts; a row sealed unpadded still opens and verifies.
func TestStoredAmountsSealToOneLength(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	user := f.Customer(scope)
	pairs := [][2]int{{1, 1}, {1, 9}, {9, 10}, {10, 10}, {5, 99}, {99, 99}}
	ids := make([]string, len(pairs))
	for i, p := range pairs {
		src := f.Source(scope, user, fmt.Sprintf("12345678%d", i))
		next := p[:]
		f.Funding.SetDraw(func() int {
			c := next[0]
			next = next[1:]
			return c
		})
		if _, err := f.Funding.InitiateVerification(ctx, scope, src.ID); err != nil {
			t.Fatalf("initiate %v: %v", p, err)
		}
		ids[i] = src.ID
	}
	var lengths []int
	if err := f.SQL().Select(&lengths, `SELECT octet_length(amounts_ciphertext) FROM micro_deposits`); err != nil {
		t.Fatal(err)
	}
	if len(lengths) != len(pairs) {
		t.Fatalf("%d stored amounts, want %d", len(lengths), len(pairs))
	}
	for _, n := range lengths[1:] {
		if n != lengths[0] {
			t.Fatalf("stored amounts ciphertexts have lengths %v, want one length", lengths)
		}
	}
	for i, p := range pairs {
		if got, _, err := f.Funding.SandboxAmounts(ctx, scope, ids[i]); err != nil || got != p {
			t.Errorf("amounts of %s: %v, %v; want %v", ids[i], got, err, p)
		}
	}

	// A row sealed before amounts were padded.
	keyID, sealed := f.Vault.Seal([]byte("5,34"), funding.AmountsAAD(ids[0], 1))
	if _, err := f.SQL().Exec(`UPDATE micro_deposits SET amounts_key_id = $1, amounts_ciphertext = $2 WHERE funding_source_id = $3`,
		keyID, sealed, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got, _, err := f.Funding.SandboxAmounts(ctx, scope, ids[0]); err != nil || got != [2]int{5, 34} {
		t.Fatalf("unpadded row opened as %v, %v", got, err)
	}
	src, err := f.Funding.VerifyMicroDeposits(ctx, scope, ids[0], [2]int{34, 5})
	if err != nil || src.Status != funding.Verified {
		t.Fatalf("verify against an unpadded row: %v, %v", src.Status, err)
	}
}

// TestExpiredVerificationShowsWhenItExpired: a verification expired early
// (the sandbox's expiry) shows the moment it expired, never the deadline
// ahead; one swept at its deadline, or an hour after it, shows the
// deadline; a second before it, the sweep leaves it pending.
func TestExpiredVerificationShowsWhenItExpired(t *testing.T) {
	t.Parallel()
	t.Run("sandbox expiry", func(t *testing.T) {
		t.Parallel()
		p := newPending(t)
		p.Clock.Advance(time.Hour)
		now := p.Clock.Now()
		if _, err := p.Funding.SimulateDepositExpiry(ctx, p.scope, p.id); err != nil {
			t.Fatal(err)
		}
		got, err := p.Funding.Get(ctx, p.scope, p.id)
		if v := got.Verification; err != nil || v == nil || v.Status != funding.DepositExpired || !v.ExpiresAt.Equal(now) {
			t.Errorf("after the sandbox's expiry: %+v, %v; want expired at %s", got.Verification, err, now)
		}
	})
	for _, late := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("swept %s late", late), func(t *testing.T) {
			t.Parallel()
			p := newPending(t)
			deadline := p.Clock.Now().Add(funding.VerificationTTL)
			p.Clock.Advance(funding.VerificationTTL - time.Second)
			if n, err := p.Funding.ExpireDue(ctx); err != nil || n != 0 {
				t.Fatalf("a second before the deadline the sweep expired %d, %v", n, err)
			}
			p.Clock.Advance(time.Second + late)
			if n, err := p.Funding.ExpireDue(ctx); err != nil || n != 1 {
				t.Fatalf("ExpireDue = %d, %v; want 1", n, err)
			}
			got, err := p.Funding.Get(ctx, p.scope, p.id)
			if v := got.Verification; err != nil || v == nil || v.Status != funding.DepositExpired || !v.ExpiresAt.Equal(deadline) {
				t.Errorf("swept %s late: %+v, %v; want expired at the deadline %s", late, got.Verification, err, deadline)
			}
		})
	}
}
