package banksim

import (
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	d, err := time.Parse(dateLayout, s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestSandboxRulesAreValid(t *testing.T) {
	if err := Sandbox.Validate(); err != nil {
		t.Fatal(err)
	}
	for account, want := range map[string]string{"000000007": "R07", "12341010": "R10", "000120017": "R17", "556810": "R10", "559101": "C01", "6789": "", "0070": ""} {
		r, ok := Sandbox.Match(account)
		if got := r.Answer; ok != (want != "") || ok && got != want {
			t.Errorf("Match(%s) = %q %v, want %q", account, got, ok, want)
		}
	}
}

func TestRulesRefuseWhatNoBankSends(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{AccountSuffix: "1", Answer: "R03", AfterBankingDays: 3}, "within 2 banking days"},
		{Rule{AccountSuffix: "1", Answer: "R10", AfterBankingDays: 41}, "60 calendar days"},
		{Rule{AccountSuffix: "1", Answer: "C01"}, "corrected.account_number"},
		{Rule{AccountSuffix: "1", Answer: "C02", Corrected: Corrected{RoutingNumber: "12"}}, "9 digits"},
		{Rule{AccountSuffix: "1", Answer: "C01", Corrected: Corrected{AccountSuffix: "2", AccountType: "savings"}}, "C05, C06 and C07"},
		{Rule{AccountSuffix: "1", Answer: "X99"}, "not a return code"},
		{Rule{Account: "1", AccountSuffix: "1", Answer: "R01"}, "exactly one"},
		{Rule{AccountSuffix: "1", Answer: "C03", AfterBankingDays: 5, Corrected: Corrected{RoutingNumber: "021000021", AccountNumber: "5"}}, "within 2 banking days"},
	} {
		if err := (Rules{tc.rule}).Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.rule, err, tc.want)
		}
	}
	if err := (Rules{{AccountSuffix: "1", Answer: "R10", AfterBankingDays: 40}, {Account: "2", Answer: Accept}}).Validate(); err != nil {
		t.Errorf("a 40-day R10 and an accept: %v", err)
	}
}

func TestAppliesKeepsCodesToTheirEntries(t *testing.T) {
	for _, tc := range []struct {
		code, sec       string
		debit, consumer bool
		want            bool
	}{
		{"R07", "WEB", true, false, true}, {"R07", "WEB", false, false, false}, {"R07", "CCD", true, false, false},
		{"R29", "CCD", true, false, true}, {"R29", "WEB", true, false, false}, {"R01", "PPD", false, false, false},
		{"R03", "PPD", false, false, true}, {"R02", "CCD", true, false, true}, {"C01", "PPD", false, false, true},
		// R05: a corporate debit to a consumer's account, and only that.
		{"R05", "CCD", true, true, true}, {"R05", "CCD", true, false, false}, {"R05", "WEB", true, true, false},
		{"R05", "CCD", false, true, false},
	} {
		if got := Applies(tc.code, tc.sec, tc.debit, tc.consumer); got != tc.want {
			t.Errorf("Applies(%s, %s, debit %v, consumer %v) = %v", tc.code, tc.sec, tc.debit, tc.consumer, got)
		}
	}
}

func TestDueFollowsTheBankingCalendar(t *testing.T) {
	for _, tc := range []struct {
		code, settled string
		days          int
		want          string
	}{
		{"R03", "2026-11-10", 1, "2026-11-12"},  // over Veterans Day
		{"R07", "2026-11-06", 2, "2026-11-10"},  // over a weekend
		{"R01", "2026-11-07", 0, "2026-11-09"},  // settled on a Saturday: Monday
		{"R10", "2026-11-03", 10, "2026-11-18"}, // late, over Veterans Day
		// 40 banking days from November 20 pass the 60 calendar days
		// (Thanksgiving, Christmas, New Year's Day): the last banking day within.
		{"R10", "2026-11-20", 40, "2027-01-19"},
	} {
		if got := Due(tc.code, day(tc.settled), tc.days).Format(dateLayout); got != tc.want {
			t.Errorf("Due(%s, %s, %d) = %s, want %s", tc.code, tc.settled, tc.days, got, tc.want)
		}
	}
}

func TestRulesValidateDishonorAnswers(t *testing.T) {
	for _, r := range []Rule{
		{AccountSuffix: "1", Answer: "R01", AfterBankingDays: 4},                                      // late without untimely
		{AccountSuffix: "1", Answer: "C01", Untimely: true, Corrected: Corrected{AccountSuffix: "0"}}, // untimely NOC
		{AccountSuffix: "1", Answer: "R01", Contest: "R68"},                                           // not a contest code
		{AccountSuffix: "1", Answer: Accept, Contest: "R73"},                                          // contest without a return
		{AccountSuffix: "1", Answer: Accept, RepeatAfterBankingDays: 1},                               // repeat without a return
	} {
		if err := (Rules{r}).Validate(); err == nil {
			t.Errorf("%+v validated", r)
		}
	}
	if err := Sandbox.Validate(); err != nil {
		t.Errorf("the built-in rules: %v", err)
	}
}
