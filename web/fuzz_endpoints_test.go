package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// fuzzPosts are the JSON endpoints the fuzzer sends bodies to.
var fuzzPosts = []string{
	"/v2/customers", "/v2/funding-source", "/v2/on-demand/funding-source", "/v2/funding-source/initiate/verification",
	"/v2/funding-source/verify", "/v2/funding-source/processor/linking", "/v2/accounts", "/v2/accounts/delete",
	"/v2/webhooks", "/v2/webhooks/test", "/v2/webhooks/secret/roll", "/v2/payments", "/v2/subscriptions",
}

// FuzzEndpoints: any body to any JSON endpoint answers below 500, and every
// error is the contract's envelope.
func FuzzEndpoints(f *testing.F) {
	h := webtest.NewHarness(f)
	key := h.Merchant("Fuzz").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	seeds := []string{
		`{"first_name":"A","last_name":"B","email":"a@example.com"}`,
		th.SourceBody(user, "021000021", "000111222333"),
		th.SourceBody(user, "110000000", "44445555"),
		`{"funding_source_id":"` + src + `"}`,
		th.VerifyBody(src, `[0.1,"0.2"]`),
		`{"user_id":"` + user + `","processor_token":"processor-sandbox-x"}`,
		`{"account_number":"123456789"}`,
		`{"funding_source_id":"fs_x"}`,
		`{"url":"https://example.com/hook"}`,
		``,
		`{}`,
		th.PaymentBody(src, `"1.00"`, "credit"),
		webtest.SubscriptionBody(src, "1.00", "weekly", "2026-11-09"),
	}
	// fields are the top-level keys each endpoint's seed sends.
	fields := map[string][]string{}
	for i, body := range seeds {
		f.Add(uint8(i), []byte(body))
		var top map[string]json.RawMessage
		_ = json.Unmarshal([]byte(body), &top)
		for k := range top {
			fields[fuzzPosts[i]] = append(fields[fuzzPosts[i]], k)
		}
	}
	f.Add(uint8(11), []byte(`{"funding_source_id":"`+src+`","amount":1e400,"direction":"credit"}`))
	f.Add(uint8(12), []byte(`{"funding_source_id":"`+src+`","amount":"9.99","interval":"weekly","start_date":"0000-00-00"}`))
	// Keys twice and keys in another case, which encoding/json alone would
	// take (the last one; the field whatever its case).
	f.Add(uint8(0), []byte(`{"first_name":"A","last_name":"L","email":"a@example.com","first_name":"B"}`))
	f.Add(uint8(0), []byte(`{"First_Name":"A","last_name":"L","email":"a@example.com"}`))
	f.Add(uint8(4), []byte(`{"funding_source_id":"`+src+`","amounts":[0.1,0.2],"Amounts":[0.3,0.4]}`))
	f.Add(uint8(8), []byte(`{"URL":"https://example.com/hook"}`))
	f.Add(uint8(9), []byte(`{"x":1,"x":1}`))
	f.Add(uint8(11), []byte(`{"funding_source_id":"`+src+`","amount":"1.00","amount":"900.00","direction":"credit"}`))
	f.Add(uint8(11), []byte(`{"funding_source_id":"`+src+`","amount":{"v":1,"v":2},"direction":"credit"}`))
	f.Add(uint8(12), []byte(`{"funding_source_id":"`+src+`","AMOUNT":"1.00","interval":"weekly","start_date":"2026-11-09"}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := fuzzPosts[int(which)%len(fuzzPosts)]
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusBadGateway { // 502: the provider simulator is not running here
			t.Fatalf("POST %s %q: %d\n%s", path, body, w.Code, w.Body)
		}
		if len(body) <= 64<<10 && keyDifferential(body, fields[path]) {
			var env struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(w.Body.Bytes(), &env)
			if w.Code != http.StatusBadRequest || env.Error.Code != "invalid_request" {
				t.Fatalf("POST %s %q (a key twice or in another case): %d %s, want 400 invalid_request", path, body, w.Code, w.Body)
			}
		}
		if w.Code >= 400 {
			var env struct {
				Success *bool `json:"success"`
				Error   struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Success == nil || *env.Success || env.Error.Code == "" {
				t.Fatalf("POST %s %q: %d without the error envelope: %s", path, body, w.Code, w.Body)
			}
		}
	})
}

// keyDifferential reports whether body, read token by token up to its end
// or first syntax error, has a key twice in one object at any depth, or a
// top-level key that equals one of fields only when case is ignored: what
// a reader taking keys literally would see differently from encoding/json.
func keyDifferential(body []byte, fields []string) bool {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	type frame struct {
		object, wantKey bool
		seen            map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k, _ := tok.(string)
			if top.seen[k] {
				return true
			}
			top.seen[k] = true
			if len(stack) == 1 {
				for _, f := range fields {
					if k != f && strings.EqualFold(k, f) {
						return true
					}
				}
			}
			top.wantKey = false
			continue
		}
		if top != nil && top.object {
			top.wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// FuzzHostedForm: any amounts posted to the hosted page answer a page
// below 500.
func FuzzHostedForm(f *testing.F) {
	h := webtest.NewHarness(f, func(c *config.Config) { c.HostedSubmitsPerIP, c.HostedSubmitsPerSource = 1e6, 1e6 })
	m := h.Merchant("Fuzz")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	if r := h.Initiate(key, src); r.Code != http.StatusOK {
		f.Fatalf("initiate: %d", r.Code)
	}
	if _, err := h.Merchants.AllowRedirectOrigin(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, "https://shop.example", audit.Operator("test")); err != nil {
		f.Fatal(err)
	}
	path := "/bank-account/" + m.Sandbox.PublicKey + "/" + user + "/" + src
	for _, s := range [][2]string{{"0.12", "0.34"}, {"12", "$0.34"}, {"", ""}, {"0,5", "1e2"}, {"\x00", "٠.١٢"}} {
		f.Add(s[0], s[1], "https://shop.example/done")
	}
	f.Fuzz(func(t *testing.T, a1, a2, success string) {
		form := url.Values{"amount1": {a1}, "amount2": {a2}}.Encode()
		r := httptest.NewRequest(http.MethodPost, path+"?successUrl="+url.QueryEscape(success), strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("hosted form %q %q %q: %d\n%s", a1, a2, success, w.Code, w.Body)
		}
		if loc := w.Header().Get("Location"); loc != "" && !strings.HasPrefix(loc, "http://") && !strings.HasPrefix(loc, "https://") {
			t.Fatalf("redirected to %q", loc)
		}
	})
}

// fuzzGets are addresses with a path id or query value, {} marking where
// the fuzzed text goes (escaped, so it can be any byte).
var fuzzGets = []string{
	"/v2/customers/{}", "/v2/customers/{}/funding-sources", "/v2/funding-source/{}", "/v2/events/{}",
	"/v2/payments/{}", "/v2/subscriptions/{}", "/v2/sandbox/funding-source/{}/micro-deposits",
	"/v2/customers?starting_after={}", "/v2/customers?limit={}", "/v2/events?type={}", "/v2/payments?funding_source_id={}",
	"/v2/customers/USER/funding-sources?removed={}", "/v2/events?starting_after={}", "/v2/subscriptions?funding_source_id={}",
	"/bank-account/{}/USER/SOURCE", "/bank-account/PK/{}/SOURCE", "/bank-account/PK/USER/{}",
	"/bank-account/PK/USER/SOURCE?successUrl={}", "/bank-account/PK/USER/SOURCE?cancelUrl={}",
	"/dashboard/sign-in?next={}", "/static/{}",
}

// FuzzPathsAndQueries: any text (NUL, invalid UTF-8, anything) as a path
// id or query value answers below 500, on the API and on the pages.
func FuzzPathsAndQueries(f *testing.F) {
	h := webtest.NewHarness(f)
	m := h.Merchant("Fuzz")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	for i, s := range []string{"cus_x", "\x00", "\xff\xfe", "%", "a/b", "..", "fs_\x00", "", "\u202e", strings.Repeat("x", 300)} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		tmpl := fuzzGets[int(which)%len(fuzzGets)]
		path := strings.NewReplacer("USER", user, "SOURCE", src, "PK", m.Sandbox.PublicKey).Replace(tmpl)
		escaped := url.PathEscape(text)
		if strings.Contains(tmpl, "={}") {
			escaped = url.QueryEscape(text)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawPath = ""
		u, err := url.Parse(strings.Replace(path, "{}", escaped, 1))
		if err != nil {
			return // not a URL at all: no server sees it
		}
		r.URL, r.RequestURI = u, u.RequestURI()
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.Engine.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("GET %s: %d\n%s", u.RequestURI(), w.Code, w.Body)
		}
	})
}
