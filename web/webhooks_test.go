package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/webhook"
)

func register(h *harness, key, url string) map[string]any {
	h.T.Helper()
	return th.WantOK(h.T, h.Post("/v2/webhooks", key, `{"url":`+mustJSON(url)+`}`))
}

// event returns GET /v2/events/{id}.
func (h *harness) event(key, id string) map[string]any {
	h.T.Helper()
	return th.WantOK(h.T, h.Get("/v2/events/"+id, key))
}

// delivery returns the only delivery of an event detail.
func onlyDelivery(t *testing.T, ev map[string]any) map[string]any {
	t.Helper()
	ds := ev["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("deliveries = %d, want 1: %s", len(ds), mustJSON(ev))
	}
	return ds[0].(map[string]any)
}

func TestWebhookRegistration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey

	th.WantError(t, h.Get("/v2/webhooks", key), 404, "webhook_not_found")
	first := register(h, key, "https://merchant.example/hooks")
	secret := first["secret"].(string)
	if first["webhook_url"] != "https://merchant.example/hooks" || !strings.HasPrefix(secret, "whsec_") || len(secret) != 50 {
		t.Fatalf("registration = %s", mustJSON(first))
	}
	// The spec's unversioned path replaces the URL and keeps the secret.
	h.Clock.Advance(time.Minute)
	second := th.WantOK(t, h.Post("/webhooks", key, `{"url":"http://merchant.example:8443/v2/hooks?src=fundsource"}`))
	if second["webhook_url"] != "http://merchant.example:8443/v2/hooks?src=fundsource" || second["secret"] != secret {
		t.Errorf("overwrite = %s, want the new URL and the same secret", mustJSON(second))
	}
	if second["created_at"] != first["created_at"] || second["updated_at"] == first["updated_at"] {
		t.Errorf("overwrite timestamps: created %v→%v, updated %v→%v", first["created_at"], second["created_at"], first["updated_at"], second["updated_at"])
	}
	got := th.WantOK(t, h.Get("/v2/webhooks", key))
	if got["webhook_url"] != second["webhook_url"] || got["secret"] != secret {
		t.Errorf("GET = %s", mustJSON(got))
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
			r := h.Post("/v2/webhooks", key, `{"url":`+mustJSON(u)+`}`)
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
		t.Errorf("DELETE = %s", mustJSON(del))
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
	if again := register(h, key, "https://merchant.example/hooks"); again["secret"] == secret {
		t.Error("re-registration after delete reused the deleted secret")
	}
	th.WantOK(t, h.Get("/v2/webhooks", live)) // production's endpoint is untouched
}

func TestWebhookURLsMustBePublicWithoutTheDevelopmentFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t, th.WithPrivateTargets(false))
	key := h.Merchant("Acme").Sandbox.SecretKey
	for _, u := range []string{
		"http://127.0.0.1/hooks", "http://127.1.2.3:8080/", "http://localhost/hooks", "http://api.localhost/",
		"http://[::1]/hooks", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://172.16.5.4/",
		"http://192.168.1.1/", "http://100.64.0.1/", "http://[::ffff:10.0.0.1]/", "http://[fd00:ec2::254]/",
		"http://0.0.0.0/", "http://[::]/", "http://224.0.0.1/", "http://intranet/",
	} {
		th.WantError(t, h.Post("/v2/webhooks", key, `{"url":`+mustJSON(u)+`}`), 400, "invalid_url")
	}
	if n := h.Count("webhook_endpoints"); n != 0 {
		t.Errorf("endpoints = %d after refused registrations", n)
	}
	// A public literal address needs no DNS and is accepted.
	th.WantOK(t, h.Post("/v2/webhooks", key, `{"url":"http://93.184.215.14/hooks"}`))
}

func TestMicroDepositFlowDeliversSignedEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, nil)
	secret := register(h, key, rc.URL())["secret"].(string)

	user := h.Customer(key)
	id := h.Source(key, user, "123456789")
	th.WantOK(t, h.Initiate(key, id))
	right := h.Amounts(key, id)
	th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[`+right[0]+`,`+right[1]+`]`)))

	if n := h.Deliver(); n != 4 {
		t.Fatalf("delivered %d, want 4", n)
	}
	got := rc.requests()
	wantTypes := []string{"customer.created", "funding_source.created", "funding_source.verification_pending", "funding_source.verified"}
	if len(got) != len(wantTypes) {
		t.Fatalf("receiver got %d requests, want %d", len(got), len(wantTypes))
	}
	for i, r := range got {
		if err := verifyStandardWebhook(secret, r.Header, r.Body, h.Clock.Now()); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		p := r.Payload(t)
		if p["type"] != wantTypes[i] || p["id"] != r.Header.Get("webhook-id") || p["livemode"] != false {
			t.Errorf("request %d: payload %s, webhook-id %s", i, r.Body, r.Header.Get("webhook-id"))
		}
		if r.Header.Get("webhook-timestamp") != fmt.Sprint(h.Clock.Now().Unix()) || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d headers: %v", i, r.Header)
		}
		if len(p) != 5 {
			t.Errorf("request %d: envelope has %d members, want id, type, created_at, livemode, data", i, len(p))
		}
		if strings.Contains(string(r.Body), "123456789") {
			t.Errorf("request %d carries the full account number: %s", i, r.Body)
		}
	}
	data := got[3].Payload(t)["data"].(map[string]any)
	if data["funding_source_id"] != id || data["user_id"] != user || data["status"] != "Verified" || data["last_four"] != "6789" {
		t.Errorf("verified data = %v", data)
	}
	if got[2].Payload(t)["data"].(map[string]any)["status"] != "PendingVerified" {
		t.Errorf("pending event data = %s", got[2].Body)
	}

	ev := h.event(key, got[3].Header.Get("webhook-id"))
	d := onlyDelivery(t, ev)
	att := d["attempts"].([]any)
	if d["status"] != "delivered" || d["attempt_count"] != float64(1) || d["next_attempt_at"] != nil || len(att) != 1 {
		t.Fatalf("delivery = %s", mustJSON(d))
	}
	a := att[0].(map[string]any)
	if a["status_code"] != float64(200) || a["response_body"] != "ok" || a["error"] != nil || a["url"] != rc.URL() {
		t.Errorf("attempt = %s", mustJSON(a))
	}
	if n := h.Deliver(); n != 0 {
		t.Errorf("a second pass delivered %d more", n)
	}
}

func TestFailedAttemptIsRetriedOnSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.WriteHeader(500)
			w.Write([]byte("database on fire"))
			return
		}
		w.WriteHeader(204)
	})
	secret := register(h, key, rc.URL())["secret"].(string)
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)

	if n := h.Deliver(); n != 1 {
		t.Fatalf("first pass delivered %d", n)
	}
	d := onlyDelivery(t, h.event(key, id))
	next, err := time.Parse(time.RFC3339Nano, d["next_attempt_at"].(string))
	if err != nil {
		t.Fatalf("next_attempt_at = %v", d["next_attempt_at"])
	}
	if wait := next.Sub(h.Clock.Now()); d["status"] != "retrying" || wait < 4500*time.Millisecond || wait > 5500*time.Millisecond {
		t.Fatalf("after a 500: status %v, retry in %v, want retrying in 5 s ± 10 %%", d["status"], wait)
	}
	a := d["attempts"].([]any)[0].(map[string]any)
	if a["status_code"] != float64(500) || a["response_body"] != "database on fire" || d["last_error"] != "the endpoint answered HTTP 500" {
		t.Errorf("failed attempt = %s", mustJSON(d))
	}

	if n := h.Deliver(); n != 0 {
		t.Fatalf("delivered %d before the retry was due", n)
	}
	h.Clock.Advance(5500 * time.Millisecond)
	if n := h.Deliver(); n != 1 {
		t.Fatalf("retry pass delivered %d", n)
	}
	d = onlyDelivery(t, h.event(key, id))
	if d["status"] != "delivered" || d["attempt_count"] != float64(2) || d["last_error"] != nil {
		t.Errorf("after the retry: %s", mustJSON(d))
	}
	got := rc.requests()
	if len(got) != 2 || got[0].Header.Get("webhook-id") != id || got[1].Header.Get("webhook-id") != id {
		t.Fatalf("receiver got %d requests; the retry must keep the event id", len(got))
	}
	if err := verifyStandardWebhook(secret, got[1].Header, got[1].Body, h.Clock.Now()); err != nil {
		t.Errorf("retry signature: %v", err)
	}
	if got[0].Header.Get("webhook-timestamp") == got[1].Header.Get("webhook-timestamp") {
		t.Error("the retry was signed with the first attempt's timestamp")
	}
}

func TestEveryRetryFailsThenTheDeliveryFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	register(h, key, rc.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)

	var total time.Duration
	for i := 0; i <= len(webhook.Schedule); i++ {
		if n := h.Deliver(); n != 1 {
			t.Fatalf("attempt %d: delivered %d", i+1, n)
		}
		if i < len(webhook.Schedule) {
			// Just before the earliest jittered time nothing is due.
			h.Clock.Advance(webhook.Schedule[i] * 89 / 100)
			if n := h.Deliver(); n != 0 {
				t.Fatalf("retry %d was sent %v early", i+1, webhook.Schedule[i]*11/100)
			}
			h.Clock.Advance(webhook.Schedule[i] * 22 / 100)
			total += webhook.Schedule[i]
		}
	}
	d := onlyDelivery(t, h.event(key, id))
	if d["status"] != "failed" || d["attempt_count"] != float64(10) || d["next_attempt_at"] != nil || len(d["attempts"].([]any)) != 10 {
		t.Errorf("after the schedule: %s", mustJSON(d))
	}
	// The contract's waits: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
	if want := 75*time.Hour + 35*time.Minute + 5*time.Second; total != want || len(webhook.Schedule) != 9 {
		t.Errorf("the schedule spans %v in %d waits, want %v in 9", total, len(webhook.Schedule), want)
	}
	h.Clock.Advance(48 * time.Hour)
	if n := h.Deliver(); n != 0 || len(rc.requests()) != 10 {
		t.Errorf("a failed delivery was tried again (%d, %d requests)", n, len(rc.requests()))
	}
}

func TestTimeoutsAndRedirectsAreFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey

	internal := newReceiver(t, nil)
	redirect := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", internal.URL())
		w.WriteHeader(http.StatusFound)
	})
	register(h, key, redirect.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	d := onlyDelivery(t, h.event(key, id))
	a := d["attempts"].([]any)[0].(map[string]any)
	if d["status"] != "retrying" || a["status_code"] != float64(302) || !strings.Contains(fmt.Sprint(a["error"]), "redirect") {
		t.Errorf("redirect attempt = %s", mustJSON(d))
	}
	if n := len(internal.requests()); n != 0 {
		t.Errorf("the redirect was followed (%d requests to its target)", n)
	}

	release := make(chan struct{})
	slow := newReceiver(t, func(_ int, w http.ResponseWriter) { <-release })
	defer close(release)
	register(h, key, slow.URL())
	id = th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	n, err := h.Dispatcher(webhook.DispatcherOptions{Timeout: 200 * time.Millisecond}).DeliverDue(context.Background())
	if err != nil || n < 1 {
		t.Fatalf("deliver: %d, %v", n, err)
	}
	d = onlyDelivery(t, h.event(key, id))
	a = d["attempts"].([]any)[0].(map[string]any)
	if d["status"] != "retrying" || a["status_code"] != nil || !strings.Contains(fmt.Sprint(a["error"]), "no response within 200ms") {
		t.Errorf("timed-out attempt = %s", mustJSON(d))
	}
}

func TestRolledSecretSignsAlongsideTheNewOneFor24Hours(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, nil)
	old := register(h, key, rc.URL())["secret"].(string)

	rolled := th.WantOK(t, h.Post("/v2/webhooks/secret/roll", key, ``))
	cur := rolled["secret"].(string)
	if cur == old || rolled["previous_secret_expires_at"] != "2026-11-03T15:04:05Z" {
		t.Fatalf("roll = %s", mustJSON(rolled))
	}
	if got := th.WantOK(t, h.Get("/v2/webhooks", key)); got["secret"] != cur {
		t.Errorf("GET after roll shows %v", got["secret"])
	}
	th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))
	h.Deliver()
	r := rc.requests()[0]
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("webhook-signature = %q, want two signatures", r.Header.Get("webhook-signature"))
	}
	for name, s := range map[string]string{"new": cur, "old": old} {
		if err := verifyStandardWebhook(s, r.Header, r.Body, h.Clock.Now()); err != nil {
			t.Errorf("%s secret during the overlap: %v", name, err)
		}
	}

	h.Clock.Advance(24*time.Hour + time.Second)
	th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))
	h.Deliver()
	r = rc.requests()[1]
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 1 {
		t.Errorf("after the overlap: %d signatures", len(sigs))
	}
	if err := verifyStandardWebhook(cur, r.Header, r.Body, h.Clock.Now()); err != nil {
		t.Errorf("new secret after the overlap: %v", err)
	}
	if err := verifyStandardWebhook(old, r.Header, r.Body, h.Clock.Now()); err == nil {
		t.Error("the old secret still verifies after 24 hours")
	}
	if got := th.WantOK(t, h.Get("/v2/webhooks", key)); got["previous_secret_expires_at"] != nil {
		t.Errorf("previous_secret_expires_at after the overlap = %v", got["previous_secret_expires_at"])
	}
}

func TestNewURLTakesOverPendingDeliveriesWithTheSameSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	down := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(503) })
	up := newReceiver(t, nil)
	secret := register(h, key, down.URL())["secret"].(string)
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	register(h, key, up.URL())
	h.Clock.Advance(6 * time.Second)
	h.Deliver()
	got := up.requests()
	if len(down.requests()) != 1 || len(got) != 1 || got[0].Header.Get("webhook-id") != id {
		t.Fatalf("old URL got %d, new URL got %d", len(down.requests()), len(got))
	}
	if err := verifyStandardWebhook(secret, got[0].Header, got[0].Body, h.Clock.Now()); err != nil {
		t.Errorf("new URL, kept secret: %v", err)
	}
	if d := onlyDelivery(t, h.event(key, id)); d["status"] != "delivered" || len(d["attempts"].([]any)) != 2 {
		t.Errorf("delivery = %s", mustJSON(d))
	}
}

func TestDeletingTheWebhookCancelsPendingDeliveries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(500) })
	register(h, key, rc.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	th.WantOK(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/webhooks", Key: key}))
	h.Clock.Advance(time.Hour)
	if n := h.Deliver(); n != 0 {
		t.Errorf("delivered %d after the delete", n)
	}
	if d := onlyDelivery(t, h.event(key, id)); d["status"] != "canceled" || d["next_attempt_at"] != nil {
		t.Errorf("delivery after delete = %s", mustJSON(d))
	}
	// Events still happen without an endpoint; they are listed, not delivered.
	h.Customer(key)
	if n := h.Count("webhook_deliveries"); n != 1 {
		t.Errorf("deliveries = %d, want only the canceled one", n)
	}
}

func TestEventsAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
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
		t.Fatalf("events = %s", mustJSON(list))
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
		t.Errorf("pages: %s then %s", mustJSON(page), mustJSON(rest))
	}

	first := data[2].(map[string]any)
	ev := h.event(key, first["id"].(string))
	if ev["type"] != "customer.created" || ev["data"].(map[string]any)["user_id"] != user || len(ev["deliveries"].([]any)) != 0 {
		t.Errorf("event without a webhook = %s", mustJSON(ev))
	}
	th.WantError(t, h.Get("/v2/events/evt_unknown", key), 404, "event_not_found")
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Get("/v2/events/"+first["id"].(string), other), 404, "event_not_found")
	live := h.Production(m).SecretKey
	if got := th.WantOK(t, h.Get("/v2/events", live))["data"].([]any); len(got) != 0 {
		t.Errorf("production sees %d sandbox events", len(got))
	}

	// Redelivery needs a webhook; then it sends the same event id again.
	th.WantError(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{}`), 404, "webhook_not_found")
	rc := newReceiver(t, nil)
	register(h, key, rc.URL())
	th.WantError(t, h.Post("/v2/events/evt_unknown/redeliver", key, `{}`), 404, "event_not_found")
	th.WantError(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{"now":true}`), 400, "invalid_request")
	r := th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{}`))
	if d := onlyDelivery(t, r); d["status"] != "pending" {
		t.Errorf("redeliver = %s", mustJSON(r))
	}
	h.Deliver()
	th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, ``))
	h.Deliver()
	got := rc.requests()
	if len(got) != 2 || got[0].Header.Get("webhook-id") != first["id"] || got[1].Header.Get("webhook-id") != first["id"] {
		t.Fatalf("redelivered requests = %d", len(got))
	}
	if ds := h.event(key, first["id"].(string))["deliveries"].([]any); len(ds) != 2 {
		t.Errorf("deliveries after two redeliveries = %d", len(ds))
	}
}

func TestRedeliverOfAPendingDeliveryMakesItDueNow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.WriteHeader(500)
		}
	})
	register(h, key, rc.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	if n := h.Deliver(); n != 0 {
		t.Fatal("retry due at once")
	}
	th.WantOK(t, h.Post("/v2/events/"+id+"/redeliver", key, `{}`))
	if n := h.Deliver(); n != 1 {
		t.Fatalf("redeliver of a retrying delivery: %d sent", n)
	}
	if d := onlyDelivery(t, h.event(key, id)); d["status"] != "delivered" || d["attempt_count"] != float64(2) {
		t.Errorf("delivery = %s", mustJSON(d))
	}
}

func TestEventsOlderThan30DaysArePurged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	register(h, key, newReceiver(t, nil).URL())
	old := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	h.Clock.Advance(20 * 24 * time.Hour)
	recent := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Clock.Advance(10*24*time.Hour + time.Second)
	n, err := h.Webhooks.PurgeEvents(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("purge = %d, %v; want 1", n, err)
	}
	th.WantError(t, h.Get("/v2/events/"+old, key), 404, "event_not_found")
	h.event(key, recent)
	if h.Count("webhook_attempts") != 0 || h.Count("webhook_deliveries") != 1 {
		t.Errorf("attempts %d, deliveries %d after purge", h.Count("webhook_attempts"), h.Count("webhook_deliveries"))
	}
}

func TestDeliveryRefusesPrivateAddressesInProductionMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, th.WithPrivateTargets(false))
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	listener := newReceiver(t, nil)
	port := listener.srv.Listener.Addr().String()
	port = port[strings.LastIndex(port, ":")+1:]
	// Registration refuses these URLs (see the test above), so the test
	// registers a public address and then changes the stored URL the way a
	// host name that later resolves to a private address would look.
	register(h, key, "http://93.184.215.14/hooks")
	targets := []string{
		"http://127.0.0.1:" + port + "/hooks",
		"http://localhost:" + port + "/hooks", // refused after DNS, at connect time
		"http://[::1]:" + port + "/hooks",
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/hooks",
		"http://100.64.0.1/hooks",
		"http://[::ffff:10.0.0.1]/hooks",
		"http://[::ffff:127.0.0.1]:" + port + "/hooks",
	}
	for _, u := range targets {
		t.Run(u, func(t *testing.T) {
			_, err := h.DB.UpsertEndpoint(context.Background(), webhook.Endpoint{
				Scope: scope, URL: u, Secret: webhook.Sealed{KeyID: "unused", Data: []byte("unused")},
				CreatedAt: h.Clock.Now(), UpdatedAt: h.Clock.Now(),
			})
			if err != nil {
				t.Fatal(err)
			}
			id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
			h.Deliver()
			d := onlyDelivery(t, h.event(key, id))
			a := d["attempts"].([]any)[0].(map[string]any)
			if a["status_code"] != nil || !strings.Contains(fmt.Sprint(a["error"]), "not a public address") {
				t.Errorf("attempt to %s = %s", u, mustJSON(a))
			}
		})
	}
	if n := len(listener.requests()); n != 0 {
		t.Errorf("the loopback listener got %d requests", n)
	}
}

// slowReceiver answers after d and reports the most requests it held at
// once.
func slowReceiver(d time.Duration) (respond func(int, http.ResponseWriter), peak func() int) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	respond = func(_ int, w http.ResponseWriter) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(d)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	return respond, func() int {
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

func TestDispatcherBoundsConcurrencyPerEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slow, peakOf := slowReceiver(20 * time.Millisecond)
	a, b := newReceiver(t, slow), newReceiver(t, nil)
	keyA := h.Merchant("Acme").Sandbox.SecretKey
	keyB := h.Merchant("Other").Sandbox.SecretKey
	register(h, keyA, a.URL())
	register(h, keyB, b.URL())
	const n = 30
	for range n {
		th.WantOK(t, h.Post("/v2/webhooks/test", keyA, `{}`))
		th.WantOK(t, h.Post("/v2/webhooks/test", keyB, `{}`))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Dispatcher(webhook.DispatcherOptions{InFlight: 8, PerEndpoint: 2, Poll: 10 * time.Millisecond}).Run(ctx, nil)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(a.requests()) < n || len(b.requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d and %d of %d", len(a.requests()), len(b.requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if peak := peakOf(); peak > 2 || peak < 1 {
		t.Errorf("peak concurrent deliveries to one endpoint = %d, want at most 2", peak)
	}
	seen := map[string]bool{}
	for _, r := range append(a.requests(), b.requests()...) {
		if id := r.Header.Get("webhook-id"); seen[id] {
			t.Errorf("event %s delivered twice", id)
		} else {
			seen[id] = true
		}
	}
	if len(seen) != 2*n {
		t.Errorf("distinct events delivered = %d, want %d", len(seen), 2*n)
	}
}

// One claim round at start-up, then one per finished delivery: a backlog is
// soon sent with all the room the process has, with no polling to help.
func TestDispatcherFansOutToABacklog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slow, peakOf := slowReceiver(150 * time.Millisecond)
	r := newReceiver(t, slow)
	key := h.Merchant("Acme").Sandbox.SecretKey
	register(h, key, r.URL())
	const n = 24
	for range n {
		th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Dispatcher(webhook.DispatcherOptions{InFlight: 8, PerEndpoint: 8, Poll: time.Hour}).Run(ctx, nil)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(r.requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d", len(r.requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if peak := peakOf(); peak < 6 {
		t.Errorf("peak concurrent deliveries = %d, want the backlog spread over (nearly) all 8 places in flight", peak)
	}
}
