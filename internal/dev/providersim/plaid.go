package providersim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/plaid/plaid-go/v43/plaid"
)

// plaidErrors are the errors the simulator can be told to answer with
// (POST /sim/fail), each with the HTTP status, error_type and message
// Plaid documents for it.
var plaidErrors = map[string]apiError{
	"INVALID_PROCESSOR_TOKEN":    {400, "INVALID_INPUT", "INVALID_PROCESSOR_TOKEN", "provided processor token is in an invalid format or expired"},
	"INVALID_API_KEYS":           {400, "INVALID_INPUT", "INVALID_API_KEYS", "invalid client_id or secret provided"},
	"INVALID_PRODUCT":            {400, "INVALID_INPUT", "INVALID_PRODUCT", integrationOffMessage},
	"ITEM_LOGIN_REQUIRED":        {400, "ITEM_ERROR", "ITEM_LOGIN_REQUIRED", loginRequiredMessage},
	"ITEM_NOT_FOUND":             {400, "ITEM_ERROR", "ITEM_NOT_FOUND", "the Item you requested cannot be found. This Item does not exist, has been previously removed via /item/remove, or has had access removed by the user"},
	"ACCESS_NOT_GRANTED":         {400, "ITEM_ERROR", "ACCESS_NOT_GRANTED", "the user did not grant the necessary permissions for their account"},
	"NO_AUTH_ACCOUNTS":           {400, "ITEM_ERROR", "NO_AUTH_ACCOUNTS", noAuthAccountsMessage},
	"PRODUCT_NOT_READY":          {400, "ITEM_ERROR", "PRODUCT_NOT_READY", "the requested product is not yet ready. please provide a webhook or try the request again later"},
	"INSTITUTION_DOWN":           {400, "INSTITUTION_ERROR", "INSTITUTION_DOWN", "this institution is not currently responding to this request. please try again soon"},
	"INSTITUTION_NOT_RESPONDING": {400, "INSTITUTION_ERROR", "INSTITUTION_NOT_RESPONDING", "this institution is not currently responding to this request. please try again soon"},
	"INSTITUTION_NOT_AVAILABLE":  {400, "INSTITUTION_ERROR", "INSTITUTION_NOT_AVAILABLE", institutionNotAvailableMessage},
	"INSTITUTION_NO_LONGER_SUPPORTED": {400, "INSTITUTION_ERROR", "INSTITUTION_NO_LONGER_SUPPORTED",
		"this institution is no longer supported by Plaid"},
	"RATE_LIMIT_EXCEEDED":   {429, "RATE_LIMIT_EXCEEDED", "RATE_LIMIT_EXCEEDED", "rate limit exceeded for attempts to access this item. please try again later"},
	"PLANNED_MAINTENANCE":   {503, "API_ERROR", "PLANNED_MAINTENANCE", "the Plaid API is temporarily unavailable due to planned maintenance. visit https://status.plaid.com/ for more information"},
	"INTERNAL_SERVER_ERROR": {500, "API_ERROR", "INTERNAL_SERVER_ERROR", "an unexpected error occurred"},
}

// Failures that are not Plaid error objects.
const (
	// FailHTML502 answers 502 with an HTML page, as a proxy in front of
	// the provider does.
	FailHTML502 = "html_502"
	// FailTimeout answers nothing until the client gives up.
	FailTimeout = "timeout"
)

// Failures lists what /sim/fail accepts: Plaid's error codes and the two
// failures above.
func Failures() []string {
	out := []string{FailHTML502, FailTimeout}
	for code := range plaidErrors {
		out = append(out, code)
	}
	slices.Sort(out)
	return out
}

const (
	integrationOffMessage = `The provided API keys are not enabled for the "service" integration. ` +
		`Please see https://dashboard.plaid.com/developers/integrations to enable your keys for this integration.`
	loginRequiredMessage = "the login details of this item have changed (credentials, MFA, or required user action) " +
		"and a user login is required to update this information"
	noAuthAccountsMessage          = "There are no valid checking or savings account(s) associated with this Item"
	institutionNotAvailableMessage = "this institution is not currently responding to this request. please try again soon"
)

func plaidError(code string) *apiError {
	e := plaidErrors[code]
	return &e
}

// missing checks Plaid's required fields (dotted paths into nested
// objects): MISSING_FIELDS under INVALID_REQUEST naming every one absent.
func missing(body map[string]any, fields ...string) *apiError {
	var absent []string
	for _, f := range fields {
		var v any = body
		for _, part := range strings.Split(f, ".") {
			m, _ := v.(map[string]any)
			v = m[part]
		}
		if v == nil || v == "" {
			absent = append(absent, f)
		}
	}
	if len(absent) == 0 {
		return nil
	}
	return &apiError{400, "INVALID_REQUEST", "MISSING_FIELDS", "the following required fields are missing: " + strings.Join(absent, ", ")}
}

// invalidField is Plaid's answer to a field of the wrong value.
func invalidField(format string, args ...any) *apiError {
	return &apiError{400, "INVALID_REQUEST", "INVALID_FIELD", fmt.Sprintf(format, args...)}
}

// enumList checks that body[key], when present, is a list of values the
// check accepts (Plaid's enums, as plaid-go knows them).
func enumList(body map[string]any, key string, check func(string) bool) *apiError {
	v, present := body[key]
	if !present {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return invalidField("%s must be an array", key)
	}
	for _, item := range list {
		s, _ := item.(string)
		if !check(s) {
			return invalidField("%s contains an invalid value: %q", key, fmt.Sprint(item))
		}
	}
	return nil
}

func validProduct(s string) bool     { return plaid.Products(s).IsValid() }
func validCountryCode(s string) bool { return plaid.CountryCode(s).IsValid() }
func validReasonCode(s string) bool  { return plaid.ItemRemoveReasonCode(s).IsValid() }
