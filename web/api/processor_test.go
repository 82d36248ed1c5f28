package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/plaid/plaid-go/v43/plaid"

	"github.com/fundsource/fundsource/internal/adapter/provider"
	"github.com/fundsource/fundsource/internal/dev/providersim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestProcessorTokenFiveStepFlow(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	it := l.Link("ins_109508", "checking")
	tok := l.Token(it)

	src := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
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
	l.Control("/sim/outage", `{"enabled":true}`)
	r := l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok))
	th.WantError(t, r, 400, "invalid_processor_token")
	if !strings.Contains(r.JSON(t)["error"].(map[string]any)["message"].(string), "already used") {
		t.Errorf("reuse message: %s", r.Body)
	}
	l.Control("/sim/outage", `{"enabled":false}`)

	// Another account of the same item (savings) links too; the credit card is refused clearly.
	sav := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, l.Token(l.Link("ins_109509", "savings")))))
	if sav["account_type"] != "savings" || sav["bank_name"] != "First Gingham Credit Union" {
		t.Errorf("savings = %s", th.MustJSON(sav))
	}
	card := l.Post(webtest.LinkPath, key, webtest.LinkBody(user, l.Token(l.Link("ins_109510", "credit card"))))
	th.WantError(t, card, 400, "invalid_account_type")
	if !strings.Contains(string(card.Body), "checking or savings") || card.ErrParam(t) != "processor_token" {
		t.Errorf("credit card refusal: %s", card.Body)
	}
}

func TestProcessorTokenUpgradesTheCustomersUnverifiedSource(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	it := l.Link("ins_109511", "checking")
	tok := l.Token(it)
	// Learn the account number the way the service does, then create it Unverified first.
	acct, err := provider.New(l.Sim.URL, webtest.ServiceClient, webtest.ServiceSecret, l.Logger).Account(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	unverified := th.WantOK(t, l.Post("/v2/funding-source", key, th.SourceBody(user, acct.RoutingNumber, acct.AccountNumber)))
	linked := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
	if linked["funding_source_id"] != unverified["funding_source_id"] || linked["status"] != "Verified" {
		t.Errorf("linking the customer's Unverified account = %s, want %s upgraded", th.MustJSON(linked), unverified["funding_source_id"])
	}
	// The upgraded source carries the link's ownership check from then on.
	wantOwnership(t, "the upgraded source", linked, "mismatch", 20, 0)
	wantOwnership(t, "the upgraded source on GET", th.WantOK(t, l.Get("/v2/funding-source/"+linked["funding_source_id"].(string), key)), "mismatch", 20, 0)
	// Another customer cannot link the same account.
	other := l.Customer(key)
	r := l.Post(webtest.LinkPath, key, webtest.LinkBody(other, l.Token(it)))
	th.WantError(t, r, 409, "account_in_use")
	if p := r.ErrParam(t); p != "processor_token" {
		t.Errorf("account_in_use names %q; the request's field is processor_token", p)
	}
}

func TestProcessorTokenErrors(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)

	t.Run("service spelling", func(t *testing.T) {
		it := l.Link("ins_109508", "checking")
		for _, p := range []string{"Service", " service", "service ", "SERVICE", "dwolla", ""} {
			tok, err := l.ProcessorToken(it, p)
			pe, perr := plaid.ToPlaidError(err)
			if err == nil || tok != "" || perr != nil || pe.ErrorType != "INVALID_REQUEST" {
				t.Errorf("processor %q: token %q, error %v", p, tok, err)
			}
		}
	})
	t.Run("unknown customer checked first", func(t *testing.T) {
		l.Control("/sim/outage", `{"enabled":true}`)
		defer l.Control("/sim/outage", `{"enabled":false}`)
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody("cus_unknown", "processor-sandbox-x")), 404, "customer_not_found")
	})
	t.Run("malformed", func(t *testing.T) {
		for _, tok := range []string{"not-a-token", "processor-sandbox-<script>", "access-sandbox-1234", strings.Repeat("processor-", 30)} {
			th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 400, "invalid_processor_token")
		}
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, "processor-sandbox-00000000-0000-4000-8000-000000000000")), 400, "invalid_processor_token")
		th.WantError(t, l.Post(webtest.LinkPath, key, `{"user_id":"`+user+`"}`), 400, "invalid_request")
		th.WantError(t, l.Post(webtest.LinkPath, key, `{"user_id":"`+user+`","processor_token":42}`), 400, "invalid_request")
	})
	t.Run("unauthorized", func(t *testing.T) {
		th.WantError(t, l.Post(webtest.LinkPath, "sk_test_"+strings.Repeat("Z", 43), webtest.LinkBody(user, "processor-sandbox-x")), 401, "unauthorized")
	})
	t.Run("revoked item", func(t *testing.T) {
		it := l.Link("ins_109508", "checking")
		tok := l.Token(it)
		if _, _, err := l.Client.PlaidApi.ItemRemove(context.Background()).ItemRemoveRequest(*plaid.NewItemRemoveRequest(it.AccessToken)).Execute(); err != nil {
			t.Fatal(err)
		}
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 400, "invalid_processor_token")
	})
	t.Run("login required", func(t *testing.T) {
		it := l.Link("ins_109509", "checking")
		tok := l.Token(it)
		l.Control("/sim/items/login-required", `{"access_token":"`+it.AccessToken+`"}`)
		r := l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok))
		th.WantError(t, r, 400, "invalid_processor_token")
		if !strings.Contains(string(r.Body), "re-authenticate") {
			t.Errorf("login-required message: %s", r.Body)
		}
	})
	t.Run("institution disabled", func(t *testing.T) {
		it := l.Link("ins_109512", "checking")
		tok := l.Token(it)
		l.Control("/sim/institutions/disable", `{"institution_id":"ins_109512"}`)
		r := l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok))
		th.WantError(t, r, 502, "provider_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("a bank that is not available now: no Retry-After")
		}
		// Plaid counts INSTITUTION_NOT_AVAILABLE among the temporary
		// errors: the token still works once the bank is back.
		l.Control("/sim/institutions/disable", `{"institution_id":"ins_109512","disabled":false}`)
		th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
	})
	t.Run("integration off", func(t *testing.T) {
		it := l.Link("ins_109510", "savings")
		tok := l.Token(it)
		l.Control("/sim/clients/integration", `{"client_id":"`+webtest.MerchantClient+`","enabled":false}`)
		if _, err := l.ProcessorToken(it, "service"); err == nil {
			t.Error("the provider issued a processor token with the integration off")
		}
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 403, "processor_not_enabled")
		l.Control("/sim/clients/integration", `{"client_id":"`+webtest.MerchantClient+`","enabled":true}`)
		th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
	})
	t.Run("provider down, token kept", func(t *testing.T) {
		it := l.Link("ins_109511", "savings")
		tok := l.Token(it)
		l.Control("/sim/outage", `{"enabled":true}`)
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 502, "provider_unavailable")
		l.Control("/sim/outage", `{"enabled":false}`)
		if got := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok))); got["status"] != "Verified" {
			t.Errorf("after the outage: %s", th.MustJSON(got))
		}
	})
}

func TestProviderUnreachableIs502(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	tok := l.Token(l.Link("ins_109508", "checking"))
	l.Sim.Close()
	th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 502, "provider_unavailable")
	if n := l.Count("processor_tokens"); n != 0 {
		t.Errorf("a token was consumed by a failed call (%d rows)", n)
	}
}

func TestProcessorTokensNeverStoredOrLoggedInClear(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	var tokens []string
	for _, ins := range []string{"ins_109508", "ins_109509"} {
		tok := l.Token(l.Link(ins, "checking"))
		tokens = append(tokens, tok)
		th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
		th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)), 400, "invalid_processor_token")
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
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	tok := l.Token(l.Link("ins_109508", "checking"))
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
		l.Control("/sim/fail", `{"error_code":"`+failure+`","count":1}`)
		r := l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok))
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
	th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
}

// TestAHungProviderHoldsNoTransaction: while the provider takes the
// connection and does not answer (for the client's second), a
// processor-token linking with an Idempotency-Key holds no database
// transaction open across the wait (the provider is asked
// before the claim on the key is taken); once the provider gives up, the
// refusal is the answer, the token stays usable, and the same key then
// links the account.
func TestAHungProviderHoldsNoTransaction(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	user := l.Customer(key)
	tok := l.Token(l.Link("ins_109508", "checking"))
	l.Control("/sim/fail", `{"error_code":"`+providersim.FailTimeout+`","count":1}`)

	post := func() *th.Response {
		return l.Do(th.Req{Method: "POST", Path: webtest.LinkPath, Key: key, Body: webtest.LinkBody(user, tok),
			Header: map[string]string{"Idempotency-Key": "link-once"}})
	}
	th.WantError(t, l.HoldsNoTransaction(t, "a linking while the provider hung", post), 502, "provider_unavailable")
	if n := l.Count("processor_tokens"); n != 0 {
		t.Fatalf("the provider's silence consumed the token (%d)", n)
	}
	src := th.WantOK(t, post())
	if src["status"] != "Verified" {
		t.Fatalf("linked with the same key after the failure = %s", th.MustJSON(src))
	}
	if again := post(); again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a third request with the key was not replayed: %s", again.Body)
	}
}
