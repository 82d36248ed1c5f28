package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plaid/plaid-go/v43/plaid"

	"github.com/fundsource/fundsource/internal/adapter/provider"
	"github.com/fundsource/fundsource/internal/dev/providersim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

const (
	merchantClient, merchantSecret = "acme-client", "acme-secret"
	serviceClient, serviceSecret   = "fundsource-service", "service-secret"
)

// linking is a harness with a provider simulator behind the funding service
// and a merchant's plaid-go client for the upstream steps.
type linking struct {
	*harness
	sim    *httptest.Server
	client *plaid.APIClient // the merchant's provider client
}

func newLinking(t *testing.T) *linking {
	h := newHarness(t)
	sim := httptest.NewServer(providersim.New(providersim.Config{
		Clients:           map[string]string{merchantClient: merchantSecret, serviceClient: serviceSecret},
		ProcessorClientID: serviceClient,
	}).Handler())
	t.Cleanup(sim.Close)
	h.Funding.WithProvider(provider.New(sim.URL, serviceClient, serviceSecret, h.Logger).WithTimeout(time.Second))
	cfg := plaid.NewConfiguration()
	cfg.Servers = plaid.ServerConfigurations{{URL: sim.URL}}
	cfg.AddDefaultHeader("PLAID-CLIENT-ID", merchantClient)
	cfg.AddDefaultHeader("PLAID-SECRET", merchantSecret)
	return &linking{harness: h, sim: sim, client: plaid.NewAPIClient(cfg)}
}

// item is what the merchant holds after the upstream steps.
type item struct {
	accessToken string
	accountID   string
	institution string
}

// link runs upstream steps 1–3 and the account lookup of step 4 through
// plaid-go: link token, sandbox public token (no accounts returned), the
// exchange, and /accounts/get to find the account of the subtype.
func (l *linking) link(institution, subtype string) item {
	l.T.Helper()
	ctx := context.Background()
	api := l.client.PlaidApi
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
			return item{accessToken: ex.GetAccessToken(), accountID: a.GetAccountId(), institution: institution}
		}
	}
	l.T.Fatalf("no %s account among %d", subtype, len(accts.GetAccounts()))
	return item{}
}

// processorToken is upstream step 4: a processor token for the processor named.
func (l *linking) processorToken(it item, processor string) (string, error) {
	res, _, err := l.client.PlaidApi.ProcessorTokenCreate(context.Background()).ProcessorTokenCreateRequest(
		*plaid.NewProcessorTokenCreateRequest(it.accessToken, it.accountID, processor)).Execute()
	return res.GetProcessorToken(), err
}

func (l *linking) token(it item) string {
	l.T.Helper()
	tok, err := l.processorToken(it, "service")
	if err != nil {
		l.T.Fatalf("processor token: %v", err)
	}
	return tok
}

// control flips a simulator switch.
func (l *linking) control(path, body string) {
	l.T.Helper()
	res, err := http.Post(l.sim.URL+path, "application/json", strings.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		l.T.Fatalf("simulator control %s: %v %v", path, err, res)
	}
	res.Body.Close()
}

// linkBody is step 5's request.
func linkBody(customerID, token string) string {
	return `{"user_id":` + th.MustJSON(customerID) + `,"processor_token":` + th.MustJSON(token) + `}`
}

const linkPath = "/v2/funding-source/processor/linking"

func TestProcessorTokenFiveStepFlow(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	it := l.link("ins_109508", "checking")
	tok := l.token(it)

	src := th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
	if src["status"] != "Verified" || src["bank_name"] != "First Platypus Bank" || src["account_type"] != "checking" ||
		src["user_id"] != user || len(src["last_four"].(string)) != 4 || src["nickname"] != "Plaid Checking" {
		t.Fatalf("linked source = %s", th.MustJSON(src))
	}
	id := src["funding_source_id"].(string)
	if got := th.WantOK(t, l.Get("/v2/funding-source/"+id, key)); got["status"] != "Verified" {
		t.Errorf("GET = %s", th.MustJSON(got))
	}
	if ev := l.Events("funding_source.verified"); len(ev) != 1 || ev[0]["funding_source_id"] != id {
		t.Errorf("verified events = %v", ev)
	}
	if ev := l.Events("funding_source.created"); len(ev) != 1 || ev[0]["status"] != "Verified" {
		t.Errorf("created events = %v", ev)
	}

	// Single use: a second submission is refused without calling the provider.
	l.control("/sim/outage", `{"enabled":true}`)
	r := l.Post(linkPath, key, linkBody(user, tok))
	th.WantError(t, r, 400, "invalid_processor_token")
	if !strings.Contains(r.JSON(t)["error"].(map[string]any)["message"].(string), "already used") {
		t.Errorf("reuse message: %s", r.Body)
	}
	l.control("/sim/outage", `{"enabled":false}`)

	// Another account of the same item (savings) links too; the credit card is refused clearly.
	sav := th.WantOK(t, l.Post(linkPath, key, linkBody(user, l.token(l.link("ins_109509", "savings")))))
	if sav["account_type"] != "savings" || sav["bank_name"] != "First Gingham Credit Union" {
		t.Errorf("savings = %s", th.MustJSON(sav))
	}
	card := l.Post(linkPath, key, linkBody(user, l.token(l.link("ins_109510", "credit card"))))
	th.WantError(t, card, 400, "invalid_account_type")
	if !strings.Contains(string(card.Body), "checking or savings") || card.ErrParam(t) != "processor_token" {
		t.Errorf("credit card refusal: %s", card.Body)
	}
}

func TestProcessorTokenUpgradesTheCustomersUnverifiedSource(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	it := l.link("ins_109511", "checking")
	tok := l.token(it)
	// Learn the account number the way the service does, then create it Unverified first.
	acct, err := provider.New(l.sim.URL, serviceClient, serviceSecret, l.Logger).Account(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	unverified := th.WantOK(t, l.Post("/v2/funding-source", key, th.SourceBody(user, acct.RoutingNumber, acct.AccountNumber)))
	linked := th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
	if linked["funding_source_id"] != unverified["funding_source_id"] || linked["status"] != "Verified" {
		t.Errorf("linking the customer's Unverified account = %s, want %s upgraded", th.MustJSON(linked), unverified["funding_source_id"])
	}
	// The upgraded source carries the link's ownership check from then on.
	wantOwnership(t, "the upgraded source", linked, "mismatch", 20, 0)
	wantOwnership(t, "the upgraded source on GET", th.WantOK(t, l.Get("/v2/funding-source/"+linked["funding_source_id"].(string), key)), "mismatch", 20, 0)
	// Another customer cannot link the same account.
	other := l.Customer(key)
	r := l.Post(linkPath, key, linkBody(other, l.token(it)))
	th.WantError(t, r, 409, "account_in_use")
	if p := r.ErrParam(t); p != "processor_token" {
		t.Errorf("account_in_use names %q; the request's field is processor_token", p)
	}
}

func TestProcessorTokenErrors(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)

	t.Run("service spelling", func(t *testing.T) {
		it := l.link("ins_109508", "checking")
		for _, p := range []string{"Service", " service", "service ", "SERVICE", "dwolla", ""} {
			tok, err := l.processorToken(it, p)
			pe, perr := plaid.ToPlaidError(err)
			if err == nil || tok != "" || perr != nil || pe.ErrorType != "INVALID_REQUEST" {
				t.Errorf("processor %q: token %q, error %v", p, tok, err)
			}
		}
	})
	t.Run("unknown customer checked first", func(t *testing.T) {
		l.control("/sim/outage", `{"enabled":true}`)
		defer l.control("/sim/outage", `{"enabled":false}`)
		th.WantError(t, l.Post(linkPath, key, linkBody("cus_unknown", "processor-sandbox-x")), 404, "customer_not_found")
	})
	t.Run("malformed", func(t *testing.T) {
		for _, tok := range []string{"not-a-token", "processor-sandbox-<script>", "access-sandbox-1234", strings.Repeat("processor-", 30)} {
			th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 400, "invalid_processor_token")
		}
		th.WantError(t, l.Post(linkPath, key, linkBody(user, "processor-sandbox-00000000-0000-4000-8000-000000000000")), 400, "invalid_processor_token")
		th.WantError(t, l.Post(linkPath, key, `{"user_id":"`+user+`"}`), 400, "invalid_request")
		th.WantError(t, l.Post(linkPath, key, `{"user_id":"`+user+`","processor_token":42}`), 400, "invalid_request")
	})
	t.Run("unauthorized", func(t *testing.T) {
		th.WantError(t, l.Post(linkPath, "sk_test_"+strings.Repeat("Z", 43), linkBody(user, "processor-sandbox-x")), 401, "unauthorized")
	})
	t.Run("revoked item", func(t *testing.T) {
		it := l.link("ins_109508", "checking")
		tok := l.token(it)
		if _, _, err := l.client.PlaidApi.ItemRemove(context.Background()).ItemRemoveRequest(*plaid.NewItemRemoveRequest(it.accessToken)).Execute(); err != nil {
			t.Fatal(err)
		}
		th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 400, "invalid_processor_token")
	})
	t.Run("login required", func(t *testing.T) {
		it := l.link("ins_109509", "checking")
		tok := l.token(it)
		l.control("/sim/items/login-required", `{"access_token":"`+it.accessToken+`"}`)
		r := l.Post(linkPath, key, linkBody(user, tok))
		th.WantError(t, r, 400, "invalid_processor_token")
		if !strings.Contains(string(r.Body), "re-authenticate") {
			t.Errorf("login-required message: %s", r.Body)
		}
	})
	t.Run("institution disabled", func(t *testing.T) {
		it := l.link("ins_109512", "checking")
		tok := l.token(it)
		l.control("/sim/institutions/disable", `{"institution_id":"ins_109512"}`)
		r := l.Post(linkPath, key, linkBody(user, tok))
		th.WantError(t, r, 502, "provider_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("a bank that is not available now: no Retry-After")
		}
		// Plaid counts INSTITUTION_NOT_AVAILABLE among the temporary
		// errors: the token still works once the bank is back.
		l.control("/sim/institutions/disable", `{"institution_id":"ins_109512","disabled":false}`)
		th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
	})
	t.Run("integration off", func(t *testing.T) {
		it := l.link("ins_109510", "savings")
		tok := l.token(it)
		l.control("/sim/clients/integration", `{"client_id":"`+merchantClient+`","enabled":false}`)
		if _, err := l.processorToken(it, "service"); err == nil {
			t.Error("the provider issued a processor token with the integration off")
		}
		th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 403, "processor_not_enabled")
		l.control("/sim/clients/integration", `{"client_id":"`+merchantClient+`","enabled":true}`)
		th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
	})
	t.Run("provider down, token kept", func(t *testing.T) {
		it := l.link("ins_109511", "savings")
		tok := l.token(it)
		l.control("/sim/outage", `{"enabled":true}`)
		th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 502, "provider_unavailable")
		l.control("/sim/outage", `{"enabled":false}`)
		if got := th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok))); got["status"] != "Verified" {
			t.Errorf("after the outage: %s", th.MustJSON(got))
		}
	})
}

func TestProviderUnreachableIs502(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	tok := l.token(l.link("ins_109508", "checking"))
	l.sim.Close()
	th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 502, "provider_unavailable")
	if n := l.Count("processor_tokens"); n != 0 {
		t.Errorf("a token was consumed by a failed call (%d rows)", n)
	}
}

func TestProcessorTokensNeverStoredOrLoggedInClear(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	var tokens []string
	for _, ins := range []string{"ins_109508", "ins_109509"} {
		tok := l.token(l.link(ins, "checking"))
		tokens = append(tokens, tok)
		th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
		th.WantError(t, l.Post(linkPath, key, linkBody(user, tok)), 400, "invalid_processor_token")
	}
	dump := []byte(l.DumpDatabase())
	for _, tok := range tokens {
		uuidPart := strings.TrimPrefix(tok, "processor-sandbox-")
		if bytes.Contains(dump, []byte(uuidPart)) {
			t.Errorf("processor token %s… found in the database", tok[:22])
		}
		if strings.Contains(l.Logs.String(), uuidPart) {
			t.Errorf("processor token %s… found in the logs", tok[:22])
		}
	}
	if n := l.Count("processor_tokens"); n != 2 {
		t.Errorf("consumed tokens = %d, want 2", n)
	}
}

// TestProviderErrorsReachTheMerchant makes the simulator answer
// /processor/auth/get with each failure Plaid documents for it (and a
// proxy's HTML 502, and no answer at all), one at a time, and checks the
// merchant's answer. After all of them the same token still links: no
// failure consumed it.
func TestProviderErrorsReachTheMerchant(t *testing.T) {
	t.Parallel()
	l := newLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	tok := l.token(l.link("ins_109508", "checking"))
	want := map[string]struct {
		status     int
		code       string
		retryAfter bool
	}{
		"INVALID_PROCESSOR_TOKEN":         {400, "invalid_processor_token", false},
		"ITEM_LOGIN_REQUIRED":             {400, "invalid_processor_token", false},
		"ITEM_NOT_FOUND":                  {400, "invalid_processor_token", false},
		"ACCESS_NOT_GRANTED":              {400, "invalid_processor_token", false},
		"INSTITUTION_NO_LONGER_SUPPORTED": {400, "invalid_processor_token", false},
		"NO_AUTH_ACCOUNTS":                {400, "invalid_account_type", false},
		"INVALID_PRODUCT":                 {403, "processor_not_enabled", false},
		"PRODUCT_NOT_READY":               {502, "provider_unavailable", true},
		"INSTITUTION_DOWN":                {502, "provider_unavailable", true},
		"INSTITUTION_NOT_RESPONDING":      {502, "provider_unavailable", true},
		"INSTITUTION_NOT_AVAILABLE":       {502, "provider_unavailable", true},
		"RATE_LIMIT_EXCEEDED":             {502, "provider_unavailable", true},
		"PLANNED_MAINTENANCE":             {502, "provider_unavailable", true},
		"INTERNAL_SERVER_ERROR":           {502, "provider_unavailable", true},
		"INVALID_API_KEYS":                {502, "provider_unavailable", false},
		providersim.FailHTML502:           {502, "provider_unavailable", true},
		providersim.FailTimeout:           {502, "provider_unavailable", true},
	}
	for _, failure := range providersim.Failures() {
		w, ok := want[failure]
		if !ok {
			t.Errorf("the simulator can answer %s, which this test does not expect", failure)
			continue
		}
		l.control("/sim/fail", `{"error_code":"`+failure+`","count":1}`)
		r := l.Post(linkPath, key, linkBody(user, tok))
		th.WantError(t, r, w.status, w.code)
		if got := r.Header.Get("Retry-After") != ""; got != w.retryAfter {
			t.Errorf("%s: Retry-After %q, want one: %v", failure, r.Header.Get("Retry-After"), w.retryAfter)
		}
		if n := l.Count("processor_tokens"); n != 0 {
			t.Fatalf("%s consumed the token", failure)
		}
	}
	if len(want) != len(providersim.Failures()) {
		t.Errorf("the test expects %d failures, the simulator has %d", len(want), len(providersim.Failures()))
	}
	if !strings.Contains(l.Logs.String(), `"level":"ERROR","msg":"the bank-linking provider refused the service's credentials`) {
		t.Errorf("INVALID_API_KEYS was not logged at error level for the operator")
	}
	th.WantOK(t, l.Post(linkPath, key, linkBody(user, tok)))
}
