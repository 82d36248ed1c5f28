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

func TestAuthenticationFailures(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, th.WithHosts("sandbox.api.test", "api.test"))
	m := h.Merchant("Acme")
	live := h.Production(m)
	rolledKey := m.Sandbox.SecretKey
	if _, err := h.Merchants.RollKey(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	unknown := "sk_test_" + strings.Repeat("A", 43)

	cases := []struct {
		name   string
		header string
		host   string
	}{
		{"no header", "", ""},
		{"wrong scheme", "Basic " + live.SecretKey, ""},
		{"bearer without key", "Bearer ", ""},
		{"malformed key", "Bearer sk_test_short", ""},
		{"not a key at all", "Bearer hello", ""},
		{"unknown key", "Bearer " + unknown, ""},
		{"public key as secret", "Bearer " + m.Sandbox.PublicKey, ""},
		{"rolled key", "Bearer " + rolledKey, "sandbox.api.test"},
		{"production key on sandbox host", "Bearer " + live.SecretKey, "sandbox.api.test"},
		// Other spellings of the sandbox host are the sandbox host.
		{"production key, sandbox host with a trailing dot", "Bearer " + live.SecretKey, "sandbox.api.test."},
		{"production key, sandbox host in capitals with its default port", "Bearer " + live.SecretKey, "SANDBOX.API.TEST:443"},
		{"production key, sandbox host with a dot and a port", "Bearer " + live.SecretKey, "Sandbox.Api.Test.:80"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Do(th.Req{Method: http.MethodGet, Path: "/v2/customers", Host: c.host,
				Header: map[string]string{"Authorization": c.header}})
			th.WantError(t, r, http.StatusUnauthorized, "unauthorized")
		})
	}

	// The production key works on its own host, and with the scheme in any case.
	r := h.Do(th.Req{Method: http.MethodGet, Path: "/v2/customers", Host: "api.test:443",
		Header: map[string]string{"Authorization": "bearer " + live.SecretKey}})
	th.WantOK(t, r)

	// A sandbox key on the production host is refused too.
	h2 := webtest.NewHarness(t, th.WithHosts("sandbox.api.test", "api.test"))
	m2 := h2.Merchant("Beta")
	for _, host := range []string{"api.test", "api.test.", "API.test.:443"} {
		th.WantError(t, h2.Do(th.Req{Method: http.MethodGet, Path: "/v2/customers", Host: host, Key: m2.Sandbox.SecretKey}),
			http.StatusUnauthorized, "unauthorized")
	}
	th.WantOK(t, h2.Do(th.Req{Method: http.MethodGet, Path: "/v2/customers", Host: "sandbox.api.test", Key: m2.Sandbox.SecretKey}))
}

func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	h.Post("/v2/customers", m.Sandbox.SecretKey, webtest.Ada)
	h.Get("/v2/customers", "sk_test_"+strings.Repeat("B", 43))
	logs := h.Logs.String()
	if !strings.Contains(logs, `"route":"/v2/customers"`) {
		t.Fatalf("expected request log lines, got %q", logs)
	}
	for _, secret := range []string{m.Sandbox.SecretKey, strings.Repeat("B", 43), "ada@example.com"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}
