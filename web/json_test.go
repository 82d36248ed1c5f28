package web_test

import (
	"net/http"
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestStrictJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	cases := []struct {
		name        string
		body        string
		contentType string // "-" for none
		status      int
		code        string
		param       string
	}{
		{"no content type", ada, "-", 415, "unsupported_media_type", ""},
		{"text/plain", ada, "text/plain", 415, "unsupported_media_type", ""},
		{"form", "first_name=Ada", "application/x-www-form-urlencoded", 415, "unsupported_media_type", ""},
		{"too large", `{"first_name":"` + strings.Repeat("a", 70<<10) + `"}`, "", 413, "request_too_large", ""},
		{"malformed", `{"first_name":`, "", 400, "invalid_request", ""},
		{"not json", `hello`, "", 400, "invalid_request", ""},
		{"trailing object", ada + ` {}`, "", 400, "invalid_request", ""},
		{"trailing garbage", ada + `x`, "", 400, "invalid_request", ""},
		{"unknown field", `{"first_name":"A","last_name":"L","email":"a@example.com","age":3}`, "", 400, "invalid_request", "age"},
		{"number for string", `{"first_name":12,"last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "first_name"},
		{"object for string", `{"first_name":{},"last_name":"L","email":"a@example.com"}`, "", 400, "invalid_request", "first_name"},
		{"array body", `[]`, "", 400, "invalid_request", ""},
		{"string body", `"ada"`, "", 400, "invalid_request", ""},
		{"empty body", ``, "", 400, "invalid_request", ""},
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
	th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: ada,
		Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}))
}
