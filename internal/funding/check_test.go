package funding_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

func TestEvaluateAccountCheck(t *testing.T) {
	t.Parallel()
	now := fixture.Start
	day := 24 * time.Hour
	codes := func(at time.Duration, cs ...string) map[string]time.Time {
		m := map[string]time.Time{}
		for _, c := range cs {
			m[c] = now.Add(-at)
		}
		return m
	}
	for _, c := range []struct {
		name    string
		facts   funding.AccountFacts
		result  string
		reasons []string
	}{
		{"nothing known", funding.AccountFacts{}, "unknown", []string{}},
		{"verified before", funding.AccountFacts{Verified: true}, "pass", []string{"verified_before"}},
		{"R03", funding.AccountFacts{Codes: codes(day, "R03")}, "fail", []string{"returned_no_account"}},
		{"AC03", funding.AccountFacts{Codes: codes(day, "AC03")}, "fail", []string{"returned_no_account"}},
		{"R02", funding.AccountFacts{Codes: codes(day, "R02")}, "fail", []string{"returned_closed"}},
		{"AC04", funding.AccountFacts{Codes: codes(day, "AC04")}, "fail", []string{"returned_closed"}},
		{"R04", funding.AccountFacts{Codes: codes(day, "R04")}, "fail", []string{"returned_invalid"}},
		{"R16", funding.AccountFacts{Codes: codes(day, "R16")}, "fail", []string{"returned_frozen"}},
		{"AC06", funding.AccountFacts{Codes: codes(day, "AC06")}, "fail", []string{"returned_frozen"}},
		{"R05 R07 R10 R11 R29", funding.AccountFacts{Codes: codes(day, "R05", "R07", "R10", "R11", "R29")}, "fail", []string{"returned_unauthorized"}},
		{"R20", funding.AccountFacts{Codes: codes(day, "R20")}, "caution", []string{"returned_non_transaction"}},
		{"NOC", funding.AccountFacts{Codes: codes(day, "C01")}, "caution", []string{"corrected_by_noc"}},
		{"verified but returned", funding.AccountFacts{Verified: true, Codes: codes(day, "R02", "R20")}, "fail",
			[]string{"returned_closed", "returned_non_transaction", "verified_before"}},
		{"verified but corrected", funding.AccountFacts{Verified: true, Codes: codes(day, "C03")}, "caution",
			[]string{"corrected_by_noc", "verified_before"}},
		{"return within 365 days", funding.AccountFacts{Codes: codes(365*day, "R03")}, "fail", []string{"returned_no_account"}},
		{"return older than 365 days", funding.AccountFacts{Codes: codes(366*day, "R03")}, "unknown", []string{}},
		{"R01 does not count", funding.AccountFacts{Codes: codes(day, "R01")}, "unknown", []string{}},
		{"two other merchants' customers in 90 days", funding.AccountFacts{OtherUses: []time.Time{now.Add(-day), now.Add(-90 * day)}},
			"caution", []string{"many_customers"}},
		{"one other merchant's customer in 90 days", funding.AccountFacts{OtherUses: []time.Time{now.Add(-day), now.Add(-90*day - time.Microsecond)}},
			"unknown", []string{}},
	} {
		got := funding.Evaluate(c.facts, now)
		if got.Result != c.result || !slices.Equal(got.Reasons, c.reasons) || !got.CheckedAt.Equal(now) {
			t.Errorf("%s: got %s %v at %v, want %s %v", c.name, got.Result, got.Reasons, got.CheckedAt, c.result, c.reasons)
		}
	}
}

// checkOf returns the account check a source carries, failing without one.
func checkOf(t *testing.T, src funding.Source) funding.AccountCheck {
	t.Helper()
	if src.AccountCheck == nil {
		t.Fatalf("source %s has no account_check", src.ID)
	}
	return *src.AccountCheck
}

func wantCheck(t *testing.T, what string, src funding.Source, result string, reasons ...string) {
	t.Helper()
	c := checkOf(t, src)
	if reasons == nil {
		reasons = []string{}
	}
	if c.Result != result || !slices.Equal(c.Reasons, reasons) {
		t.Errorf("%s: account_check = %s %v, want %s %v", what, c.Result, c.Reasons, result, reasons)
	}
}

// TestAReturnForOneMerchantFailsTheCheckForAnother: merchant A's
// micro-deposits to an account come back R03; when merchant B's customer
// links the same account, the check fails with returned_no_account, and
// nothing in B's answer or event names A, A's customer or source, an
// amount or when it happened.
func TestAReturnForOneMerchantFailsTheCheckForAnother(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	aCus := f.Customer(a)
	aSrc := f.Source(a, aCus, "000555666777")
	wantCheck(t, "first link", aSrc, "unknown")
	if _, err := f.Funding.InitiateVerification(ctx, a, aSrc.ID); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(72 * time.Hour)
	returned, err := f.Consequences.SimulateDepositReturn(ctx, a, aSrc.ID, "R03")
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "A's returned source", returned, "fail", "returned_no_account")

	f.Clock.Advance(24 * time.Hour)
	bCus := f.Customer(b)
	bSrc := f.Source(b, bCus, "000555666777")
	wantCheck(t, "B's creation", bSrc, "fail", "returned_no_account")
	got, err := f.Funding.Get(ctx, b, bSrc.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "B's GET", got, "fail", "returned_no_account")
	if !got.AccountCheck.CheckedAt.Equal(f.Clock.Now()) {
		t.Errorf("checked_at = %v, want the time of the read %v", got.AccountCheck.CheckedAt, f.Clock.Now())
	}
	body, _ := json.Marshal(got)
	var evData []string
	if err := f.SQL().Select(&evData, `SELECT data::text FROM events WHERE merchant_id = $1`, b.MerchantID); err != nil {
		t.Fatal(err)
	}
	for _, text := range append(evData, string(body)) {
		for _, secret := range []string{a.MerchantID, aCus, aSrc.ID, aSrc.CreatedAt.Format(time.DateOnly), "R03", "Alpha"} {
			if strings.Contains(text, secret) {
				t.Errorf("B sees %q: %s", secret, text)
			}
		}
	}
	if !strings.Contains(string(body), `"account_check":{"result":"fail","reasons":["returned_no_account"],"checked_at":`) {
		t.Errorf("JSON = %s", body)
	}

	// The same number at another bank is another account.
	f.Consequences.Remove(ctx, b, bSrc.ID)
	other, err := f.Funding.CreateForMicroDeposits(ctx, b, funding.Input{CustomerID: bCus, RoutingNumber: "011000015", AccountNumber: "000555666777"})
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "same number, other routing", other, "unknown")

	// A year and a day later the return no longer counts.
	f.Consequences.Remove(ctx, b, other.ID)
	f.Clock.Advance(366 * 24 * time.Hour)
	later := f.Source(b, bCus, "000555666777")
	wantCheck(t, "366 days later", later, "unknown")
}

// TestVerifiedBeforePassesAndManyCustomersCaution: A's and C's customers
// verified the account; B's customers see pass until both count
// (many_customers), and B's own customers never count for B.
func TestVerifiedBeforePassesAndManyCustomersCaution(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b, c := f.Sandbox("Alpha"), f.Sandbox("Beta"), f.Sandbox("Gamma")
	first := f.VerifiedSource(a, f.Customer(a), "7654321")
	wantCheck(t, "created Verified", first, "unknown")
	got, err := f.Funding.Get(ctx, a, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "its GET: its own verification is no history", got, "unknown")
	f.Consequences.Remove(ctx, a, first.ID)

	second := f.Source(b, f.Customer(b), "7654321")
	wantCheck(t, "second customer", second, "pass", "verified_before")
	f.Consequences.Remove(ctx, b, second.ID)
	mine := f.VerifiedSource(b, f.Customer(b), "7654321")
	f.Consequences.Remove(ctx, b, mine.ID)
	own := f.Source(b, f.Customer(b), "7654321")
	wantCheck(t, "B's own customers do not count", own, "pass", "verified_before")
	f.Consequences.Remove(ctx, b, own.ID)
	f.Consequences.Remove(ctx, c, f.VerifiedSource(c, f.Customer(c), "7654321").ID)
	third := f.Source(b, f.Customer(b), "7654321")
	wantCheck(t, "two other merchants' customers in 90 days", third, "caution", "many_customers", "verified_before")
	list, _, err := f.Funding.ListForCustomer(ctx, b, third.CustomerID, funding.WithoutRemoved, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	wantCheck(t, "list", list[0], "caution", "many_customers", "verified_before")

	// The same customer again is not another customer.
	f.Consequences.Remove(ctx, b, third.ID)
	again := f.Source(b, third.CustomerID, "7654321")
	wantCheck(t, "third customer again", again, "caution", "many_customers", "verified_before")

	f.Clock.Advance(91 * 24 * time.Hour)
	got, err = f.Funding.Get(ctx, b, again.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "91 days later", got, "pass", "verified_before")
}

// TestVerifyingRecordsTheAccountAsVerified: a brand-new account's first
// verification is recorded, but is no history for the source it verified:
// that source's check stays unknown in the verify's answer, its GET and
// its list, while another source of the account (another customer of the
// merchant) reads pass, verified_before, and still does once verified
// itself; to another merchant both verifications count.
func TestVerifyingRecordsTheAccountAsVerified(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	f.Funding.SetDraw(func() int { return 12 })
	verify := func(src funding.Source) funding.Source {
		t.Helper()
		if _, err := f.Funding.InitiateVerification(ctx, scope, src.ID); err != nil {
			t.Fatal(err)
		}
		got, err := f.Funding.VerifyMicroDeposits(ctx, scope, src.ID, [2]int{12, 12})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	src := f.Source(scope, f.Customer(scope), "11112222")
	wantCheck(t, "verified", verify(src), "unknown")
	got, err := f.Funding.Get(ctx, scope, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "its GET", got, "unknown")
	list, _, err := f.Funding.ListForCustomer(ctx, scope, src.CustomerID, funding.WithoutRemoved, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	wantCheck(t, "its list", list[0], "unknown")
	if _, err := f.Consequences.Remove(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
	other := f.Source(scope, f.Customer(scope), "11112222")
	wantCheck(t, "another customer's source", other, "pass", "verified_before")
	wantCheck(t, "another customer's source verified after", verify(other), "pass", "verified_before")
	if _, err := f.Consequences.Remove(ctx, scope, other.ID); err != nil {
		t.Fatal(err)
	}
	b := f.Sandbox("Beta")
	// Acme's two customers who verified it are two other customers to Beta.
	wantCheck(t, "another merchant's source", f.Source(b, f.Customer(b), "11112222"), "caution", "many_customers", "verified_before")
	var kinds []string
	if err := f.SQL().Select(&kinds, `SELECT kind FROM account_facts ORDER BY at, kind`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds, []string{"linked", "linked", "linked", "verified", "verified"}) {
		t.Errorf("facts = %v, want three links and two verifications", kinds)
	}
}

func TestRailRejectionFailsTheCheck(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	id := instantSource(t, f, a, "110000000", "9900000004")
	src, err := f.Funding.InitiateVerificationBy(ctx, a, id, funding.MethodInstant)
	if err != nil || src.Verification.FailureCode != "AC04" {
		t.Fatalf("initiate: %+v, %v", src.Verification, err)
	}
	wantCheck(t, "refused at once", src, "fail", "returned_closed")
	f.Consequences.Remove(ctx, a, id)
	other, err := f.Funding.CreateForMicroDeposits(ctx, b, funding.Input{CustomerID: f.Customer(b), RoutingNumber: "110000000", AccountNumber: "9900000004"})
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "another merchant", other, "fail", "returned_closed")
}

func TestNOCAndNonTransactionReturnCaution(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	src := f.Source(a, f.Customer(a), "31313131")
	if _, err := f.Funding.SimulateChange(ctx, a, src.ID, funding.Correction{ChangeCode: funding.ChangeAccount,
		CorrectedData: funding.CorrectedData{AccountNumber: "41414141"}}); err != nil {
		t.Fatal(err)
	}
	corrected := f.Source(b, f.Customer(b), "31313131")
	wantCheck(t, "the corrected-away number", corrected, "caution", "corrected_by_noc")
	moved, err := f.Funding.Get(ctx, a, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The account the source moved to was corrected too: its check says
	// so, rather than reading as an account with no history.
	wantCheck(t, "the source on its corrected number", moved, "caution", "corrected_by_noc")
	typed := f.Source(a, f.Customer(a), "71717171")
	if _, err := f.Funding.SimulateChange(ctx, a, typed.ID, funding.Correction{ChangeCode: funding.ChangeType,
		CorrectedData: funding.CorrectedData{AccountType: "savings"}}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM account_facts WHERE funding_source_id = $1 AND kind = 'corrected'`, typed.ID); err != nil || n != 1 {
		t.Errorf("a change of type alone: %d corrected facts (%v), want 1", n, err)
	}

	r20 := f.Source(a, f.Customer(a), "51515151")
	if _, err := f.Funding.InitiateVerification(ctx, a, r20.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Consequences.SimulateDepositReturn(ctx, a, r20.ID, "R20"); err != nil {
		t.Fatal(err)
	}
	again := f.Source(b, f.Customer(b), "51515151")
	wantCheck(t, "non-transaction return", again, "caution", "returned_non_transaction")
}

// A return for a payment blocks the source and counts for the account.
func TestUnauthorizedPaymentReturnFailsTheCheck(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a := f.Sandbox("Alpha")
	src := f.VerifiedSource(a, f.Customer(a), "61616161")
	if err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.ApplyReturnTx(ctx, tx, a, src.ID, "R10")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := f.Funding.Get(ctx, a, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Block == nil {
		t.Errorf("R10 did not block")
	}
	wantCheck(t, "blocked by R10", got, "fail", "returned_unauthorized")
}

// TestBlockFailRefusesAFailedAccountAndWritesNothing: under block_fail a
// creation whose check fails is account_check_failed with the reasons,
// and leaves no source, fact, claim or event; under flag it is created.
func TestBlockFailRefusesAFailedAccountAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	src := f.VerifiedSource(a, f.Customer(a), "71717171")
	if err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.ApplyReturnTx(ctx, tx, a, src.ID, "R02")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := f.SQL().Get(&n, `SELECT (SELECT count(*) FROM funding_sources WHERE merchant_id = $1)
			+ (SELECT count(*) FROM account_facts WHERE merchant_id = $1)
			+ (SELECT count(*) FROM account_numbers WHERE merchant_id = $1)
			+ (SELECT count(*) FROM events WHERE merchant_id = $1 AND type LIKE 'funding_source.%')`, b.MerchantID); err != nil {
			t.Fatal(err)
		}
		return n
	}
	cus := f.Customer(b)
	block := funding.Caller{Scope: b, OnDemand: true, AccountCheckPolicy: funding.PolicyBlockFail}
	in := input(cus, "71717171")
	_, err := f.Funding.Create(ctx, block, funding.ForMicroDeposits, in)
	e := wantCode(t, err, "account_check_failed")
	if r, _ := e.Details["reasons"].([]string); !slices.Equal(r, []string{"returned_closed", "verified_before"}) {
		t.Errorf("reasons = %v", e.Details["reasons"])
	}
	if _, err := f.Funding.CreateOnDemand(ctx, block, in); err == nil {
		t.Error("on demand created under block_fail")
	}
	if n := count(); n != 0 {
		t.Errorf("block_fail wrote %d rows", n)
	}
	// A passing account is created under block_fail; a failing one under flag.
	ok, err := f.Funding.CreateOnDemand(ctx, block, input(cus, "81818181"))
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "unknown under block_fail", ok, "unknown")
	flagged, err := f.Funding.CreateOnDemand(ctx, funding.Caller{Scope: b, OnDemand: true, AccountCheckPolicy: funding.PolicyFlag}, in)
	if err != nil {
		t.Fatal(err)
	}
	wantCheck(t, "flag", flagged, "fail", "returned_closed", "verified_before")
}

func TestOwnershipBands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sc   funding.OwnerScores
		want string
	}{
		{funding.OwnerScores{Name: 100, Email: 100}, "match"}, {funding.OwnerScores{Name: 70, Email: 0}, "match"},
		{funding.OwnerScores{Name: 69, Email: 100}, "partial"}, {funding.OwnerScores{Name: 50, Email: -1}, "partial"},
		{funding.OwnerScores{Name: 49, Email: 100}, "mismatch"}, {funding.OwnerScores{Name: 0, Email: 0}, "mismatch"},
		{funding.OwnerScores{Name: -1, Email: 100}, "unavailable"},
	} {
		o := funding.OwnershipOf(c.sc, fixture.Start)
		if o.Result != c.want || (c.sc.Name >= 0) != (o.NameScore != nil) || (c.sc.Email >= 0) != (o.EmailScore != nil) {
			t.Errorf("%+v: %+v, want %s", c.sc, o, c.want)
		}
	}
}
