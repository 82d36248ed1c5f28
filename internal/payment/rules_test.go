package payment

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestDebitRule: a debit needs a Verified source; credits go to any live
// one; a removed source takes neither.
func TestDebitRule(t *testing.T) {
	for _, c := range []struct {
		src  SourceInfo
		d    Direction
		want errs.Code
	}{
		{SourceInfo{Verified: true}, Debit, ""},
		{SourceInfo{Verified: true}, Credit, ""},
		{SourceInfo{}, Debit, errs.DebitNotAllowed},
		{SourceInfo{}, Credit, ""},
		{SourceInfo{Verified: true, Removed: true}, Debit, errs.FundingSourceRemoved},
		{SourceInfo{Removed: true}, Credit, errs.FundingSourceRemoved},
	} {
		err := c.src.allows(c.d)
		if got := errs.CodeOf(err); got != c.want || (err != nil && got == "") {
			t.Errorf("%+v %s: %v, want %q", c.src, c.d, err, c.want)
		}
		if e, ok := errs.As(err); ok && e.Param != "funding_source_id" {
			t.Errorf("%+v %s: param %q", c.src, c.d, e.Param)
		}
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
