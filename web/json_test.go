package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestStrictJSON(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	cases := []struct {
		name        string
		body        string
		contentType string // "-" for none
		status      int
		code        string
		param       string
	}{
		{"no content type", webtest.Ada, "-", 415, "unsupported_media_type", ""},
		{"text/plain", webtest.Ada, "text/plain", 415, "unsupported_media_type", ""},
		{"form", "first_name=Ada", "application/x-www-form-urlencoded", 415, "unsupported_media_type", ""},
		{"too large", `{"first_name":"` + strings.Repeat("a", 70<<10) + `"}`, "", 413, "request_too_large", ""},
		{"malformed", `{"first_name":`, "", 400, "invalid_request", ""},
		{"not json", `hello`, "", 400, "invalid_request", ""},
		{"trailing object", webtest.Ada + ` {}`, "", 400, "invalid_request", ""},
		{"trailing garbage", webtest.Ada + `x`, "", 400, "invalid_request", ""},
		{"unknown field", `{"first_name":"A","last_name":"L","email":"a@example.com","age":3}`, "", 400, "invalid_request", "age"},
		{"number for string", `{"first_name":12,"last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "first_name"},
		{"object for string", `{"first_name":{},"last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "first_name"},
		{"array body", `[]`, "", 400, "invalid_request", ""},
		{"string body", `"ada"`, "", 400, "invalid_request", ""},
		{"empty body", ``, "", 400, "invalid_request", ""},
		{"duplicate key", `{"first_name":"A","first_name":"B","last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "first_name"},
		{"duplicate key, same value", `{"first_name":"A","last_name":"L","email":"a@example.com","email":"a@example.com"}`, "", 400, "invalid_request", "email"},
		{"duplicate key, escaped", `{"first_name":"A","last_name":"L","email":"a@example.com","em\u0061il":"b@example.com"}`, "", 400, "invalid_request", "email"},
		{"key in other case", `{"First_Name":"A","last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "First_Name"},
		{"key in upper case", `{"first_name":"A","last_name":"L","EMAIL":"a@example.com"}`, "", 400, "invalid_request", "EMAIL"},
		{"key folded by Unicode", `{"first_name":"A","laſt_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "laſt_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.contentType != "" && c.contentType != "-" {
				hdr["Content-Type"] = c.contentType
			}
			r := h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: c.body,
				Header: hdr, NoContentType: c.contentType == "-"})
			th.WantError(t, r, c.status, c.code)
			if got := r.ErrParam(t); got != c.param {
				t.Errorf("param = %q, want %q", got, c.param)
			}
		})
	}
	if n := h.Count("customers"); n != 0 {
		t.Fatalf("%d customers stored after refused requests, want 0", n)
	}
	// The message for a number sent as a string tells the caller what to do.
	r := h.Post("/v2/customers", key, `{"first_name":12,"last_name":"L","email":"a@example.com"}`)
	if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "string") {
		t.Errorf("message %q does not say to send a string", msg)
	}
	// Parameters on the media type are fine.
	th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: webtest.Ada,
		Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}))
}

// jsonEndpoint is a JSON endpoint and a body it takes, as ordered keys and
// raw values.
type jsonEndpoint struct {
	method, path string
	pairs        [][2]string
}

func objectOf(pairs [][2]string) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = fmt.Sprintf("%q:%s", p[0], p[1])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestJSONKeysExactAndOnceOnEveryEndpoint: every endpoint that reads a
// JSON body refuses a key sent twice and a key that matches a field only
// when case is ignored, with 400 invalid_request naming the key as sent,
// and acts on neither.
func TestJSONKeysExactAndOnceOnEveryEndpoint(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	source := [][2]string{{"user_id", q(user)}, {"routing_number", q("021000021")}, {"account_number", q("000111222333")}}
	endpoints := []jsonEndpoint{
		{"POST", "/v2/customers", [][2]string{{"first_name", q("A")}, {"last_name", q("L")}, {"email", q("a@example.com")}}},
		{"POST", "/v2/customers/" + user, [][2]string{{"first_name", q("B")}}},
		{"POST", "/v2/funding-source", source},
		{"POST", "/v2/on-demand/funding-source", source},
		{"POST", "/v2/funding-source/" + src, [][2]string{{"nickname", q("Rent")}}},
		{"POST", "/v2/funding-source/processor/linking", [][2]string{{"user_id", q(user)}, {"processor_token", q("processor-sandbox-x")}}},
		{"POST", "/v2/funding-source/initiate/verification", [][2]string{{"funding_source_id", q(src)}}},
		{"POST", "/v2/funding-source/verify", [][2]string{{"funding_source_id", q(src)}, {"amounts", `[0.1,0.2]`}}},
		{"POST", "/v2/accounts", [][2]string{{"account_number", q("123456789")}}},
		{"POST", "/accounts", [][2]string{{"account_number", q("123456789")}}},
		{"POST", "/v2/accounts/delete", [][2]string{{"funding_source_id", q(src)}}},
		{"POST", "/accounts/delete", [][2]string{{"funding_source_id", q(src)}}},
		{"POST", "/v2/webhooks", [][2]string{{"url", q("https://example.com/hook")}}},
		{"POST", "/webhooks", [][2]string{{"url", q("https://example.com/hook")}}},
		{"POST", "/v2/payments", [][2]string{{"funding_source_id", q(src)}, {"amount", q("1.00")}, {"direction", q("credit")}}},
		{"POST", "/v2/subscriptions", [][2]string{{"funding_source_id", q(src)}, {"amount", q("1.00")}, {"interval", q("weekly")}, {"start_date", q("2026-11-09")}}},
		{"POST", "/v2/sandbox/funding-source/" + src + "/micro-deposits/return", [][2]string{{"code", q("R03")}}},
		{"POST", "/v2/sandbox/payments/pay_x/return", [][2]string{{"code", q("R03")}}},
	}
	// Endpoints that take no parameters read an empty object.
	for _, p := range []string{
		"/v2/webhooks/secret/roll", "/v2/webhooks/test", "/v2/webhooks/enable", "/v2/events/evt_x/redeliver",
		"/v2/payments/pay_x/cancel", "/v2/subscriptions/sub_x/cancel",
		"/v2/sandbox/funding-source/" + src + "/micro-deposits/expire", "/v2/sandbox/subscriptions/sub_x/advance",
	} {
		endpoints = append(endpoints, jsonEndpoint{"POST", p, nil})
	}

	send := func(e jsonEndpoint, body, param string) {
		t.Helper()
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			r := h.Do(th.Req{Method: e.method, Path: e.path, Key: key, Body: body})
			th.WantError(t, r, http.StatusBadRequest, "invalid_request")
			if got := r.ErrParam(t); got != param {
				t.Errorf("%s: param = %q, want %q", body, got, param)
			}
		})
	}
	for _, e := range endpoints {
		if e.pairs == nil {
			send(e, `{"x":1,"x":1}`, "x")
			continue
		}
		// The first key again at the end, and in the middle of a nested value.
		send(e, objectOf(append(e.pairs, e.pairs[0])), e.pairs[0][0])
		cased := append([][2]string{}, e.pairs...)
		k := e.pairs[len(e.pairs)-1][0]
		cased[len(cased)-1][0] = strings.ToUpper(k[:1]) + k[1:]
		send(e, objectOf(cased), cased[len(cased)-1][0])
	}
	// A duplicate inside a nested value is refused too, named by its path.
	send(jsonEndpoint{"POST", "/v2/payments", nil},
		objectOf([][2]string{{"funding_source_id", q(src)}, {"amount", `{"value":1,"value":2}`}, {"direction", q("credit")}}),
		"amount.value")
	send(jsonEndpoint{"POST", "/v2/funding-source/verify", nil},
		objectOf([][2]string{{"funding_source_id", q(src)}, {"amounts", `[{"a":1,"a":1},0.2]`}}), "amounts.a")

	for table, want := range map[string]int{"customers": 1, "funding_sources": 1, "payments": 0, "subscriptions": 0, "webhook_endpoints": 0} {
		if n := h.Count(table); n != want {
			t.Errorf("%d rows in %s after refused requests, want %d", n, table, want)
		}
	}
}
