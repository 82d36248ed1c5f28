package funding_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// kept reads the account check a source keeps: its result ("" when none
// is kept) and its check sequence.
func kept(t *testing.T, f *fixture.Fixture, id string) (result string, seq int64) {
	t.Helper()
	var r struct {
		Result *string `db:"check_result"`
		Seq    int64   `db:"check_seq"`
	}
	if err := f.SQL().Get(&r, `SELECT check_result, check_seq FROM funding_sources WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if r.Result == nil {
		return "", r.Seq
	}
	return *r.Result, r.Seq
}

func get(t *testing.T, f *fixture.Fixture, scope tenant.Scope, id string) funding.Source {
	t.Helper()
	src, err := f.Funding.Get(ctx, scope, id)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestAnotherMerchantsReturnChangesTheKeptCheckOnTheNextGet: B's source
// keeps its check; a return on A's (removed) source of the same account,
// in A's transaction, marks B's kept check, and B's next GET computes it
// again (fail) and keeps that; a year and a day later the kept answer has
// expired and B's GET no longer counts the return.
func TestAnotherMerchantsReturnChangesTheKeptCheckOnTheNextGet(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	aSrc := f.Source(a, f.Customer(a), "424242420")
	if _, err := f.Consequences.Remove(ctx, a, aSrc.ID); err != nil {
		t.Fatal(err)
	}
	bSrc := f.Source(b, f.Customer(b), "424242420")
	wantCheck(t, "B's creation", bSrc, "unknown")
	// A's link alone is no history: the creation keeps its answer.
	wantCheck(t, "B's first GET", get(t, f, b, bSrc.ID), "unknown")
	r, seq := kept(t, f, bSrc.ID)
	if r != funding.CheckUnknown {
		t.Fatalf("B's kept check after its GET: %q", r)
	}

	if err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.ApplyReturnTx(ctx, tx, a, aSrc.ID, "R02")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if r, s := kept(t, f, bSrc.ID); r != "" || s != seq+1 {
		t.Errorf("after A's return B keeps %q (seq %d), want it marked (seq %d)", r, s, seq+1)
	}
	wantCheck(t, "B's GET after A's return", get(t, f, b, bSrc.ID), "fail", "returned_closed")
	if r, _ := kept(t, f, bSrc.ID); r != funding.CheckFail {
		t.Errorf("B keeps %q after its GET, want fail", r)
	}
	list, _, err := f.Funding.ListForCustomer(ctx, b, bSrc.CustomerID, funding.WithoutRemoved, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	wantCheck(t, "B's list", list[0], "fail", "returned_closed")
	// A's own removed source answers the same from its own row.
	wantCheck(t, "A's GET", get(t, f, a, aSrc.ID), "fail", "returned_closed")

	f.Clock.Advance(365*24*time.Hour - time.Minute)
	wantCheck(t, "B's GET a minute before the year ends", get(t, f, b, bSrc.ID), "fail", "returned_closed")
	f.Clock.Advance(2 * time.Minute)
	wantCheck(t, "B's GET after the year", get(t, f, b, bSrc.ID), "unknown")
	if r, _ := kept(t, f, bSrc.ID); r != funding.CheckUnknown {
		t.Errorf("B keeps %q after the year, want unknown", r)
	}
}

// TestAReadDoesNotKeepAnAnswerOverANewerMark: an answer computed from a
// history read before a new fact is not kept over the fact's mark.
func TestAReadDoesNotKeepAnAnswerOverANewerMark(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a := f.Sandbox("Alpha")
	src := f.Source(a, f.Customer(a), "535353530")
	_, seq := kept(t, f, src.ID)
	if _, err := f.SQL().Exec(`UPDATE funding_sources SET check_result = NULL, check_seq = check_seq + 1 WHERE id = $1`, src.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.StoreAccountCheck(ctx, a, src.ID, funding.AccountCheck{Result: funding.CheckPass, Reasons: []string{"verified_before"}}, nil, seq); err != nil {
		t.Fatal(err)
	}
	if r, _ := kept(t, f, src.ID); r != "" {
		t.Errorf("an answer read under seq %d was kept over the mark: %q", seq, r)
	}
}

// TestACorrectedSourceFollowsItsNewAccount: a notification of change moves
// a source to another account; a later return on that account, on another
// merchant's source, changes the moved source's check.
func TestACorrectedSourceFollowsItsNewAccount(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	other := f.Source(b, f.Customer(b), "646464640")
	if _, err := f.Consequences.Remove(ctx, b, other.ID); err != nil {
		t.Fatal(err)
	}
	src := f.Source(a, f.Customer(a), "757575750")
	if _, err := f.Funding.SimulateChange(ctx, a, src.ID, funding.Correction{ChangeCode: funding.ChangeAccount,
		CorrectedData: funding.CorrectedData{AccountNumber: "646464640"}}); err != nil {
		t.Fatal(err)
	}
	// The correction is the new account's first fact: the moved source
	// says so rather than reading as an account with no history.
	wantCheck(t, "moved", get(t, f, a, src.ID), "caution", "corrected_by_noc")
	if r, _ := kept(t, f, src.ID); r != funding.CheckCaution {
		t.Fatalf("the moved source keeps %q", r)
	}
	if err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.ApplyReturnTx(ctx, tx, b, other.ID, "R16")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "after a return on its new account", get(t, f, a, src.ID), "fail", "returned_frozen", "corrected_by_noc")
}

// TestGetAnswersAsTheWholeSourceDoes: Get reads the answer's columns alone
// while the kept check holds, and the whole source when it does not. In
// every part a source's answer can show, it answers as a list does, which
// reads whole rows.
func TestGetAnswersAsTheWholeSourceDoes(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	f.Funding.SetDraw(func() int { return 12 })
	plain := f.Source(scope, cus, "41000001").ID
	pending := f.Source(scope, cus, "41000002").ID
	if _, err := f.Funding.InitiateVerification(ctx, scope, pending); err != nil {
		t.Fatal(err)
	}
	verified := f.VerifiedSource(scope, cus, "41000003").ID
	refused := instantSource(t, f, scope, "110000000", "9900000004")
	if _, err := f.Funding.InitiateVerificationBy(ctx, scope, refused, funding.MethodInstant); err != nil {
		t.Fatal(err)
	}
	marked := f.Source(scope, cus, "41000004").ID
	// The rest of what an answer shows, as the writers leave it.
	if _, err := f.SQL().Exec(`UPDATE funding_sources SET nickname = 'Rent', removed_at = now(), removed_reason = 'return_R02',
		block_code = 'R10', block_reason = 'Customer advises not authorized', blocked_at = now(),
		ownership_result = 'partial', ownership_name_score = 71, ownership_email_score = 40, ownership_checked_at = now(),
		check_result = 'caution', check_reasons = '{recent_noc}', check_expires_at = now() + interval '30 days'
		WHERE id = $1`, pending); err != nil {
		t.Fatal(err)
	}
	// A new fact drops the kept check: the next Get reads the whole source.
	if _, err := f.SQL().Exec(`UPDATE funding_sources SET check_result = NULL WHERE id = $1`, marked); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{plain, pending, verified, refused, marked} {
		got := get(t, f, scope, id)
		list, _, err := f.Funding.ListForCustomer(ctx, scope, got.CustomerID, funding.WithRemoved, paging.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(s funding.Source) bool { return s.ID == id })
		if i < 0 {
			t.Fatalf("%s: not in its customer's list", id)
		}
		if a, b := answer(t, got), answer(t, list[i]); a != b {
			t.Errorf("%s:\nGet answers  %s\na list shows %s", id, a, b)
		}
	}
	if r, _ := kept(t, f, marked); r == "" {
		t.Error("Get computed the dropped check but did not keep it")
	}
}

// answer is a source's JSON form without the moment of its check, which
// is the moment of each read.
func answer(t *testing.T, src funding.Source) string {
	t.Helper()
	data, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if ck, ok := m["account_check"].(map[string]any); ok {
		delete(ck, "checked_at")
	}
	out, _ := json.Marshal(m)
	return string(out)
}
