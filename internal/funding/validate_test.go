package funding

import (
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/routing"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

func ptr(s string) *string { return &s }

// TestValidate is the table of the creation rules: routing number, account
// number, account type, nickname and bank name, each refused with its
// code and param, or accepted as stored.
func TestValidate(t *testing.T) {
	s := NewService(nil, routing.Embedded(), nil, time.Now)
	ok := Input{CustomerID: "cus_1", RoutingNumber: "021000021", AccountNumber: "000123456789"}
	with := func(change func(*Input)) Input {
		in := ok
		change(&in)
		return in
	}
	refused := []struct {
		name  string
		in    Input
		code  errs.Code
		param string
	}{
		{"no user_id", with(func(in *Input) { in.CustomerID = " " }), errs.InvalidRequest, "user_id"},
		{"user_id too long to exist", with(func(in *Input) { in.CustomerID = strings.Repeat("c", MaxUserID+1) }), errs.CustomerNotFound, "user_id"},
		{"no routing number", with(func(in *Input) { in.RoutingNumber = "" }), errs.InvalidRequest, "routing_number"},
		{"8 digits", with(func(in *Input) { in.RoutingNumber = "02100002" }), errs.InvalidRoutingNumber, "routing_number"},
		{"10 digits", with(func(in *Input) { in.RoutingNumber = "0210000210" }), errs.InvalidRoutingNumber, "routing_number"},
		{"bad check digit", with(func(in *Input) { in.RoutingNumber = "021000022" }), errs.InvalidRoutingNumber, "routing_number"},
		{"letters", with(func(in *Input) { in.RoutingNumber = "02100002a" }), errs.InvalidRoutingNumber, "routing_number"},
		{"spaces", with(func(in *Input) { in.RoutingNumber = " 021000021" }), errs.InvalidRoutingNumber, "routing_number"},
		{"no account number", with(func(in *Input) { in.AccountNumber = "" }), errs.InvalidRequest, "account_number"},
		{"3 digits", with(func(in *Input) { in.AccountNumber = "123" }), errs.InvalidAccountNumber, "account_number"},
		{"18 digits", with(func(in *Input) { in.AccountNumber = strings.Repeat("1", 18) }), errs.InvalidAccountNumber, "account_number"},
		{"a dash", with(func(in *Input) { in.AccountNumber = "1234-5678" }), errs.InvalidAccountNumber, "account_number"},
		{"non-ASCII digits", with(func(in *Input) { in.AccountNumber = "١٢٣٤٥" }), errs.InvalidAccountNumber, "account_number"},
		{"unknown account type", with(func(in *Input) { in.AccountType = ptr("brokerage") }), errs.InvalidAccountType, "account_type"},
		{"capitalised account type", with(func(in *Input) { in.AccountType = ptr("Checking") }), errs.InvalidAccountType, "account_type"},
		{"empty account type", with(func(in *Input) { in.AccountType = ptr("") }), errs.InvalidAccountType, "account_type"},
		{"long nickname", with(func(in *Input) { in.Nickname = ptr(strings.Repeat("n", MaxNickname+1)) }), errs.InvalidRequest, "nickname"},
		{"control character in nickname", with(func(in *Input) { in.Nickname = ptr("rent\x00") }), errs.InvalidRequest, "nickname"},
		{"long bank name", with(func(in *Input) {
			in.RoutingNumber, in.BankName = "011000028", ptr(strings.Repeat("b", MaxBankName+1))
		}), errs.InvalidRequest, "bank_name"},
	}
	refusedLive := []struct {
		name string
		in   Input
	}{
		{"sandbox test number 1", with(func(in *Input) { in.RoutingNumber = "110000000" })},
		{"sandbox test number 2", with(func(in *Input) { in.RoutingNumber = "222222226" })},
	}
	for _, c := range refusedLive {
		if _, err := s.validate(tenant.Sandbox, c.in); err != nil {
			t.Errorf("%s in sandbox: %v", c.name, err)
		}
		if _, err := s.validate(tenant.Production, c.in); errs.CodeOf(err) != errs.InvalidRoutingNumber {
			t.Errorf("%s in production: %v, want invalid_routing_number", c.name, err)
		}
	}
	for _, c := range refused {
		_, err := s.validate(tenant.Sandbox, c.in)
		e, isErr := errs.As(err)
		if !isErr || e.Code != c.code || e.Param != c.param {
			t.Errorf("%s: error %v, want %s on %q", c.name, err, c.code, c.param)
		}
	}

	accepted := []struct {
		name string
		in   Input
		want account
	}{
		{"leading zeros kept, checking by default, bank from the directory", ok,
			account{customerID: "cus_1", routing: "021000021", number: "000123456789", accountType: Checking, bankName: ptr("JPMorgan Chase Bank")}},
		{"4 digits, savings, nickname trimmed", with(func(in *Input) {
			in.AccountNumber, in.AccountType, in.Nickname = "0001", ptr(Savings), ptr("  Rent  ")
		}), account{customerID: "cus_1", routing: "021000021", number: "0001", accountType: Savings, nickname: ptr("Rent"), bankName: ptr("JPMorgan Chase Bank")}},
		{"17 digits, the directory's bank name wins over the request's", with(func(in *Input) {
			in.AccountNumber, in.BankName = strings.Repeat("9", 17), ptr("My Bank")
		}), account{customerID: "cus_1", routing: "021000021", number: strings.Repeat("9", 17), accountType: Checking, bankName: ptr("JPMorgan Chase Bank")}},
		{"a routing number unknown to the sample directory takes the request's bank name", with(func(in *Input) {
			in.RoutingNumber, in.BankName = "011000028", ptr(" First Local ")
		}), account{customerID: "cus_1", routing: "011000028", number: "000123456789", accountType: Checking, bankName: ptr("First Local")}},
		{"unknown routing number, no bank name", with(func(in *Input) { in.RoutingNumber = "011000028" }),
			account{customerID: "cus_1", routing: "011000028", number: "000123456789", accountType: Checking}},
		{"an empty nickname is none", with(func(in *Input) { in.Nickname = ptr("   ") }),
			account{customerID: "cus_1", routing: "021000021", number: "000123456789", accountType: Checking, bankName: ptr("JPMorgan Chase Bank")}},
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, c := range accepted {
		got, err := s.validate(tenant.Sandbox, c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.customerID != c.want.customerID || got.routing != c.want.routing || got.number != c.want.number ||
			got.accountType != c.want.accountType || str(got.nickname) != str(c.want.nickname) || str(got.bankName) != str(c.want.bankName) {
			t.Errorf("%s: got %+v (nickname %s, bank %s), want %+v (nickname %s, bank %s)", c.name, got, str(got.nickname),
				str(got.bankName), c.want, str(c.want.nickname), str(c.want.bankName))
		}
	}
}
