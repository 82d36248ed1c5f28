package funding

import (
	"errors"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/person"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Input creates a funding source from routing and account numbers. Both are
// strings: account numbers may carry significant leading zeros.
type Input struct {
	CustomerID    string  `json:"user_id"`
	RoutingNumber string  `json:"routing_number"`
	AccountNumber string  `json:"account_number"`
	AccountType   *string `json:"account_type"` // nil: checking; "" is refused
	Nickname      *string `json:"nickname"`
	// BankName is accepted because the spec's parameter list marks it
	// required; it is used only when the routing directory has no name.
	BankName *string `json:"bank_name"`
	// AccountHolderType is "individual" or "company"; nil: company when
	// the customer has a business_name, else individual.
	AccountHolderType *string `json:"account_holder_type"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
}

// Limits of the input fields.
const (
	MinAccountDigits = 4
	MaxAccountDigits = 17
	MaxNickname      = 50
	MaxBankName      = 100
	MaxUserID        = 100
)

// AccountInUseMessage is the spec's exact message for an account number held
// by another customer.
const AccountInUseMessage = "This bank account is associated with another user"

// account is validated creation input.
type account struct {
	customerID, routing, number, accountType string
	nickname, bankName                       *string
	holderType                               string // "": the customer's default
}

func (s *Service) validate(env tenant.Environment, in Input) (account, error) {
	a := account{customerID: strings.TrimSpace(in.CustomerID), routing: in.RoutingNumber, number: in.AccountNumber}
	if a.customerID == "" {
		return account{}, errs.Invalid("user_id", "user_id is required")
	}
	if len(a.customerID) > MaxUserID {
		return account{}, customerNotFound()
	}
	if a.routing == "" {
		return account{}, errs.Invalid("routing_number", "routing_number is required")
	}
	name, err := s.banks.Check(a.routing)
	if err != nil {
		return account{}, err
	}
	if env.Live() && s.banks.SandboxOnly(a.routing) {
		return account{}, &errs.Error{Code: errs.InvalidRoutingNumber, Param: "routing_number",
			Message: "routing_number is a sandbox test number; production needs a real bank's routing number"}
	}
	if a.number == "" {
		return account{}, errs.Invalid("account_number", "account_number is required")
	}
	if err := CheckAccountNumber(a.number); err != nil {
		return account{}, err
	}
	switch {
	case in.AccountType == nil:
		a.accountType = Checking
	case *in.AccountType == Checking || *in.AccountType == Savings:
		a.accountType = *in.AccountType
	default:
		return account{}, &errs.Error{Code: errs.InvalidAccountType, Param: "account_type",
			Message: `account_type must be "checking" or "savings"`}
	}
	if a.holderType, err = holderType(in.AccountHolderType); err != nil {
		return account{}, err
	}
	if a.nickname, err = optional("nickname", in.Nickname, MaxNickname); err != nil {
		return account{}, err
	}
	if name != "" {
		a.bankName = &name
	} else if a.bankName, err = optional("bank_name", in.BankName, MaxBankName); err != nil {
		return account{}, err
	}
	return a, nil
}

// holderType validates an optional account_holder_type; "" when not given.
func holderType(v *string) (string, error) {
	switch {
	case v == nil:
		return "", nil
	case *v == HolderIndividual || *v == HolderCompany:
		return *v, nil
	}
	return "", errs.Invalid("account_holder_type", `account_holder_type must be "individual" or "company"`)
}

// defaultHolder is the account holder type of a source whose creation
// named none: company when the customer has a business name.
func defaultHolder(who Identity) string {
	if who.Company {
		return HolderCompany
	}
	return HolderIndividual
}

// ErrHolderGuess is the store's answer to a creation whose guessed
// account holder type is not the customer's default.
var ErrHolderGuess = errors.New("funding: account holder type guessed wrong")

// CheckAccountNumber accepts 4 to 17 ASCII digits; leading zeros are kept
// and significant.
func CheckAccountNumber(n string) error {
	if len(n) < MinAccountDigits || len(n) > MaxAccountDigits || strings.Trim(n, "0123456789") != "" {
		return &errs.Error{Code: errs.InvalidAccountNumber, Param: "account_number",
			Message: "account_number must be 4 to 17 digits, sent as a string (leading zeros are kept)"}
	}
	return nil
}

// optional trims an optional label; empty becomes nil.
func optional(param string, v *string, max int) (*string, error) {
	if v == nil {
		return nil, nil
	}
	t, err := person.Name(param, *v, max, person.Optional)
	if err != nil || t == "" {
		return nil, err
	}
	return &t, nil
}

// ErrNoCustomer is the store's answer to a claim for a customer that does
// not exist in the scope.
var ErrNoCustomer = errors.New("funding: no such customer")

func customerNotFound() error {
	return &errs.Error{Code: errs.CustomerNotFound, Param: "user_id", Message: "No customer with this user_id exists."}
}

func sourceNotFound() error {
	return &errs.Error{Code: errs.FundingSourceNotFound, Param: "funding_source_id",
		Message: "No funding source with this funding_source_id exists."}
}
