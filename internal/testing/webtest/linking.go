package webtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/provider"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/dev/providersim"
	"github.com/fundsource/fundsource/internal/merchant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/plaid/plaid-go/v43/plaid"
)

const (
	MerchantClient, merchantSecret = "acme-client", "acme-secret"
	ServiceClient, ServiceSecret   = "fundsource-service", "service-secret"
)

// Linking is a harness with a provider simulator behind the funding service
// and a merchant's plaid-go client for the upstream steps.
type Linking struct {
	*Harness
	Sim    *httptest.Server
	Client *plaid.APIClient // the merchant's provider client
}

// NewLinking returns a harness whose funding service reads accounts from a provider simulator.
func NewLinking(t *testing.T) *Linking {
	h := NewHarness(t)
	sim := httptest.NewServer(providersim.New(providersim.Config{
		Clients:           map[string]string{MerchantClient: merchantSecret, ServiceClient: ServiceSecret},
		ProcessorClientID: ServiceClient,
	}).Handler())
	t.Cleanup(sim.Close)
	h.Funding.WithProvider(provider.New(sim.URL, ServiceClient, ServiceSecret, h.Logger).WithTimeout(time.Second))
	cfg := plaid.NewConfiguration()
	cfg.Servers = plaid.ServerConfigurations{{URL: sim.URL}}
	cfg.AddDefaultHeader("PLAID-CLIENT-ID", MerchantClient)
	cfg.AddDefaultHeader("PLAID-SECRET", merchantSecret)
	return &Linking{Harness: h, Sim: sim, Client: plaid.NewAPIClient(cfg)}
}

// Item is what the merchant holds after the upstream steps.
type Item struct {
	AccessToken string
	accountID   string
	institution string
}

// Link runs upstream steps 1–3 and the account lookup of step 4 through
// plaid-go: link token, sandbox public token (no accounts returned), the
// exchange, and /accounts/get to find the account of the subtype.
func (l *Linking) Link(institution, subtype string) Item {
	l.T.Helper()
	ctx := context.Background()
	api := l.Client.PlaidApi
	ltReq := plaid.NewLinkTokenCreateRequest("Acme", "en", []plaid.CountryCode{plaid.COUNTRYCODE_US})
	ltReq.SetUser(*plaid.NewLinkTokenCreateRequestUser("user-1"))
	ltReq.SetProducts([]plaid.Products{plaid.PRODUCTS_AUTH})
	lt, _, err := api.LinkTokenCreate(ctx).LinkTokenCreateRequest(*ltReq).Execute()
	if err != nil || !strings.HasPrefix(lt.GetLinkToken(), "link-sandbox-") {
		l.T.Fatalf("link token: %v %+v", err, lt)
	}
	pt, _, err := api.SandboxPublicTokenCreate(ctx).SandboxPublicTokenCreateRequest(
		*plaid.NewSandboxPublicTokenCreateRequest(institution, []plaid.Products{plaid.PRODUCTS_AUTH})).Execute()
	if err != nil {
		l.T.Fatalf("sandbox public token: %v", err)
	}
	ex, _, err := api.ItemPublicTokenExchange(ctx).ItemPublicTokenExchangeRequest(
		*plaid.NewItemPublicTokenExchangeRequest(pt.GetPublicToken())).Execute()
	if err != nil {
		l.T.Fatalf("exchange: %v", err)
	}
	accts, _, err := api.AccountsGet(ctx).AccountsGetRequest(*plaid.NewAccountsGetRequest(ex.GetAccessToken())).Execute()
	if err != nil {
		l.T.Fatalf("accounts: %v", err)
	}
	for _, a := range accts.GetAccounts() {
		if st, ok := a.GetSubtypeOk(); ok && st != nil && string(*st) == subtype {
			return Item{AccessToken: ex.GetAccessToken(), accountID: a.GetAccountId(), institution: institution}
		}
	}
	l.T.Fatalf("no %s account among %d", subtype, len(accts.GetAccounts()))
	return Item{}
}

// ProcessorToken is upstream step 4: a processor token for the processor named.
func (l *Linking) ProcessorToken(it Item, processor string) (string, error) {
	res, _, err := l.Client.PlaidApi.ProcessorTokenCreate(context.Background()).ProcessorTokenCreateRequest(
		*plaid.NewProcessorTokenCreateRequest(it.AccessToken, it.accountID, processor)).Execute()
	return res.GetProcessorToken(), err
}

// Token is a processor token of it for the service.
func (l *Linking) Token(it Item) string {
	l.T.Helper()
	tok, err := l.ProcessorToken(it, "service")
	if err != nil {
		l.T.Fatalf("processor token: %v", err)
	}
	return tok
}

// Control flips a simulator switch.
func (l *Linking) Control(path, body string) {
	l.T.Helper()
	res, err := http.Post(l.Sim.URL+path, "application/json", strings.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		l.T.Fatalf("simulator control %s: %v %v", path, err, res)
	}
	res.Body.Close()
}

// LinkBody is step 5's request.
func LinkBody(customerID, token string) string {
	return `{"user_id":` + th.MustJSON(customerID) + `,"processor_token":` + th.MustJSON(token) + `}`
}

// LinkPath is the endpoint that links a processor token.
const LinkPath = "/v2/funding-source/processor/linking"

// NamedCustomer creates a customer with the given names and email.
func (l *Linking) NamedCustomer(key, first, last, email string, business ...string) string {
	l.T.Helper()
	body := `{"first_name":` + th.MustJSON(first) + `,"last_name":` + th.MustJSON(last) + `,"email":` + th.MustJSON(email)
	if len(business) > 0 {
		body += `,"business_name":` + th.MustJSON(business[0])
	}
	return th.WantOK(l.T, l.Post("/v2/customers", key, body+`}`))["user_id"].(string)
}

// SetOwnershipPolicy sets the merchant's sandbox ownership policy ("flag" or "require_match").
func (l *Linking) SetOwnershipPolicy(m merchant.Created, policy string) {
	l.T.Helper()
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	if _, err := l.Merchants.SetPolicies(context.Background(), scope, merchant.Policies{Ownership: policy}, audit.Operator("test")); err != nil {
		l.T.Fatal(err)
	}
}
