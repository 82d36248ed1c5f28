// Package provider reads a processor token's bank account from the
// bank-linking provider (Plaid's API) through the official client plaid-go,
// as the processor partner "service", and maps the provider's errors to the
// contract's codes. It implements funding.Provider.
//
// It is the only code that knows Plaid; the funding service sees the small
// funding.Provider port. plaid-go's own request and error models make the
// service speak exactly what the provider publishes. Provider errors become
// invalid_processor_token, invalid_account_type (an account that is
// neither checking nor savings), processor_not_enabled, or
// provider_unavailable with a Retry-After where the provider calls the
// trouble temporary. An unknown error counts as provider_unavailable, never
// as a bad token, so a surprise on the provider's side never burns the
// merchant's token; the service's own rejected credentials are logged at
// error level for the operator.
package provider

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/plaid/plaid-go/v43/plaid"

	"github.com/fundsource/fundsource/internal/funding"
)

// Timeout bounds one call to the provider, unless WithTimeout says otherwise.
const Timeout = 10 * time.Second

// Client calls the provider with the service's own client id and secret.
type Client struct {
	api     *plaid.APIClient
	log     *slog.Logger
	timeout time.Duration
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
	return &Client{api: plaid.NewAPIClient(cfg), log: log, timeout: Timeout}
}

// WithTimeout sets the limit of one call to the provider.
func (c *Client) WithTimeout(d time.Duration) *Client {
	c.timeout = d
	return c
}

// Account returns the bank account a processor token gives access to:
// /processor/auth/get's ACH numbers and the account's subtype and name.
func (c *Client) Account(ctx context.Context, processorToken string) (funding.ProviderAccount, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, _, err := c.api.PlaidApi.ProcessorAuthGet(ctx).
		ProcessorAuthGetRequest(*plaid.NewProcessorAuthGetRequest(processorToken)).Execute()
	if err != nil {
		return funding.ProviderAccount{}, c.mapError(err)
	}
	ach, ok := res.Numbers.GetAchOk()
	if !ok || ach == nil || ach.GetAccount() == "" || ach.GetRouting() == "" {
		return funding.ProviderAccount{}, contractError("NO_AUTH_ACCOUNTS", rules["NO_AUTH_ACCOUNTS"])
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

// OwnerScores asks /processor/identity/match how well a customer's legal
// name and email match the owner of a processor token's account. A score
// the provider leaves out is -1.
func (c *Client) OwnerScores(ctx context.Context, processorToken, legalName, email string) (funding.OwnerScores, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	user := plaid.NewIdentityMatchUser()
	user.SetLegalName(legalName)
	if email != "" {
		user.SetEmailAddress(email)
	}
	req := plaid.NewProcessorIdentityMatchRequest(processorToken)
	req.SetUser(*user)
	res, _, err := c.api.PlaidApi.ProcessorIdentityMatch(ctx).ProcessorIdentityMatchRequest(*req).Execute()
	if err != nil {
		return funding.OwnerScores{}, c.mapError(err)
	}
	sc := funding.OwnerScores{Name: -1, Email: -1}
	if n, ok := res.Account.GetLegalNameOk(); ok && n != nil {
		if v, ok := n.GetScoreOk(); ok && v != nil {
			sc.Name = int(*v)
		}
	}
	if e, ok := res.Account.GetEmailAddressOk(); ok && e != nil {
		if v, ok := e.GetScoreOk(); ok && v != nil {
			sc.Email = int(*v)
		}
	}
	return sc, nil
}

// mapError turns a provider failure into the merchant's error (see rules).
// Nothing here consumes the token: it is recorded as used only with the
// source it created.
func (c *Client) mapError(err error) error {
	pe, perr := plaid.ToPlaidError(err)
	if perr != nil || pe.ErrorCode == "" {
		// No Plaid error object: a timeout, a refused connection, or a proxy's
		// HTML page. Transport errors name the URL, never the token.
		c.log.Warn("bank-linking provider unreachable or answered without an error object", slog.Any("error", err))
		return retryLater("it did not answer in time or answered with something that is not an API response", 0)
	}
	attrs := []any{slog.String("error_type", string(pe.ErrorType)), slog.String("error_code", pe.ErrorCode),
		slog.String("provider_request_id", pe.GetRequestId())}
	r, known := rules[pe.ErrorCode]
	switch {
	case !known:
		c.log.Warn("bank-linking provider error not in the table: retry later", attrs...)
		return retryLater("it answered "+pe.ErrorCode, 0)
	case r.outcome == OperatorMistake:
		c.log.Error("the bank-linking provider refused the service's credentials: check PLAID_CLIENT_ID, PLAID_SECRET and PLAID_BASE_URL", attrs...)
	case r.outcome == RetryLater:
		c.log.Warn("bank-linking provider error", attrs...)
	}
	return contractError(pe.ErrorCode, r)
}
