package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/webhook"
)

func TestMicroDepositFlowDeliversSignedEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, nil)
	secret := h.RegisterWebhook(key, rc.URL())["secret"].(string)

	user := h.Customer(key)
	id := h.Source(key, user, "123456789")
	th.WantOK(t, h.Initiate(key, id))
	right := h.Amounts(key, id)
	th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[`+right[0]+`,`+right[1]+`]`)))

	if n := h.Deliver(); n != 4 {
		t.Fatalf("delivered %d, want 4", n)
	}
	got := rc.Requests()
	wantTypes := []string{"customer.created", "funding_source.created", "funding_source.verification_pending", "funding_source.verified"}
	if len(got) != len(wantTypes) {
		t.Fatalf("receiver got %d requests, want %d", len(got), len(wantTypes))
	}
	for i, r := range got {
		if err := th.VerifyStandardWebhook(secret, r.Header, r.Body, h.Clock.Now()); err != nil {
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

	ev := h.Event(key, got[3].Header.Get("webhook-id"))
	d := th.OnlyDelivery(t, ev)
	att := d["attempts"].([]any)
	if d["status"] != "delivered" || d["attempt_count"] != float64(1) || d["next_attempt_at"] != nil || len(att) != 1 {
		t.Fatalf("delivery = %s", th.MustJSON(d))
	}
	a := att[0].(map[string]any)
	if a["status_code"] != float64(200) || a["response_body"] != "ok" || a["error"] != nil || a["url"] != rc.URL() {
		t.Errorf("attempt = %s", th.MustJSON(a))
	}
	if n := h.Deliver(); n != 0 {
		t.Errorf("a second pass delivered %d more", n)
	}
}

func TestFailedAttemptIsRetriedOnSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.WriteHeader(500)
			w.Write([]byte("database on fire"))
			return
		}
		w.WriteHeader(204)
	})
	secret := h.RegisterWebhook(key, rc.URL())["secret"].(string)
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)

	if n := h.Deliver(); n != 1 {
		t.Fatalf("first pass delivered %d", n)
	}
	d := th.OnlyDelivery(t, h.Event(key, id))
	next, err := time.Parse(time.RFC3339Nano, d["next_attempt_at"].(string))
	if err != nil {
		t.Fatalf("next_attempt_at = %v", d["next_attempt_at"])
	}
	if wait := next.Sub(h.Clock.Now()); d["status"] != "retrying" || wait < 4500*time.Millisecond || wait > 5500*time.Millisecond {
		t.Fatalf("after a 500: status %v, retry in %v, want retrying in 5 s ± 10 %%", d["status"], wait)
	}
	a := d["attempts"].([]any)[0].(map[string]any)
	if a["status_code"] != float64(500) || a["response_body"] != "database on fire" || d["last_error"] != "the endpoint answered HTTP 500" {
		t.Errorf("failed attempt = %s", th.MustJSON(d))
	}

	if n := h.Deliver(); n != 0 {
		t.Fatalf("delivered %d before the retry was due", n)
	}
	h.Clock.Advance(5500 * time.Millisecond)
	if n := h.Deliver(); n != 1 {
		t.Fatalf("retry pass delivered %d", n)
	}
	d = th.OnlyDelivery(t, h.Event(key, id))
	if d["status"] != "delivered" || d["attempt_count"] != float64(2) || d["last_error"] != nil {
		t.Errorf("after the retry: %s", th.MustJSON(d))
	}
	got := rc.Requests()
	if len(got) != 2 || got[0].Header.Get("webhook-id") != id || got[1].Header.Get("webhook-id") != id {
		t.Fatalf("receiver got %d requests; the retry must keep the event id", len(got))
	}
	if err := th.VerifyStandardWebhook(secret, got[1].Header, got[1].Body, h.Clock.Now()); err != nil {
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
	rc := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	h.RegisterWebhook(key, rc.URL())
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
	d := th.OnlyDelivery(t, h.Event(key, id))
	if d["status"] != "failed" || d["attempt_count"] != float64(10) || d["next_attempt_at"] != nil || len(d["attempts"].([]any)) != 10 {
		t.Errorf("after the schedule: %s", th.MustJSON(d))
	}
	// The contract's waits: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
	if want := 75*time.Hour + 35*time.Minute + 5*time.Second; total != want || len(webhook.Schedule) != 9 {
		t.Errorf("the schedule spans %v in %d waits, want %v in 9", total, len(webhook.Schedule), want)
	}
	h.Clock.Advance(48 * time.Hour)
	if n := h.Deliver(); n != 0 || len(rc.Requests()) != 10 {
		t.Errorf("a failed delivery was tried again (%d, %d requests)", n, len(rc.Requests()))
	}
}

func TestTimeoutsAndRedirectsAreFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey

	internal := th.NewReceiver(t, nil)
	redirect := th.NewReceiver(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", internal.URL())
		w.WriteHeader(http.StatusFound)
	})
	h.RegisterWebhook(key, redirect.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	d := th.OnlyDelivery(t, h.Event(key, id))
	a := d["attempts"].([]any)[0].(map[string]any)
	if d["status"] != "retrying" || a["status_code"] != float64(302) || !strings.Contains(fmt.Sprint(a["error"]), "redirect") {
		t.Errorf("redirect attempt = %s", th.MustJSON(d))
	}
	if n := len(internal.Requests()); n != 0 {
		t.Errorf("the redirect was followed (%d requests to its target)", n)
	}

	release := make(chan struct{})
	slow := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { <-release })
	defer close(release)
	h.RegisterWebhook(key, slow.URL())
	id = th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	n, err := h.Dispatcher(webhook.DispatcherOptions{Timeout: 200 * time.Millisecond}).DeliverDue(context.Background())
	if err != nil || n < 1 {
		t.Fatalf("deliver: %d, %v", n, err)
	}
	d = th.OnlyDelivery(t, h.Event(key, id))
	a = d["attempts"].([]any)[0].(map[string]any)
	if d["status"] != "retrying" || a["status_code"] != nil || !strings.Contains(fmt.Sprint(a["error"]), "no response within 200ms") {
		t.Errorf("timed-out attempt = %s", th.MustJSON(d))
	}
}

func TestRolledSecretSignsAlongsideTheNewOneFor24Hours(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, nil)
	old := h.RegisterWebhook(key, rc.URL())["secret"].(string)

	rolled := th.WantOK(t, h.Post("/v2/webhooks/secret/roll", key, ``))
	cur := rolled["secret"].(string)
	if cur == old || rolled["previous_secret_expires_at"] != "2026-11-03T15:04:05Z" {
		t.Fatalf("roll = %s", th.MustJSON(rolled))
	}
	if got := th.WantOK(t, h.Get("/v2/webhooks", key)); got["secret"] != cur {
		t.Errorf("GET after roll shows %v", got["secret"])
	}
	th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))
	h.Deliver()
	r := rc.Requests()[0]
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("webhook-signature = %q, want two signatures", r.Header.Get("webhook-signature"))
	}
	for name, s := range map[string]string{"new": cur, "old": old} {
		if err := th.VerifyStandardWebhook(s, r.Header, r.Body, h.Clock.Now()); err != nil {
			t.Errorf("%s secret during the overlap: %v", name, err)
		}
	}

	h.Clock.Advance(24*time.Hour + time.Second)
	th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))
	h.Deliver()
	r = rc.Requests()[1]
	if sigs := strings.Fields(r.Header.Get("webhook-signature")); len(sigs) != 1 {
		t.Errorf("after the overlap: %d signatures", len(sigs))
	}
	if err := th.VerifyStandardWebhook(cur, r.Header, r.Body, h.Clock.Now()); err != nil {
		t.Errorf("new secret after the overlap: %v", err)
	}
	if err := th.VerifyStandardWebhook(old, r.Header, r.Body, h.Clock.Now()); err == nil {
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
	down := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(503) })
	up := th.NewReceiver(t, nil)
	secret := h.RegisterWebhook(key, down.URL())["secret"].(string)
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	h.RegisterWebhook(key, up.URL())
	h.Clock.Advance(6 * time.Second)
	h.Deliver()
	got := up.Requests()
	if len(down.Requests()) != 1 || len(got) != 1 || got[0].Header.Get("webhook-id") != id {
		t.Fatalf("old URL got %d, new URL got %d", len(down.Requests()), len(got))
	}
	if err := th.VerifyStandardWebhook(secret, got[0].Header, got[0].Body, h.Clock.Now()); err != nil {
		t.Errorf("new URL, kept secret: %v", err)
	}
	if d := th.OnlyDelivery(t, h.Event(key, id)); d["status"] != "delivered" || len(d["attempts"].([]any)) != 2 {
		t.Errorf("delivery = %s", th.MustJSON(d))
	}
}

func TestDeletingTheWebhookCancelsPendingDeliveries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(500) })
	h.RegisterWebhook(key, rc.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	th.WantOK(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/webhooks", Key: key}))
	h.Clock.Advance(time.Hour)
	if n := h.Deliver(); n != 0 {
		t.Errorf("delivered %d after the delete", n)
	}
	if d := th.OnlyDelivery(t, h.Event(key, id)); d["status"] != "canceled" || d["next_attempt_at"] != nil {
		t.Errorf("delivery after delete = %s", th.MustJSON(d))
	}
	// Events still happen without an endpoint; they are listed, not delivered.
	h.Customer(key)
	if n := h.Count("webhook_deliveries"); n != 1 {
		t.Errorf("deliveries = %d, want only the canceled one", n)
	}
}

// TestRedeliverSendsTheSameEventAgain: an event recorded before the
// merchant had a webhook is sent on request, and each redelivery is a new
// delivery of the same event id.
func TestRedeliverSendsTheSameEventAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	list := th.WantOK(t, h.Get("/v2/events?type=customer.created", key))["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("customer.created events = %d, want 1", len(list))
	}
	first := list[0].(map[string]any)
	if ev := h.Event(key, first["id"].(string)); ev["data"].(map[string]any)["user_id"] != user || len(ev["deliveries"].([]any)) != 0 {
		t.Fatalf("event without a webhook = %s", th.MustJSON(ev))
	}
	rc := th.NewReceiver(t, nil)
	h.RegisterWebhook(key, rc.URL())
	r := th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, `{}`))
	if d := th.OnlyDelivery(t, r); d["status"] != "pending" {
		t.Errorf("redeliver = %s", th.MustJSON(r))
	}
	h.Deliver()
	th.WantOK(t, h.Post("/v2/events/"+first["id"].(string)+"/redeliver", key, ``))
	h.Deliver()
	got := rc.Requests()
	if len(got) != 2 || got[0].Header.Get("webhook-id") != first["id"] || got[1].Header.Get("webhook-id") != first["id"] {
		t.Fatalf("redelivered requests = %d", len(got))
	}
	if ds := h.Event(key, first["id"].(string))["deliveries"].([]any); len(ds) != 2 {
		t.Errorf("deliveries after two redeliveries = %d", len(ds))
	}
}

func TestRedeliverOfAPendingDeliveryMakesItDueNow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.WriteHeader(500)
		}
	})
	h.RegisterWebhook(key, rc.URL())
	id := th.WantOK(t, h.Post("/v2/webhooks/test", key, `{}`))["id"].(string)
	h.Deliver()
	if n := h.Deliver(); n != 0 {
		t.Fatal("retry due at once")
	}
	th.WantOK(t, h.Post("/v2/events/"+id+"/redeliver", key, `{}`))
	if n := h.Deliver(); n != 1 {
		t.Fatalf("redeliver of a retrying delivery: %d sent", n)
	}
	if d := th.OnlyDelivery(t, h.Event(key, id)); d["status"] != "delivered" || d["attempt_count"] != float64(2) {
		t.Errorf("delivery = %s", th.MustJSON(d))
	}
}

func TestEventsOlderThan30DaysArePurged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	h.RegisterWebhook(key, th.NewReceiver(t, nil).URL())
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
	h.Event(key, recent)
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
	listener := th.NewReceiver(t, nil)
	port := listener.Port()
	// Registration refuses these URLs without the development flag, so the test
	// registers a public address and then changes the stored URL the way a
	// host name that later resolves to a private address would look.
	h.RegisterWebhook(key, "http://93.184.215.14/hooks")
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
			d := th.OnlyDelivery(t, h.Event(key, id))
			a := d["attempts"].([]any)[0].(map[string]any)
			if a["status_code"] != nil || !strings.Contains(fmt.Sprint(a["error"]), "not a public address") {
				t.Errorf("attempt to %s = %s", u, th.MustJSON(a))
			}
		})
	}
	if n := len(listener.Requests()); n != 0 {
		t.Errorf("the loopback listener got %d requests", n)
	}
}
