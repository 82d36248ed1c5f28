// Package errs defines the service's domain error type and the error codes
// the API answers with (the error table of docs/api.md). It imports only the
// standard library so that every other package can use it.
//
// Beyond the contract's table, resource_not_found (404) and conflict (409)
// are fallbacks for cases no specific code names. Callers never match on
// message text, only on codes.
package errs

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code from the contract's table.
type Code string

// The contract's error codes. The web package maps each to one HTTP status.
const (
	InvalidRequest               Code = "invalid_request"
	InvalidRoutingNumber         Code = "invalid_routing_number"
	InvalidAccountNumber         Code = "invalid_account_number"
	InvalidAccountType           Code = "invalid_account_type"
	InvalidAmounts               Code = "invalid_amounts"
	VerificationFailed           Code = "verification_failed"
	InvalidProcessorToken        Code = "invalid_processor_token"
	InvalidURL                   Code = "invalid_url"
	Unauthorized                 Code = "unauthorized"
	PermissionDenied             Code = "permission_denied"
	ProcessorNotEnabled          Code = "processor_not_enabled"
	DebitNotAllowed              Code = "debit_not_allowed"
	CustomerNotFound             Code = "customer_not_found"
	FundingSourceNotFound        Code = "funding_source_not_found"
	EventNotFound                Code = "event_not_found"
	WebhookNotFound              Code = "webhook_not_found"
	NotFound                     Code = "resource_not_found"
	RouteNotFound                Code = "route_not_found"
	MethodNotAllowed             Code = "method_not_allowed"
	AccountInUse                 Code = "account_in_use"
	DuplicateFundingSource       Code = "duplicate_funding_source"
	FundingSourceAlreadyVerified Code = "funding_source_already_verified"
	VerificationNotInitiated     Code = "verification_not_initiated"
	VerificationPending          Code = "verification_pending"
	VerificationAttemptsExceeded Code = "verification_attempts_exceeded"
	VerificationExpired          Code = "verification_expired"
	VerificationLimitReached     Code = "verification_limit_reached"
	IdempotencyKeyReused         Code = "idempotency_key_reused"
	RequestInProgress            Code = "request_in_progress"
	Conflict                     Code = "conflict"
	RequestTooLarge              Code = "request_too_large"
	UnsupportedMediaType         Code = "unsupported_media_type"
	RateLimited                  Code = "rate_limited"
	ProviderUnavailable          Code = "provider_unavailable"
	InstantUnavailable           Code = "instant_unavailable"  // 422: no instant rail reaches the bank
	AccountCheckFailed           Code = "account_check_failed" // 422: the account check failed under block_fail; carries reasons
	OwnershipMismatch            Code = "ownership_mismatch"   // 422: the account's owner does not match under require_match
	RailUnavailable              Code = "rail_unavailable"     // 503: the instant rail is down or timed out
	Internal                     Code = "internal_error"
	ServiceUnavailable           Code = "service_unavailable"

	// Beyond the contract's table, for payments and subscriptions.
	InvalidAmount        Code = "invalid_amount"         // 400: not a positive amount within the limit
	PaymentNotFound      Code = "payment_not_found"      // 404
	SubscriptionNotFound Code = "subscription_not_found" // 404
	TestClockNotFound    Code = "test_clock_not_found"   // 404: a sandbox test clock unknown to the scope
	FundingSourceRemoved Code = "funding_source_removed" // 409: a payment or subscription on a removed source

	// AuthorizationRequired is 400: a production debit or subscription
	// with neither a mandate_id nor an authorization.
	AuthorizationRequired Code = "authorization_required"
	// FundingSourceBlocked is 403: a debit of a source a return blocked.
	FundingSourceBlocked Code = "funding_source_blocked"
	// UnblockLimit is 409: a second unblock of a source within 365 days.
	UnblockLimit Code = "unblock_limit"
	// RetryNotAllowed is 409: a payment that may not be presented again
	// (its message names the rule).
	RetryNotAllowed Code = "retry_not_allowed"
	// ReversalWindowClosed is 409: a reversal after the fifth banking day
	// after the payment's settlement date.
	ReversalWindowClosed Code = "reversal_window_closed"
	// ReinitiationRequired is 409: a new debit of the same amount from a
	// source whose debit came back R01 or R09 within 180 days, without an
	// authorization newer than the return; it is presented again by
	// POST /v2/payments/{id}/retry.
	ReinitiationRequired Code = "reinitiation_required"
	// OriginatorNotActive is 403: a payment or subscription while the
	// merchant environment's originator is pending review or suspended.
	OriginatorNotActive Code = "originator_not_active"
	// LimitExceeded is 422: a payment or subscription over one of the
	// originator's limits; it carries the limit's name and what remains.
	LimitExceeded Code = "limit_exceeded"
	// MandatesActive is 409: a change of a source's account_holder_type
	// while a mandate of the source is active.
	MandatesActive Code = "mandates_active"
	// NotReversible is 409: a reversal of an instant credit, which is
	// final once the rail accepted it.
	NotReversible Code = "not_reversible"
	// RefundNotAllowed is 409: a refund of a payment that is not a
	// processed debit, past the refund window or over what remains to
	// refund; it carries the reason.
	RefundNotAllowed Code = "refund_not_allowed"
)

// Error is a domain error with a contract code. Message is safe to show to the
// API caller; Param names the offending request field, if any; Details are
// extra members of the error object (for example attempts_remaining).
type Error struct {
	Code    Code
	Message string
	Param   string
	Details map[string]any
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s (param %s)", e.Code, e.Message, e.Param)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// New returns an Error with the code and message.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Newf returns an Error with the code and a formatted message.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid_request error about one request field.
func Invalid(param, message string) *Error {
	return &Error{Code: InvalidRequest, Message: message, Param: param}
}

// WithDetail returns a copy of e with one more detail member.
func (e *Error) WithDetail(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// As returns the *Error in err's chain, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// CodeOf returns the code of the *Error in err's chain, or "" if there is none.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return ""
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool {
	return CodeOf(err) == code
}
