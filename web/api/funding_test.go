package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestCreationPathsAndStatuses(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)

	// On demand without third-party verification: Unverified (credit only).
	r := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key,
		`{"user_id":"`+user+`","routing_number":"021000021","account_number":"000123456789","nickname":"  Payroll  "}`))
	want := map[string]any{"status": "Unverified", "bank_name": "JPMorgan Chase Bank", "last_four": "6789",
		"account_type": "checking", "nickname": "Payroll", "user_id": user, "removed": false, "verification": nil}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("on-demand %s = %v, want %v", k, r[k], v)
		}
	}
	if id, _ := r["funding_source_id"].(string); !strings.HasPrefix(id, "fs_") {
		t.Errorf("funding_source_id = %v", r["funding_source_id"])
	}

	// Micro-deposit path: always Unverified; bank_name from the request only
	// when the directory does not know the routing number.
	r = th.WantOK(t, h.Post("/v2/funding-source", key,
		`{"user_id":"`+user+`","routing_number":"011000015","account_number":"5555","account_type":"savings","bank_name":"First Local Bank"}`))
	if r["status"] != "Unverified" || r["bank_name"] != "First Local Bank" || r["account_type"] != "savings" || r["last_four"] != "5555" {
		t.Errorf("micro-deposit source = %s", th.MustJSON(r))
	}
	r = th.WantOK(t, h.Post("/v2/funding-source", key,
		`{"user_id":"`+user+`","routing_number":"026009593","account_number":"7777777","bank_name":"Wrong Name"}`))
	if r["bank_name"] != "Bank of America" {
		t.Errorf("bank_name = %v, want the directory's name", r["bank_name"])
	}

	// Third-party verification enabled: Verified right away, with events.
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	r = th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "110000000", "99990000")))
	if r["status"] != "Verified" || r["bank_name"] != "fundsource Sandbox Bank" {
		t.Errorf("third-party source = %s", th.MustJSON(r))
	}
	verified := h.Events("funding_source.verified")
	if len(verified) != 1 || verified[0]["funding_source_id"] != r["funding_source_id"] || verified[0]["status"] != "Verified" {
		t.Errorf("verified events = %v", verified)
	}
	if created := h.Events("funding_source.created"); len(created) != 4 {
		t.Errorf("%d funding_source.created events, want 4", len(created))
	}

	// A production key needs the on-demand permission from an operator.
	live := h.Production(m).SecretKey
	liveUser := h.Customer(live)
	th.WantError(t, h.Post("/v2/on-demand/funding-source", live, th.SourceBody(liveUser, "021000021", "123456")),
		http.StatusForbidden, "permission_denied")
	if err := h.Merchants.GrantOnDemand(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if r := th.WantOK(t, h.Post("/v2/on-demand/funding-source", live, th.SourceBody(liveUser, "021000021", "123456"))); r["status"] != "Unverified" {
		t.Errorf("production on-demand status = %v (third-party is enabled only in sandbox)", r["status"])
	}
}

func TestFundingSourceValidation(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	body := func(fields string) string { return `{"user_id":"` + user + `",` + fields + `}` }
	cases := []struct {
		name, body  string
		status      int
		code, param string
		messageHint string
	}{
		{"missing user_id", `{"routing_number":"021000021","account_number":"1234"}`, 400, "invalid_request", "user_id", ""},
		{"unknown user_id", th.SourceBody("cus_unknown", "021000021", "1234"), 404, "customer_not_found", "user_id", ""},
		{"missing routing", body(`"account_number":"1234"`), 400, "invalid_request", "routing_number", ""},
		{"short routing", body(`"routing_number":"02100002","account_number":"1234"`), 400, "invalid_routing_number", "routing_number", "9 digits"},
		{"bad check digit", body(`"routing_number":"021000022","account_number":"1234"`), 400, "invalid_routing_number", "routing_number", "check digit"},
		// Nine zeros pass the check digit (0 is a multiple of 10) but name no bank.
		{"all zeros routing", body(`"routing_number":"000000000","account_number":"1234"`), 400, "invalid_routing_number", "routing_number", "names no bank"},
		{"routing as number", body(`"routing_number":21000021,"account_number":"1234"`), 400, "invalid_request", "routing_number", "string"},
		{"missing account", body(`"routing_number":"021000021"`), 400, "invalid_request", "account_number", ""},
		{"account too short", body(`"routing_number":"021000021","account_number":"123"`), 400, "invalid_account_number", "account_number", ""},
		{"account as number", body(`"routing_number":"021000021","account_number":12345678`), 400, "invalid_request", "account_number", "string"},
		{"account type", body(`"routing_number":"021000021","account_number":"1234","account_type":"Checking"`), 400, "invalid_account_type", "account_type", ""},
		{"long nickname", body(`"routing_number":"021000021","account_number":"1234","nickname":"` + strings.Repeat("n", 51) + `"`), 400, "invalid_request", "nickname", ""},
		{"long bank_name", body(`"routing_number":"011000015","account_number":"1234","bank_name":"` + strings.Repeat("b", 101) + `"`), 400, "invalid_request", "bank_name", ""},
		{"unknown field", body(`"routing_number":"021000021","account_number":"1234","iban":"x"`), 400, "invalid_request", "iban", ""},
	}
	for _, path := range []string{"/v2/funding-source", "/v2/on-demand/funding-source"} {
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				r := h.Post(path, key, c.body)
				th.WantError(t, r, c.status, c.code)
				if p := r.ErrParam(t); p != c.param {
					t.Errorf("param = %q, want %q", p, c.param)
				}
				if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, c.messageHint) {
					t.Errorf("message %q lacks %q", msg, c.messageHint)
				}
			})
		}
	}
	if n, m := h.Count("funding_sources"), h.Count("account_numbers"); n != 0 || m != 0 {
		t.Errorf("refused requests stored %d sources and %d account claims", n, m)
	}
}

func TestLeadingZerosAreSignificant(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	a := h.Source(key, user, "00012345")
	b := h.Source(key, user, "12345")
	if a == b {
		t.Fatal("00012345 and 12345 became one source")
	}
	for _, id := range []string{a, b} {
		if r := th.WantOK(t, h.Get("/v2/funding-source/"+id, key)); r["last_four"] != "2345" {
			t.Errorf("last_four = %v", r["last_four"])
		}
	}
	// Each is a duplicate of itself only.
	r := h.Post("/v2/funding-source", key, th.SourceBody(user, "021000021", "00012345"))
	th.WantError(t, r, http.StatusConflict, "duplicate_funding_source")
	if got := r.JSON(t)["error"].(map[string]any)["funding_source_id"]; got != a {
		t.Errorf("duplicate names %v, want %s", got, a)
	}
}

func TestAccountNumberUniqueness(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	ka, kb := a.Sandbox.SecretKey, b.Sandbox.SecretKey
	ua1, ua2, ub := h.Customer(ka), h.Customer(ka), h.Customer(kb)
	first := h.Source(ka, ua1, "44445555")

	for name, c := range map[string]struct{ key, user string }{
		"other merchant":                {kb, ub},
		"same merchant, other customer": {ka, ua2},
	} {
		for _, path := range []string{"/v2/funding-source", "/v2/on-demand/funding-source"} {
			r := h.Post(path, c.key, th.SourceBody(c.user, "121000248", "44445555"))
			th.WantError(t, r, http.StatusConflict, "account_in_use")
			if msg := r.JSON(t)["error"].(map[string]any)["message"]; msg != "This bank account is associated with another user" {
				t.Errorf("%s %s: message = %q", name, path, msg)
			}
		}
	}
	// The account check agrees, for every merchant of the environment.
	for _, key := range []string{ka, kb} {
		if r := th.WantOK(t, h.Post("/v2/accounts", key, `{"account_number":"44445555"}`)); r["available"] != false {
			t.Errorf("available = %v, want false", r["available"])
		}
	}
	if r := th.WantOK(t, h.Post("/v2/accounts", kb, `{"account_number":"044445555"}`)); r["available"] != true {
		t.Errorf("044445555 available = %v, want true", r["available"])
	}
	th.WantError(t, h.Post("/v2/accounts", kb, `{"account_number":"12"}`), 400, "invalid_account_number")
	th.WantError(t, h.Post("/v2/accounts", kb, `{}`), 400, "invalid_request")

	// Production is a separate namespace.
	live := h.Production(b).SecretKey
	if r := th.WantOK(t, h.Post("/v2/accounts", live, `{"account_number":"44445555"}`)); r["available"] != true {
		t.Errorf("production availability = %v, want true", r["available"])
	}
	th.WantOK(t, h.Post("/v2/funding-source", live, th.SourceBody(h.Customer(live), "021000021", "44445555")))

	// Removing the source frees the number for another customer.
	removed := th.WantOK(t, h.Post("/v2/accounts/delete", ka, `{"funding_source_id":"`+first+`"}`))
	if removed["removed"] != true || removed["funding_source_id"] != first {
		t.Errorf("delete = %s", th.MustJSON(removed))
	}
	if ev := h.Events("funding_source.removed"); len(ev) != 1 || ev[0]["funding_source_id"] != first {
		t.Errorf("removed events = %v", ev)
	}
	th.WantOK(t, h.Post("/v2/funding-source", kb, th.SourceBody(ub, "121000248", "44445555")))
	// The removed source stays readable; writes treat it as gone.
	if r := th.WantOK(t, h.Get("/v2/funding-source/"+first, ka)); r["removed"] != true {
		t.Errorf("removed source reads removed = %v", r["removed"])
	}
	// Removing it again answers 200 with it (a retried delete is no failure).
	if r := th.WantOK(t, h.Post("/v2/accounts/delete", ka, `{"funding_source_id":"`+first+`"}`)); r["removed"] != true {
		t.Errorf("repeated delete: %s", th.MustJSON(r))
	}
	th.WantError(t, h.Post("/v2/funding-source/initiate/verification", ka, `{"funding_source_id":"`+first+`"}`), 404, "funding_source_not_found")
	list := th.WantOK(t, h.Get("/v2/customers/"+ua1+"/funding-sources", ka))["data"].([]any)
	all := th.WantOK(t, h.Get("/v2/customers/"+ua1+"/funding-sources?removed=true", ka))["data"].([]any)
	if len(list) != 0 || len(all) != 1 {
		t.Errorf("list without removed = %d, with = %d; want 0, 1", len(list), len(all))
	}
}

func TestRemoveByUserAndAccountNumber(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	ka := a.Sandbox.SecretKey
	u1, u2 := h.Customer(ka), h.Customer(ka)
	id := h.Source(ka, u1, "31415926")

	for _, body := range []string{
		`{"user_id":"` + u2 + `","account_number":"31415926"}`, // another customer's number
		`{"user_id":"` + u1 + `","account_number":"27182818"}`, // a number nobody holds
	} {
		th.WantError(t, h.Post("/v2/accounts/delete", ka, body), 404, "funding_source_not_found")
	}
	th.WantError(t, h.Post("/v2/accounts/delete", b.Sandbox.SecretKey, `{"user_id":"`+u1+`","account_number":"31415926"}`),
		404, "funding_source_not_found")
	for _, bad := range []string{`{}`, `{"user_id":"` + u1 + `"}`, `{"funding_source_id":"` + id + `","user_id":"` + u1 + `"}`} {
		th.WantError(t, h.Post("/v2/accounts/delete", ka, bad), 400, "invalid_request")
	}
	r := th.WantOK(t, h.Post("/v2/accounts/delete", ka, `{"user_id":"`+u1+`","account_number":"31415926"}`))
	if r["funding_source_id"] != id || r["removed"] != true {
		t.Errorf("delete by account = %s", th.MustJSON(r))
	}
	// The number is no longer linked: the 404 names the field that was sent.
	for _, path := range []string{"/v2/accounts/delete", "/accounts/delete"} {
		again := h.Post(path, ka, `{"user_id":"`+u1+`","account_number":"31415926"}`)
		th.WantError(t, again, 404, "funding_source_not_found")
		if p := again.ErrParam(t); p != "account_number" || !strings.Contains(string(again.Body), "account number") {
			t.Errorf("%s of a number no longer linked: %s", path, again.Body)
		}
	}
}

func TestThirdPartyPathUpgradesTheCustomersUnverifiedSource(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	id := h.Source(key, user, "8675309")
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	r := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "8675309")))
	if r["funding_source_id"] != id || r["status"] != "Verified" {
		t.Fatalf("upgrade = %s, want %s Verified", th.MustJSON(r), id)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["status"]; got != "Verified" {
		t.Errorf("stored status = %v", got)
	}
	if ev := h.Events("funding_source.verified"); len(ev) != 1 || ev[0]["funding_source_id"] != id {
		t.Errorf("verified events = %v", ev)
	}
	// Now Verified: a further attempt is a plain duplicate.
	th.WantError(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "8675309")), 409, "duplicate_funding_source")
}

func TestConcurrentCreationOfOneAccountNumber(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	type try struct{ key, user string }
	var tries []try
	for i := range 20 {
		key := a.Sandbox.SecretKey
		if i%2 == 1 {
			key = b.Sandbox.SecretKey
		}
		tries = append(tries, try{key, h.Customer(key)})
	}
	results := th.Concurrently(len(tries), func(i int) *th.Response {
		return h.Post("/v2/funding-source", tries[i].key, th.SourceBody(tries[i].user, "021000021", "1000200030004"))
	})
	okCount := 0
	for _, r := range results {
		switch {
		case r.Code == 200:
			okCount++
		case r.Code == 409 && r.ErrCode(t) == "account_in_use":
		default:
			t.Errorf("unexpected %d %s", r.Code, r.Body)
		}
	}
	if okCount != 1 || h.Count("funding_sources") != 1 || h.Count("account_numbers") != 1 {
		t.Fatalf("%d succeeded, %d sources, %d claims; want exactly one of each", okCount, h.Count("funding_sources"), h.Count("account_numbers"))
	}
}

func TestFundingIsolation(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	ka := a.Sandbox.SecretKey
	live := h.Production(a).SecretKey
	user := h.Customer(ka)
	id := h.Source(ka, user, "24681357")
	th.WantOK(t, h.Post("/v2/funding-source/initiate/verification", ka, `{"funding_source_id":"`+id+`"}`))
	for name, key := range map[string]string{"other merchant": b.Sandbox.SecretKey, "production key": live} {
		t.Run(name, func(t *testing.T) {
			th.WantError(t, h.Get("/v2/funding-source/"+id, key), 404, "funding_source_not_found")
			th.WantError(t, h.Get("/v2/customers/"+user+"/funding-sources", key), 404, "customer_not_found")
			th.WantError(t, h.Post("/v2/funding-source/verify", key, `{"funding_source_id":"`+id+`","amounts":[0.1,0.2]}`), 404, "funding_source_not_found")
			th.WantError(t, h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+id+`"}`), 404, "funding_source_not_found")
			th.WantError(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+id+`"}`), 404, "funding_source_not_found")
			th.WantError(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "021000021", "11112222")), 404, "customer_not_found")
		})
	}
	th.WantError(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", b.Sandbox.SecretKey), 404, "funding_source_not_found")
	th.WantError(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", live), 403, "permission_denied")
	th.WantOK(t, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", ka))
}

// The account numbers used must not appear anywhere in the database or logs.
func TestNoPlaintextAccountNumbersAtRest(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	numbers := []string{"90817263544536", "000000071829364", "5647382910"}
	for _, n := range numbers {
		id := h.Source(key, user, n)
		th.WantOK(t, h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+id+`"}`))
		h.Post("/v2/funding-source/verify", key, `{"funding_source_id":"`+id+`","amounts":[0.01,0.02]}`)
		h.Post("/v2/accounts", key, `{"account_number":"`+n+`"}`)
	}
	h.Do(th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: th.SourceBody(user, "021000021", numbers[0]),
		Header: map[string]string{"Idempotency-Key": "scan-1"}})
	th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"user_id":"`+user+`","account_number":"`+numbers[2]+`"}`))

	dump := h.DumpDatabase()
	for _, n := range numbers {
		if strings.Contains(dump, n) {
			t.Errorf("account number %s found in the database", n)
		}
		if strings.Contains(h.Logs.String(), n) {
			t.Errorf("account number %s found in the logs", n)
		}
	}
}
