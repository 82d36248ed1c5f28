package provider

import (
	"strconv"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// Outcome is how one of the provider's errors reaches the merchant.
type Outcome int

// The outcomes.
const (
	// RetryLater: 502 provider_unavailable with Retry-After. The provider
	// or the bank failed for now; the token was not used, so the same
	// request can succeed later.
	RetryLater Outcome = iota
	// TokenRefused: 400 invalid_processor_token. The token will not work
	// as it stands (invalid, expired, revoked, or the customer must act).
	TokenRefused
	// NoACHNumbers: 400 invalid_account_type. The token's account has no
	// account and routing numbers (a credit card, say), so it can never be
	// a funding source.
	NoACHNumbers
	// IntegrationOff: 403 processor_not_enabled. The merchant has not
	// enabled this service as an integration in its provider settings.
	IntegrationOff
	// OperatorMistake: 502 provider_unavailable that does not ask for a
	// retry: the provider refused the service's own credentials. Logged at
	// error level for the operator.
	OperatorMistake
)

// rule is an error code's outcome and what the merchant is told.
type rule struct {
	outcome Outcome
	why     string        // completes "The processor token cannot be used: …" or "… failed: …"
	wait    time.Duration // Retry-After of a RetryLater; 0 takes defaultWait
}

// defaultWait is the Retry-After of a provider failure that names none.
const defaultWait = 5 * time.Second

// rules decide each of Plaid's documented error codes that this endpoint
// can answer (https://plaid.com/docs/errors/). Codes not here are treated
// by their HTTP status: 4xx as RetryLater with a warning logged, so an
// unknown code never burns the merchant's token, and 5xx as RetryLater.
var rules = map[string]rule{
	"INVALID_PROCESSOR_TOKEN":         {TokenRefused, "it is invalid, expired or revoked", 0},
	"INVALID_ACCESS_TOKEN":            {TokenRefused, "it is invalid, expired or revoked", 0},
	"ITEM_NOT_FOUND":                  {TokenRefused, "the customer's connection to their bank was removed", 0},
	"ACCESS_NOT_GRANTED":              {TokenRefused, "the customer did not share their account and routing numbers; ask them to link again and allow it", 0},
	"USER_PERMISSION_REVOKED":         {TokenRefused, "the customer revoked the connection", 0},
	"ITEM_LOGIN_REQUIRED":             {TokenRefused, "the customer must re-authenticate with their bank (item login required); after they do, the same token works", 0},
	"INSTITUTION_NO_LONGER_SUPPORTED": {TokenRefused, "the customer's bank is no longer supported by the provider", 0},
	"NO_AUTH_ACCOUNTS":                {NoACHNumbers, "", 0},
	"INVALID_PRODUCT":                 {IntegrationOff, "", 0},
	"PRODUCT_NOT_READY":               {RetryLater, "the provider has not finished verifying this account yet", time.Minute},
	"INSTITUTION_DOWN":                {RetryLater, "the customer's bank is down", time.Minute},
	"INSTITUTION_NOT_RESPONDING":      {RetryLater, "the customer's bank is not responding", time.Minute},
	"INSTITUTION_NOT_AVAILABLE":       {RetryLater, "the customer's bank is not available through the provider right now", time.Minute},
	"RATE_LIMIT_EXCEEDED":             {RetryLater, "the provider is limiting requests", 30 * time.Second},
	"PLANNED_MAINTENANCE":             {RetryLater, "the provider is down for planned maintenance", 5 * time.Minute},
	"INTERNAL_SERVER_ERROR":           {RetryLater, "the provider had an internal error", 0},
	"INVALID_API_KEYS":                {OperatorMistake, "", 0},
	"UNAUTHORIZED_ENVIRONMENT":        {OperatorMistake, "", 0},
}

// Rule is the outcome of a provider error code, as the merchant meets it.
func Rule(code string) (Outcome, bool) {
	r, ok := rules[code]
	return r.outcome, ok
}

// retryLater is provider_unavailable with a Retry-After of wait (rounded up
// to whole seconds, also in the error's retry_after).
func retryLater(why string, wait time.Duration) error {
	if wait <= 0 {
		wait = defaultWait
	}
	secs := int((wait + time.Second - 1) / time.Second)
	return errs.New(errs.ProviderUnavailable, "The bank-linking provider failed: "+why+
		". The processor token was not used; retry the same request later.").WithDetail("retry_after", strconv.Itoa(secs))
}

// contractError is the merchant's error for a provider error code.
func contractError(code string, r rule) error {
	switch r.outcome {
	case TokenRefused:
		return &errs.Error{Code: errs.InvalidProcessorToken, Param: "processor_token",
			Message: "The processor token cannot be used: " + r.why + "."}
	case NoACHNumbers:
		return &errs.Error{Code: errs.InvalidAccountType, Param: "processor_token",
			Message: "The processor token's account has no account and routing numbers: the provider found no checking or " +
				"savings account behind it (" + code + "). Only checking and savings accounts can be funding sources; " +
				"have the customer link one."}
	case IntegrationOff:
		return errs.New(errs.ProcessorNotEnabled,
			"The bank-linking provider says this service is not enabled as an integration in your provider settings ("+code+").")
	case OperatorMistake:
		return errs.New(errs.ProviderUnavailable,
			"The bank-linking provider refused this service's own credentials. This is a fault on our side, not in your "+
				"request, and it has been reported; the processor token was not used.")
	}
	return retryLater(r.why, r.wait)
}
