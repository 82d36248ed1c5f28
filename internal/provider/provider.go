// Package provider reads a processor token's bank account from the
// bank-linking provider (Plaid's API) through the official client plaid-go,
// as the processor partner "service", and maps the provider's errors to the
// contract's codes. It implements funding.Provider.
package provider

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/plaid/plaid-go/v43/plaid"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/funding"
)

// Timeout bounds one call to the provider.
const Timeout = 10 * time.Second

// Client calls the provider with the service's own client id and secret.
type Client struct {
	api *plaid.APIClient
	log *slog.Logger
}

// New returns a client for the provider at baseURL (for example
// https://sandbox.plaid.com or the simulator's address).
func New(baseURL, clientID, secret string, log *slog.Logger) *Client {
	cfg := plaid.NewConfiguration()
	cfg.Servers = plaid.ServerConfigurations{{URL: baseURL}}
	cfg.AddDefaultHeader("PLAID-CLIENT-ID", clientID)
	cfg.AddDefaultHeader("PLAID-SECRET", secret)
	cfg.HTTPClient = &http.Client{Timeout: Timeout}
	cfg.UserAgent = "fundsource/1"
	return &Client{api: plaid.NewAPIClient(cfg), log: log}
}

// Account returns the bank account a processor token gives access to:
// /processor/auth/get's ACH numbers and the account's subtype and name.
func (c *Client) Account(ctx context.Context, processorToken string) (funding.ProviderAccount, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	res, _, err := c.api.PlaidApi.ProcessorAuthGet(ctx).
		ProcessorAuthGetRequest(*plaid.NewProcessorAuthGetRequest(processorToken)).Execute()
	if err != nil {
		return funding.ProviderAccount{}, c.mapError(err)
	}
	ach, ok := res.Numbers.GetAchOk()
	if !ok || ach == nil || ach.GetAccount() == "" || ach.GetRouting() == "" {
		return funding.ProviderAccount{}, errs.New(errs.InvalidProcessorToken,
			"The processor token's account has no ACH account and routing numbers.")
	}
	acct := funding.ProviderAccount{
		RoutingNumber: ach.GetRouting(),
		AccountNumber: ach.GetAccount(),
		Type:          string(res.Account.GetType()),
		Name:          res.Account.GetName(),
	}
	if st, ok := res.Account.GetSubtypeOk(); ok && st != nil {
		acct.Subtype = string(*st)
	}
	return acct, nil
}

// invalidToken are the provider's codes for a token that will never work:
// invalid, expired or revoked, its item needing re-authentication, its
// institution disabled.
var invalidToken = map[string]bool{
	"INVALID_PROCESSOR_TOKEN":         true,
	"INVALID_ACCESS_TOKEN":            true,
	"ITEM_NOT_FOUND":                  true,
	"ITEM_LOGIN_REQUIRED":             true,
	"ACCESS_NOT_GRANTED":              true,
	"USER_PERMISSION_REVOKED":         true,
	"INSTITUTION_NOT_AVAILABLE":       true,
	"INSTITUTION_NO_LONGER_SUPPORTED": true,
}

// notEnabled are the provider's codes for "the service is not enabled as an
// integration in the merchant's provider settings".
var notEnabled = map[string]bool{
	"PROCESSOR_NOT_ENABLED": true,
	"INVALID_PRODUCT":       true,
}

// mapError turns a provider failure into a contract error. Anything that is
// not clearly the token's fault — timeouts, 5xx, rate limits, the service's
// own credentials refused, unknown codes — is provider_unavailable, so the
// token is not consumed and the merchant can retry.
func (c *Client) mapError(err error) error {
	pe, perr := plaid.ToPlaidError(err)
	if perr == nil && pe.ErrorCode != "" {
		switch {
		case invalidToken[pe.ErrorCode]:
			return errs.Newf(errs.InvalidProcessorToken, "The processor token cannot be used: %s.", describe(pe.ErrorCode))
		case notEnabled[pe.ErrorCode]:
			return errs.New(errs.ProcessorNotEnabled,
				"The bank-linking provider says this service is not enabled as an integration in your provider settings.")
		}
		c.log.Warn("bank-linking provider error", slog.String("error_type", string(pe.ErrorType)),
			slog.String("error_code", pe.ErrorCode), slog.String("provider_request_id", pe.GetRequestId()))
	} else {
		var gerr plaid.GenericOpenAPIError
		if !errors.As(err, &gerr) {
			// Transport errors name the URL, never the request body with the token.
			c.log.Warn("bank-linking provider unreachable", slog.Any("error", err))
		}
	}
	return errs.New(errs.ProviderUnavailable, "The bank-linking provider failed or did not answer in time; the processor token was not used, so you can retry.")
}

func describe(code string) string {
	switch code {
	case "ITEM_LOGIN_REQUIRED":
		return "the customer must re-authenticate with their bank (item login required)"
	case "INSTITUTION_NOT_AVAILABLE", "INSTITUTION_NO_LONGER_SUPPORTED":
		return "the customer's bank is not available through the provider"
	case "ITEM_NOT_FOUND", "ACCESS_NOT_GRANTED", "USER_PERMISSION_REVOKED":
		return "the customer revoked the connection"
	}
	return "it is invalid, expired or revoked"
}
