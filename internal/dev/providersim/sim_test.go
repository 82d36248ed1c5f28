package providersim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/plaid/plaid-go/v43/plaid"

	"github.com/fundsource/fundsource/internal/dev/providersim"
)

const merchant, merchantSecret, service, serviceSecret = "acme", "acme-secret", "svc", "svc-secret"

type sim struct {
	t   *testing.T
	url string
}

func newSim(t *testing.T, sandboxNumbers bool) *sim {
	srv := httptest.NewServer(providersim.New(providersim.Config{
		Clients:           map[string]string{merchant: merchantSecret, service: serviceSecret},
		ProcessorClientID: service, SandboxNumbers: sandboxNumbers,
	}).Handler())
	t.Cleanup(srv.Close)
	return &sim{t: t, url: srv.URL}
}

// call posts body as client (with its secret) and decodes the answer
// strictly into plaid-go's model of a success (into) or of an error:
// every member must be one the model knows. It returns the error's code,
// "" for a success.
func (s *sim) call(path, client string, body map[string]any, into any) string {
	s.t.Helper()
	secret := map[string]string{merchant: merchantSecret, service: serviceSecret}[client]
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("PLAID-CLIENT-ID", client)
	req.Header.Set("PLAID-SECRET", secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		var pe plaid.PlaidError
		strict(s.t, path+" error", data, &pe)
		if pe.Status.Get() == nil || int(*pe.Status.Get()) != res.StatusCode {
			s.t.Errorf("%s: status member %v, HTTP %d", path, pe.Status.Get(), res.StatusCode)
		}
		return string(pe.ErrorType) + "/" + pe.ErrorCode
	}
	strict(s.t, path, data, into)
	return ""
}

// strict decodes data into model and fails on any member the model does
// not know (plaid-go keeps those in AdditionalProperties, at any depth).
func strict(t *testing.T, what string, data []byte, model any) {
	t.Helper()
	if err := json.Unmarshal(data, model); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	if extra := unknown(reflect.ValueOf(model), ""); len(extra) > 0 {
		t.Errorf("%s: members plaid-go's model does not know: %v\n%s", what, extra, data)
	}
}

func unknown(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return unknown(v.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "AdditionalProperties" && v.Field(i).Kind() == reflect.Map {
				for _, k := range v.Field(i).MapKeys() {
					out = append(out, path+"."+k.String())
				}
				continue
			}
			out = append(out, unknown(v.Field(i), path+"."+f.Name)...)
		}
		return out
	case reflect.Slice, reflect.Array:
		var out []string
		for i := range v.Len() {
			out = append(out, unknown(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Map:
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, unknown(v.MapIndex(k), path+"."+fmt.Sprint(k))...)
		}
		return out
	}
	return nil
}

// link runs the merchant's steps and returns the access token and the
// accounts, each answer decoded strictly.
func (s *sim) link(institution string) (string, []plaid.AccountBase) {
	s.t.Helper()
	var lt plaid.LinkTokenCreateResponse
	if code := s.call("/link/token/create", merchant, map[string]any{"client_name": "Acme", "language": "en",
		"country_codes": []string{"US"}, "user": map[string]any{"client_user_id": "u1"}, "products": []string{"auth"}}, &lt); code != "" {
		s.t.Fatalf("link token: %s", code)
	}
	var pt plaid.SandboxPublicTokenCreateResponse
	if code := s.call("/sandbox/public_token/create", merchant, map[string]any{"institution_id": institution,
		"initial_products": []string{"auth"}}, &pt); code != "" {
		s.t.Fatalf("public token: %s", code)
	}
	var ex plaid.ItemPublicTokenExchangeResponse
	if code := s.call("/item/public_token/exchange", merchant, map[string]any{"public_token": pt.PublicToken}, &ex); code != "" {
		s.t.Fatalf("exchange: %s", code)
	}
	var accts plaid.AccountsGetResponse
	if code := s.call("/accounts/get", merchant, map[string]any{"access_token": ex.AccessToken}, &accts); code != "" {
		s.t.Fatalf("accounts: %s", code)
	}
	return ex.AccessToken, accts.Accounts
}

func byName(accts []plaid.AccountBase, name string) plaid.AccountBase {
	i := slices.IndexFunc(accts, func(a plaid.AccountBase) bool { return a.Name == name })
	return accts[i]
}

// TestEveryAnswerDecodesStrictly runs every endpoint, successes and
// errors, and decodes each answer into plaid-go's own model with no
// unknown member: the simulator cannot drift from the client's idea of
// Plaid.
func TestEveryAnswerDecodesStrictly(t *testing.T) {
	s := newSim(t, false)
	access, accts := s.link("ins_109508")
	checking := byName(accts, "Plaid Checking")

	var tok plaid.ProcessorTokenCreateResponse
	if code := s.call("/processor/token/create", merchant, map[string]any{"access_token": access,
		"account_id": checking.AccountId, "processor": "service"}, &tok); code != "" {
		t.Fatalf("processor token: %s", code)
	}
	var auth plaid.ProcessorAuthGetResponse
	if code := s.call("/processor/auth/get", service, map[string]any{"processor_token": tok.ProcessorToken}, &auth); code != "" {
		t.Fatalf("auth: %s", code)
	}
	ach := auth.Numbers.GetAch()
	if ach.Routing != "011401533" || ach.WireRouting.Get() == nil || *ach.WireRouting.Get() == ach.Routing || len(ach.Account) < 4 {
		t.Errorf("ach numbers: %+v (wire routing %v)", ach, ach.WireRouting.Get())
	}
	for _, failure := range providersim.Failures() {
		if failure == providersim.FailHTML502 || failure == providersim.FailTimeout {
			continue
		}
		s.control("/sim/fail", `{"error_code":"`+failure+`","count":1}`)
		if code := s.call("/processor/auth/get", service, map[string]any{"processor_token": tok.ProcessorToken}, nil); !strings.HasSuffix(code, "/"+failure) {
			t.Errorf("/sim/fail %s: answered %q", failure, code)
		}
	}
	var removed plaid.ItemRemoveResponse
	if code := s.call("/item/remove", merchant, map[string]any{"access_token": access, "reason_code": "OTHER"}, &removed); code != "" {
		t.Errorf("item remove: %s", code)
	}
}

// TestRequestsAreCheckedAsPlaidDoes: missing fields, wrong values, enums
// and options.account_ids.
func TestRequestsAreCheckedAsPlaidDoes(t *testing.T) {
	s := newSim(t, false)
	access, accts := s.link("ins_109509")
	saving := byName(accts, "Plaid Saving")
	card := byName(accts, "Plaid Credit Card")
	for _, c := range []struct {
		path, client string
		body         map[string]any
		want         string
	}{
		{"/link/token/create", merchant, map[string]any{"client_name": "Acme"}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/link/token/create", merchant, map[string]any{"client_name": "Acme", "language": "en", "country_codes": []string{"XX"},
			"user": map[string]any{"client_user_id": "u"}}, "INVALID_REQUEST/INVALID_FIELD"},
		{"/link/token/create", merchant, map[string]any{"client_name": "Acme", "language": "en", "country_codes": []string{"US"},
			"user": map[string]any{"client_user_id": "u"}, "products": []string{"teleportation"}}, "INVALID_REQUEST/INVALID_FIELD"},
		{"/sandbox/public_token/create", merchant, map[string]any{"institution_id": "ins_109508"}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/sandbox/public_token/create", merchant, map[string]any{"institution_id": "ins_109508", "initial_products": []string{"nope"}}, "INVALID_REQUEST/INVALID_FIELD"},
		{"/item/public_token/exchange", merchant, map[string]any{}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/accounts/get", merchant, map[string]any{}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/accounts/get", merchant, map[string]any{"access_token": access, "options": map[string]any{"account_ids": []string{"nope"}}},
			"INVALID_INPUT/INVALID_ACCOUNT_ID"},
		{"/processor/token/create", merchant, map[string]any{"access_token": access, "account_id": saving.AccountId}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/processor/token/create", merchant, map[string]any{"access_token": access, "account_id": saving.AccountId, "processor": "dwolla"},
			"INVALID_REQUEST/INVALID_FIELD"},
		{"/processor/auth/get", service, map[string]any{}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/item/remove", merchant, map[string]any{"access_token": access, "reason_code": "BORED"}, "INVALID_REQUEST/INVALID_FIELD"},
		{"/item/remove", merchant, map[string]any{}, "INVALID_REQUEST/MISSING_FIELDS"},
		{"/accounts/get", "nobody", map[string]any{"access_token": access}, "INVALID_INPUT/INVALID_API_KEYS"},
	} {
		if got := s.call(c.path, c.client, c.body, nil); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.path, c.body, got, c.want)
		}
	}
	var only plaid.AccountsGetResponse
	if code := s.call("/accounts/get", merchant, map[string]any{"access_token": access,
		"options": map[string]any{"account_ids": []string{saving.AccountId}}}, &only); code != "" || len(only.Accounts) != 1 ||
		only.Accounts[0].AccountId != saving.AccountId {
		t.Errorf("options.account_ids: %s %+v", code, only.Accounts)
	}
	// A credit card has no ACH numbers: NO_AUTH_ACCOUNTS, as Plaid answers.
	var tok plaid.ProcessorTokenCreateResponse
	if code := s.call("/processor/token/create", merchant, map[string]any{"access_token": access, "account_id": card.AccountId,
		"processor": "service"}, &tok); code != "" {
		t.Fatal(code)
	}
	if got := s.call("/processor/auth/get", service, map[string]any{"processor_token": tok.ProcessorToken}, nil); got != "ITEM_ERROR/NO_AUTH_ACCOUNTS" {
		t.Errorf("credit card auth: %q", got)
	}
	// The integration turned off: Plaid's INVALID_PRODUCT.
	s.control("/sim/clients/integration", `{"client_id":"`+merchant+`","enabled":false}`)
	if got := s.call("/processor/token/create", merchant, map[string]any{"access_token": access, "account_id": saving.AccountId,
		"processor": "service"}, nil); got != "INVALID_INPUT/INVALID_PRODUCT" {
		t.Errorf("integration off: %q", got)
	}
}

// TestSandboxNumbers: with the switch, every Item has Plaid's fixed
// sandbox numbers, as Plaid's sandbox does; without it, every account has
// its own.
func TestSandboxNumbers(t *testing.T) {
	numbers := func(s *sim) string {
		access, accts := s.link("ins_109511")
		var tok plaid.ProcessorTokenCreateResponse
		s.call("/processor/token/create", merchant, map[string]any{"access_token": access,
			"account_id": byName(accts, "Plaid Checking").AccountId, "processor": "service"}, &tok)
		var auth plaid.ProcessorAuthGetResponse
		if code := s.call("/processor/auth/get", service, map[string]any{"processor_token": tok.ProcessorToken}, &auth); code != "" {
			t.Fatal(code)
		}
		ach := auth.Numbers.GetAch()
		return ach.Routing + "/" + ach.Account
	}
	fixed := newSim(t, true)
	if a, b := numbers(fixed), numbers(fixed); a != b || a != providersim.SandboxRouting+"/"+providersim.SandboxCheckingNumber {
		t.Errorf("sandbox numbers: %s and %s", a, b)
	}
	distinct := newSim(t, false)
	if a, b := numbers(distinct), numbers(distinct); a == b {
		t.Errorf("two Items share %s", a)
	}
}

func (s *sim) control(path, body string) {
	s.t.Helper()
	res, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
	if err != nil || res.StatusCode != http.StatusOK {
		s.t.Fatalf("%s: %v %v", path, err, res)
	}
	res.Body.Close()
}

// TestIdentityAnswersInPlaidsShapes: /processor/identity/get names the
// sandbox owner, and /processor/identity/match scores each documented
// band, both decoded strictly by plaid-go's models.
func TestIdentityAnswersInPlaidsShapes(t *testing.T) {
	s := newSim(t, false)
	access, accts := s.link("ins_109508")
	var tok plaid.ProcessorTokenCreateResponse
	if code := s.call("/processor/token/create", merchant, map[string]any{"access_token": access,
		"account_id": byName(accts, "Plaid Checking").AccountId, "processor": "service"}, &tok); code != "" {
		t.Fatalf("processor token: %s", code)
	}
	var id plaid.ProcessorIdentityGetResponse
	if code := s.call("/processor/identity/get", service, map[string]any{"processor_token": tok.ProcessorToken}, &id); code != "" {
		t.Fatalf("identity get: %s", code)
	}
	if o := id.Account.Owners; len(o) != 1 || o[0].Names[0] != providersim.OwnerName || o[0].Emails[0].Data != providersim.OwnerEmail {
		t.Errorf("owners = %+v", o)
	}
	for _, c := range []struct {
		name, email string
		nameScore   int32
		emailScore  int32
	}{
		{"Alberta Bobbeth Charleson", "accountholder0@example.com", 100, 100},
		{"alberta charleson", "AccountHolder0@Example.com", 90, 100},
		{"Alberta Smith", "alberta@example.com", 60, 0},
		{"Jordan Doe", "jordan@example.com", 20, 0},
	} {
		var m plaid.ProcessorIdentityMatchResponse
		if code := s.call("/processor/identity/match", service, map[string]any{"processor_token": tok.ProcessorToken,
			"user": map[string]any{"legal_name": c.name, "email_address": c.email}}, &m); code != "" {
			t.Fatalf("identity match: %s", code)
		}
		ln, em := m.Account.GetLegalName(), m.Account.GetEmailAddress()
		if n, e := ln.GetScore(), em.GetScore(); n != c.nameScore || e != c.emailScore {
			t.Errorf("%s <%s>: scores %d, %d; want %d, %d", c.name, c.email, n, e, c.nameScore, c.emailScore)
		}
	}
	if code := s.call("/processor/identity/match", service, map[string]any{"processor_token": "processor-sandbox-nope"}, nil); code != "INVALID_INPUT/INVALID_PROCESSOR_TOKEN" {
		t.Errorf("unknown token: %q", code)
	}
}
