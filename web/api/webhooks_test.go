package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestWebhookRegistration(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey

	th.WantError(t, h.Get("/v2/webhooks", key), 404, "webhook_not_found")
	first := h.RegisterWebhook(key, "https://merchant.example/hooks")
	secret := first["secret"].(string)
	if first["webhook_url"] != "https://merchant.example/hooks" || !strings.HasPrefix(secret, "whsec_") || len(secret) != 50 {
		t.Fatalf("registration = %s", th.MustJSON(first))
	}
	// The spec's unversioned path replaces the URL and keeps the secret.
	h.Clock.Advance(time.Minute)
	second := th.WantOK(t, h.Post("/webhooks", key, `{"url":"http://merchant.example:8443/v2/hooks?src=fundsource"}`))
	if second["webhook_url"] != "http://merchant.example:8443/v2/hooks?src=fundsource" || second["secret"] != secret {
		t.Errorf("overwrite = %s, want the new URL and the same secret", th.MustJSON(second))
	}
	if second["created_at"] != first["created_at"] || second["updated_at"] == first["updated_at"] {
		t.Errorf("overwrite timestamps: created %v→%v, updated %v→%v", first["created_at"], second["created_at"], first["updated_at"], second["updated_at"])
	}
	got := th.WantOK(t, h.Get("/v2/webhooks", key))
	if got["webhook_url"] != second["webhook_url"] || got["secret"] != secret {
		t.Errorf("GET = %s", th.MustJSON(got))
	}
	if h.Count("webhook_endpoints") != 1 {
		t.Errorf("endpoints = %d, want 1", h.Count("webhook_endpoints"))
	}
	var sealed string
	if err := h.SQL().Get(&sealed, `SELECT encode(secret_sealed, 'escape') FROM webhook_endpoints`); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, secret[6:]) {
		t.Error("the signing secret is stored in clear")
	}

	// Another merchant and the other environment do not see it.
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Get("/v2/webhooks", other), 404, "webhook_not_found")
	live := h.Production(m).SecretKey
	th.WantError(t, h.Get("/v2/webhooks", live), 404, "webhook_not_found")

	bad := map[string]string{
		"relative":        "/hooks",
		"no scheme":       "merchant.example/hooks",
		"ftp":             "ftp://merchant.example/hooks",
		"javascript":      "javascript:alert(1)",
		"user-info":       "https://user:pass@merchant.example/hooks",
		"bad port":        "https://merchant.example:70000/hooks",
		"too long":        "https://merchant.example/" + strings.Repeat("a", 2048),
		"space":           "https://merchant.example/a b",
		"backslash":       `https://merchant.example\@evil.example/`,
		"empty host":      "https:///hooks",
		"scheme-relative": "//merchant.example/hooks",
	}
	for name, u := range bad {
		t.Run(name, func(t *testing.T) {
			r := h.Post("/v2/webhooks", key, `{"url":`+th.MustJSON(u)+`}`)
			th.WantError(t, r, 400, "invalid_url")
			if r.ErrParam(t) != "url" {
				t.Errorf("param = %q, want url", r.ErrParam(t))
			}
		})
	}
	th.WantError(t, h.Post("/v2/webhooks", key, `{}`), 400, "invalid_request")
	th.WantError(t, h.Post("/v2/webhooks", key, `{"url":"https://a.example","events":[]}`), 400, "invalid_request")
	th.WantError(t, h.Post("/v2/webhooks", live, `{"url":"http://merchant.example/hooks"}`), 400, "invalid_url")
	th.WantOK(t, h.Post("/v2/webhooks", live, `{"url":"https://merchant.example/live"}`))
	if got := th.WantOK(t, h.Get("/v2/webhooks", key))["webhook_url"]; got != second["webhook_url"] {
		t.Errorf("refused registrations changed the URL to %v", got)
	}

	del := th.WantOK(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/webhooks", Key: key}))
	if del["deleted"] != true {
		t.Errorf("DELETE = %s", th.MustJSON(del))
	}
	th.WantError(t, h.Get("/v2/webhooks", key), 404, "webhook_not_found")
	th.WantError(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/webhooks", Key: key}), 404, "webhook_not_found")
	th.WantError(t, h.Post("/v2/webhooks/secret/roll", key, ``), 404, "webhook_not_found")
	tests := len(h.Events("webhook.test"))
	th.WantError(t, h.Post("/v2/webhooks/test", key, `{}`), 404, "webhook_not_found")
	if got := len(h.Events("webhook.test")); got != tests {
		t.Errorf("a refused test event was recorded: %d test events, want %d", got, tests)
	}
	// A new registration after a delete gets a new secret.
	if again := h.RegisterWebhook(key, "https://merchant.example/hooks"); again["secret"] == secret {
		t.Error("re-registration after delete reused the deleted secret")
	}
	th.WantOK(t, h.Get("/v2/webhooks", live)) // production's endpoint is untouched
}

func TestWebhookURLsMustBePublicWithoutTheDevelopmentFlag(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, th.WithPrivateTargets(false))
	key := h.Merchant("Acme").Sandbox.SecretKey
	for _, u := range []string{
		"http://127.0.0.1/hooks", "http://127.1.2.3:8080/", "http://localhost/hooks", "http://api.localhost/",
		"http://[::1]/hooks", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://172.16.5.4/",
		"http://192.168.1.1/", "http://100.64.0.1/", "http://[::ffff:10.0.0.1]/", "http://[fd00:ec2::254]/",
		"http://0.0.0.0/", "http://[::]/", "http://224.0.0.1/", "http://intranet/",
	} {
		th.WantError(t, h.Post("/v2/webhooks", key, `{"url":`+th.MustJSON(u)+`}`), 400, "invalid_url")
	}
	if n := h.Count("webhook_endpoints"); n != 0 {
		t.Errorf("endpoints = %d after refused registrations", n)
	}
	// A public literal address needs no DNS and is accepted.
	th.WantOK(t, h.Post("/v2/webhooks", key, `{"url":"http://93.184.215.14/hooks"}`))
}

func TestEventsAPI(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	h.Clock.Advance(time.Second)
	id := h.Source(key, user, "123456789")
	h.Clock.Advance(time.Second)
	th.WantOK(t, h.Initiate(key, id))

	list := th.WantOK(t, h.Get("/v2/events", key))
	data := list["data"].([]any)
	if len(data) != 3 || list["has_more"] != false {
		t.Fatalf("events = %s", th.MustJSON(list))
	}
	types := []string{}
	for _, e := range data {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if strings.Join(types, " ") != "funding_source.verification_pending funding_source.created customer.created" {
		t.Errorf("types newest first = %v", types)
	}
	if got := th.WantOK(t, h.Get("/v2/events?type=customer.created", key))["data"].([]any); len(got) != 1 {
		t.Errorf("type filter: %d events", len(got))
	}
	if got := th.WantOK(t, h.Get("/v2/events?type=funding_source.*", key))["data"].([]any); len(got) != 2 {
		t.Errorf("group filter: %d events", len(got))
	}
	th.WantError(t, h.Get("/v2/events?type=funding_source.verifed", key), 400, "invalid_request")
	page := th.WantOK(t, h.Get("/v2/events?limit=2", key))
	last := page["data"].([]any)[1].(map[string]any)["id"].(string)
	rest := th.WantOK(t, h.Get("/v2/events?limit=2&starting_after="+last, key))
	if page["has_more"] != true || len(rest["data"].([]any)) != 1 || rest["has_more"] != false {
		t.Errorf("pages: %s then %s", th.MustJSON(page), th.MustJSON(rest))
	}

	first := data[2].(map[string]any)
	ev := h.Event(key, first["id"].(string))
	if ev["type"] != "customer.created" || ev["data"].(map[string]any)["user_id"] != user || len(ev["deliveries"].([]any)) != 0 {
		t.Errorf("event without a webhook = %s", th.MustJSON(ev))
	}
	th.WantError(t, h.Get("/v2/events/evt_unknown", key), 404, "event_not_found")
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Get("/v2/events/"+first["id"].(string), other), 404, "event_not_found")
	live := h.Production(m).SecretKey
	if got := th.WantOK(t, h.Get("/v2/events", live))["data"].([]any); len(got) != 0 {
		t.Errorf("production sees %d sandbox events", len(got))
	}

	// Redelivery needs a webhook; what it sends is an end-to-end test.
	th.WantError(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{}`), 404, "webhook_not_found")
	h.RegisterWebhook(key, "https://hooks.example/a")
	th.WantError(t, h.Post("/v2/events/evt_unknown/redeliver", key, `{}`), 404, "event_not_found")
	th.WantError(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{"now":true}`), 400, "invalid_request")
	r := th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{}`))
	if d := th.OnlyDelivery(t, r); d["status"] != "pending" {
		t.Errorf("redeliver = %s", th.MustJSON(r))
	}
	// The body is optional.
	th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, ``))
}
