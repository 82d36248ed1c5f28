package payment

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestDebitRule: the source's refusals, as the statement that read the
// source decided them (the adapter's TestTheSourceRuleAtItsEdges holds
// the decision over the facts), are explained in the direction asked: a
// removed source refuses both with funding_source_removed, an Unverified
// one a debit with debit_not_allowed, a blocked one a debit with
// funding_source_blocked; a refusal no error explains is an error, never
// a payment taken.
func TestDebitRule(t *testing.T) {
	for _, c := range []struct {
		src  SourceInfo
		d    Direction
		want errs.Code
	}{
		{SourceInfo{}, Debit, ""},
		{SourceInfo{}, Credit, ""},
		{SourceInfo{DebitRefusal: RefusedUnverified}, Debit, errs.DebitNotAllowed},
		{SourceInfo{DebitRefusal: RefusedUnverified}, Credit, ""},
		{SourceInfo{DebitRefusal: RefusedBlocked}, Debit, errs.FundingSourceBlocked},
		{SourceInfo{DebitRefusal: RefusedBlocked}, Credit, ""},
		{SourceInfo{DebitRefusal: RefusedRemoved, CreditRefusal: RefusedRemoved}, Debit, errs.FundingSourceRemoved},
		{SourceInfo{DebitRefusal: RefusedRemoved, CreditRefusal: RefusedRemoved}, Credit, errs.FundingSourceRemoved},
	} {
		err := c.src.allows(c.d)
		if got := errs.CodeOf(err); got != c.want || (err != nil && got == "") {
			t.Errorf("%+v %s: %v, want %q", c.src, c.d, err, c.want)
		}
		if e, ok := errs.As(err); ok && e.Param != "funding_source_id" {
			t.Errorf("%+v %s: param %q", c.src, c.d, e.Param)
		}
	}
	if err := (SourceInfo{DebitRefusal: "frozen"}).allows(Debit); err == nil || errs.CodeOf(err) != "" {
		t.Errorf("an unknown refusal: %v, want an internal error", err)
	}
}

// TestRetrySourceRule: a re-presentment is refused, with
// retry_not_allowed, by whatever refuses the source a new debit.
func TestRetrySourceRule(t *testing.T) {
	for name, want := range map[string]errs.Code{"": "", RefusedRemoved: errs.RetryNotAllowed,
		RefusedBlocked: errs.RetryNotAllowed, RefusedUnverified: errs.RetryNotAllowed} {
		err := retrySourceRefusal(name)
		if got := errs.CodeOf(err); got != want || (err != nil && got == "") {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
	if err := retrySourceRefusal("frozen"); err == nil || errs.CodeOf(err) != "" {
		t.Errorf("an unknown refusal: %v, want an internal error", err)
	}
}

// TestSubscriptionLimitRule: a new subscription is refused by what the
// limits' rule (decided where the terms are read) says of one debit of
// it: not active, or above the per-entry limit (with the limit and what
// remains of it); a daily total never refuses it.
func TestSubscriptionLimitRule(t *testing.T) {
	for _, c := range []struct {
		refusal string
		want    errs.Code
	}{
		{"", ""},
		{LimitDailyDebit, ""},
		{RefusedNotActive, errs.OriginatorNotActive},
		{LimitPerEntryDebit, errs.LimitExceeded},
	} {
		err := Terms{PerEntryDebit: 500_00, Refusal: c.refusal}.subscriptionRefusal()
		if got := errs.CodeOf(err); got != c.want || (err != nil && got == "") {
			t.Errorf("%q: %v, want %q", c.refusal, err, c.want)
		}
		if e, ok := errs.As(err); ok && c.want == errs.LimitExceeded && (e.Details["limit"] != LimitPerEntryDebit || e.Details["remaining"] != "500.00") {
			t.Errorf("%q: details %v", c.refusal, e.Details)
		}
	}
	if err := (Terms{Refusal: LimitDailyCredit}).subscriptionRefusal(); err == nil || errs.CodeOf(err) != "" {
		t.Errorf("a credit's limit for a debit: %v, want an internal error", err)
	}
}

// TestAmountLimits: amounts are exact cents above zero and at most the
// configured maximum, as a JSON number or a decimal string.
func TestAmountLimits(t *testing.T) {
	s := NewService(nil, Config{MaxAmount: 1_000_000}, nil)
	for _, c := range []struct {
		raw  string
		want int64 // 0: refused with invalid_amount
	}{
		{`12.34`, 1234},
		{`"12.34"`, 1234},
		{`0.01`, 1},
		{`10000`, 1_000_000},
		{`"10000.00"`, 1_000_000},
		{`10000.01`, 0},
		{`0`, 0},
		{`0.00`, 0},
		{`-5`, 0},
		{`0.001`, 0},
		{`"12.3.4"`, 0},
		{`"ten"`, 0},
		{`true`, 0},
		{`null`, 0},
		{`1e2`, 10000},
		{`0.550`, 55},
		{`0.555`, 0},
		{``, 0},
	} {
		got, err := s.amount(json.RawMessage(c.raw))
		if c.want == 0 {
			if e, ok := errs.As(err); !ok || e.Code != errs.InvalidAmount || e.Param != "amount" {
				t.Errorf("amount(%s) = %d, %v: want invalid_amount on amount", c.raw, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("amount(%s) = %d, %v: want %d", c.raw, got, err, c.want)
		}
	}
}

func TestDescription(t *testing.T) {
	for _, c := range []struct {
		in   *string
		want string // "<nil>" for none, "!" for refused
	}{
		{nil, "<nil>"},
		{ptr("   "), "<nil>"},
		{ptr("  Rent for May "), "Rent for May"},
		{ptr(strings.Repeat("é", MaxDescription)), strings.Repeat("é", MaxDescription)},
		{ptr(strings.Repeat("x", MaxDescription+1)), "!"},
		{ptr("line\nbreak"), "!"},
		{ptr("del\x7f"), "!"},
	} {
		got, err := description(c.in)
		switch {
		case c.want == "!":
			if errs.CodeOf(err) != errs.InvalidRequest {
				t.Errorf("description(%q): %v, want invalid_request", *c.in, err)
			}
		case err != nil:
			t.Errorf("description: %v", err)
		case c.want == "<nil>" && got != nil, c.want != "<nil>" && (got == nil || *got != c.want):
			t.Errorf("description = %v, want %q", got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }

// TestEntryDescriptionFitsAtItsEdges: the entry description rule as a
// function of its facts (the description, direction, purpose and SEC
// code), from which the SEC codes a description fits are derived for the
// creating statements: PURCHASE fits only an individual's (WEB) debit
// for goods, which takes no other; PAYROLL only a PPD credit for payroll,
// which takes no other; a free description every other entry; none given
// fits everything (nil: the statements check nothing).
func TestEntryDescriptionFitsAtItsEdges(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		ed      *string
		d       Direction
		purpose Purpose
		fits    []string
	}{
		{nil, Debit, PurposeGoods, nil},
		{str("PURCHASE"), Debit, PurposeGoods, []string{secWEB}},
		{str("PURCHASE"), Debit, PurposeServices, []string{}},
		{str("PURCHASE"), Credit, PurposeGoods, []string{}},
		{str("SUPPLIES"), Debit, PurposeGoods, []string{secCCD, secPPD}},
		{str("LESSONS"), Debit, PurposeServices, []string{secWEB, secCCD, secPPD}},
		{str("PAYROLL"), Credit, PurposePayroll, []string{secPPD}},
		{str("PAYROLL"), Credit, PurposeOther, []string{}},
		{str("PAYROLL"), Debit, PurposePayroll, []string{}},
		{str("SALARY"), Credit, PurposePayroll, []string{secWEB, secCCD}},
		{str("REFUND"), Credit, PurposeOther, []string{secWEB, secCCD, secPPD}},
	} {
		got := descriptionFits(c.ed, c.d, c.purpose)
		if (got == nil) != (c.fits == nil) || strings.Join(got, ",") != strings.Join(c.fits, ",") {
			t.Errorf("%v %s %s: fits %v, want %v", show(c.ed), c.d, c.purpose, got, c.fits)
		}
		for _, sec := range []string{secWEB, secCCD, secPPD} {
			err := entryDescriptionRefusal(c.ed, c.d, c.purpose, sec)
			if fits := slices.Contains(got, sec) || c.ed == nil; fits != (err == nil) {
				t.Errorf("%v %s %s under %s: refusal %v, fits %t", show(c.ed), c.d, c.purpose, sec, err, fits)
			}
			if e, ok := errs.As(err); err != nil && (!ok || e.Code != errs.InvalidRequest || e.Param != "entry_description") {
				t.Errorf("%v %s %s under %s: %v, want invalid_request on entry_description", show(c.ed), c.d, c.purpose, sec, err)
			}
		}
	}
}

// show is an optional description as a test names it.
func show(ed *string) string {
	if ed == nil {
		return "(none)"
	}
	return *ed
}

// TestPurposeDefault: a payment or subscription has the purpose it
// names, else its originator's default_purpose, else other.
func TestPurposeDefault(t *testing.T) {
	for _, c := range []struct {
		named     Purpose
		byDefault string
		want      Purpose
	}{
		{PurposePayroll, "goods", PurposePayroll},
		{"", "goods", PurposeGoods},
		{"", "", PurposeOther},
		{PurposeBill, "", PurposeBill},
	} {
		if got := purposeOr(c.named, c.byDefault); got != c.want {
			t.Errorf("purposeOr(%q, %q) = %q, want %q", c.named, c.byDefault, got, c.want)
		}
	}
}

// TestEntrySEC: a company's entries are CCD; an individual's debit is WEB
// and a credit to one PPD.
func TestEntrySEC(t *testing.T) {
	for _, c := range []struct {
		d        Direction
		business bool
		want     string
	}{
		{Debit, false, "WEB"}, {Debit, true, "CCD"}, {Credit, false, "PPD"}, {Credit, true, "CCD"},
	} {
		if got := EntrySEC(c.d, c.business); got != c.want {
			t.Errorf("EntrySEC(%s, %t) = %s, want %s", c.d, c.business, got, c.want)
		}
	}
}

// TestMandateRule: the named mandate's refusals, as the statement that
// locked it decided them (the adapter's TestTheMandateRuleAtItsEdges holds
// the decision over the facts), are explained on mandate_id: an unknown
// mandate is not_found, every other refusal invalid_request; a refusal
// no error explains is an error, never a debit or subscription taken.
func TestMandateRule(t *testing.T) {
	for name, want := range map[string]errs.Code{"": "", RefusedMandateUnknown: errs.NotFound,
		RefusedMandateOtherSource: errs.InvalidRequest, RefusedMandateRevoked: errs.InvalidRequest,
		RefusedMandateNotRecurring: errs.InvalidRequest, RefusedMandateUsed: errs.InvalidRequest} {
		err := mandateRefused(name)
		if got := errs.CodeOf(err); got != want || (err != nil && got == "") {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
		if e, ok := errs.As(err); ok && e.Param != "mandate_id" {
			t.Errorf("%q: param %q, want mandate_id", name, e.Param)
		}
		if err := (DebitOutcome{Refusal: name}).refusal(Debit, Payment{}); errs.CodeOf(err) != want || (name != "" && err == nil) {
			t.Errorf("a debit's %q: %v, want %q", name, err, want)
		}
	}
	if err := mandateRefused("frozen"); err == nil || errs.CodeOf(err) != "" {
		t.Errorf("an unknown refusal: %v, want an internal error", err)
	}
}
