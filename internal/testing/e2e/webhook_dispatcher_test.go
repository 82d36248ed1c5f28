package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/webhook"
)

// hooked is a sandbox merchant with a webhook endpoint at rc.
type hooked struct {
	key   string
	scope tenant.Scope
	rc    *th.Receiver
}

func newHooked(t *testing.T, h *harness, name string, respond func(int, http.ResponseWriter)) hooked {
	t.Helper()
	m := h.Merchant(name)
	hk := hooked{key: m.Sandbox.SecretKey, scope: tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, rc: th.NewReceiver(t, respond)}
	h.RegisterWebhook(hk.key, hk.rc.URL())
	return hk
}

// record writes n webhook.test events for the merchant at the harness's
// clock, as the service does, and returns their ids.
func (hk hooked) record(t *testing.T, h *harness, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		e := event.New(hk.scope, event.WebhookTest, map[string]string{"message": fmt.Sprint("backlog ", i)}, h.Clock.Now())
		if err := h.DB.RecordEvent(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		out[i] = e.ID
	}
	return out
}

func failing(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) }

// TestLeaseExpiryAndTakeover: a delivery leased by a process that then
// goes silent is due again when the lease ends, another dispatcher sends
// it, and the late finisher's record is dropped: one attempt recorded.
func TestLeaseExpiryAndTakeover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hk := newHooked(t, h, "Acme", nil)
	id := hk.record(t, h, 1)[0]
	ctx := context.Background()
	now := h.Clock.Now()
	claims, err := h.DB.ClaimDeliveries(ctx, webhook.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(15 * time.Second), Token: "lease_dead"})
	if err != nil || len(claims) != 1 || claims[0].Event.ID != id {
		t.Fatalf("claim: %v %+v", err, claims)
	}
	// Leased: nobody else may send it before the lease ends.
	if n := h.Deliver(); n != 0 {
		t.Fatalf("a leased delivery was sent again %d time(s) before its lease ended", n)
	}
	h.Clock.Advance(16 * time.Second)
	if n := h.Deliver(); n != 1 || len(hk.rc.Requests()) != 1 || hk.rc.Requests()[0].Header.Get("webhook-id") != id {
		t.Fatalf("after the lease: sent %d, receiver saw %d", n, len(hk.rc.Requests()))
	}
	// The first process wakes up and tries to record its attempt.
	c := claims[0]
	attempt := webhook.Attempt{AttemptedAt: now, URL: c.Endpoint.URL, LatencyMS: 1}
	err = h.DB.FinishDelivery(ctx, c.Delivery, attempt, c.LeaseToken)
	if !errs.Is(err, errs.Conflict) {
		t.Errorf("a finish without the lease: %v, want conflict", err)
	}
	d := th.OnlyDelivery(t, h.Event(hk.key, id))
	if d["status"] != "delivered" || len(d["attempts"].([]any)) != 1 {
		t.Errorf("delivery after takeover: %s", th.MustJSON(d))
	}
}

// TestClaimsAreFairAcrossEndpoints: with a backlog of 1,000 on one
// endpoint, another endpoint's first event still goes out within a second.
func TestClaimsAreFairAcrossEndpoints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slow := newHooked(t, h, "Busy", func(_ int, w http.ResponseWriter) { time.Sleep(50 * time.Millisecond) })
	quiet := newHooked(t, h, "Quiet", nil)
	slow.record(t, h, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Dispatcher(webhook.DispatcherOptions{InFlight: 16, PerEndpoint: 8, Poll: 20 * time.Millisecond}).Run(ctx, nil)
	}()
	defer func() { cancel(); <-done }()
	waitUntil(t, 10*time.Second, "the backlog flowing", func() bool { return len(slow.rc.Requests()) >= 20 })
	start := time.Now()
	quiet.record(t, h, 1)
	waitUntil(t, 5*time.Second, "the quiet endpoint's event", func() bool { return len(quiet.rc.Requests()) == 1 })
	if took := time.Since(start); took > time.Second {
		t.Errorf("the quiet endpoint waited %s behind another's backlog", took)
	}
	if got := len(slow.rc.Requests()); got >= 1000 {
		t.Errorf("the backlog (%d sent) finished first: the test proves nothing", got)
	}
}

// TestEndpointHealth: failures in a row put an endpoint in backing_off
// (one delivery in flight), a success clears it, failing continuously for
// DisableAfter disables it (a webhook.disabled event, listed, not sent to
// it; attempts stop, deliveries are kept), and enable delivers what it
// held, oldest first.
func TestEndpointHealth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	healthy := false
	hk := newHooked(t, h, "Flaky", func(_ int, w http.ResponseWriter) {
		mu.Lock()
		defer mu.Unlock()
		if !healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	setHealthy := func(v bool) { mu.Lock(); healthy = v; mu.Unlock() }
	status := func() map[string]any { return th.WantOK(t, h.Get("/v2/webhooks", hk.key)) }
	if s := status(); s["status"] != "enabled" || s["consecutive_failures"] != 0.0 || s["disabled_at"] != nil {
		t.Fatalf("a new endpoint: %s", th.MustJSON(s))
	}
	opts := webhook.DispatcherOptions{DisableAfter: 72 * time.Hour}
	deliver := func() int {
		n, err := h.Dispatcher(opts).DeliverDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	hk.record(t, h, 3)
	if n := deliver(); n != 3 {
		t.Fatalf("sent %d of 3", n)
	}
	if s := status(); s["status"] != "backing_off" || s["consecutive_failures"] != 3.0 {
		t.Fatalf("after 3 failures: %s", th.MustJSON(s))
	}
	// Backing off: while one delivery is leased, no other of the endpoint is claimed.
	h.Clock.Advance(time.Hour) // every retry is due
	now := h.Clock.Now()
	first, err := h.DB.ClaimDeliveries(context.Background(), webhook.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(time.Minute), Token: "lease_a"})
	if err != nil || len(first) != 1 {
		t.Fatalf("claim while backing off: %v, %d", err, len(first))
	}
	if more, err := h.DB.ClaimDeliveries(context.Background(), webhook.ClaimRequest{Now: now, Limit: 10, LeaseUntil: now.Add(time.Minute), Token: "lease_b"}); err != nil || len(more) != 0 {
		t.Fatalf("a second delivery in flight while backing off: %v, %d", err, len(more))
	}
	// A success clears the streak.
	setHealthy(true)
	h.Clock.Advance(2 * time.Minute) // the first lease ends
	if n := deliver(); n != 3 {
		t.Fatalf("recovery: sent %d of 3", n)
	}
	if s := status(); s["status"] != "enabled" || s["consecutive_failures"] != 0.0 {
		t.Fatalf("after a success: %s", th.MustJSON(s))
	}

	// Failing for 72 hours disables it.
	setHealthy(false)
	hk.record(t, h, 1)
	for range 12 {
		deliver()
		h.Clock.Advance(10 * time.Hour)
	}
	s := status()
	if s["status"] != "disabled" || s["disabled_at"] == nil {
		t.Fatalf("after failing for 100 h: %s", th.MustJSON(s))
	}
	disabled := h.Events("webhook.disabled")
	if len(disabled) != 1 || disabled[0]["webhook_url"] != hk.rc.URL() {
		t.Fatalf("webhook.disabled events: %v", disabled)
	}
	list := th.WantOK(t, h.Get("/v2/events?type=webhook.disabled", hk.key))["data"].([]any)
	if len(list) != 1 {
		t.Errorf("GET /v2/events?type=webhook.disabled: %d", len(list))
	}
	sentBefore := len(hk.rc.Requests())
	held := hk.record(t, h, 3)
	h.Clock.Advance(48 * time.Hour)
	if n := deliver(); n != 0 || len(hk.rc.Requests()) != sentBefore {
		t.Fatalf("a disabled endpoint got %d attempts", n)
	}
	for _, r := range hk.rc.Requests() {
		if body := r.Payload(t); body["type"] == "webhook.disabled" {
			t.Error("webhook.disabled was sent to the disabled endpoint")
		}
	}

	// Enable: everything held goes out, oldest first.
	setHealthy(true)
	if s := th.WantOK(t, h.Post("/v2/webhooks/enable", hk.key, "")); s["status"] != "enabled" || s["disabled_at"] != nil {
		t.Fatalf("enable: %s", th.MustJSON(s))
	}
	if n := deliver(); n != 4 { // the one that was failing, and the three held
		t.Fatalf("after enable: sent %d, want 4", n)
	}
	var order []string
	for _, r := range hk.rc.Requests()[sentBefore:] {
		order = append(order, r.Header.Get("webhook-id"))
	}
	if order[1] != held[0] || order[2] != held[1] || order[3] != held[2] {
		t.Errorf("held events delivered as %v, want oldest first ending %v", order, held)
	}
	th.WantError(t, h.Post("/v2/webhooks/enable", h.Merchant("Nobody").Sandbox.SecretKey, ""), http.StatusNotFound, "webhook_not_found")
}

// TestInFlightIsBoundedPerProcess: a process keeps at most InFlight
// deliveries in flight, whatever the endpoints, and none of them holds a
// database connection while it waits: receivers that hang for a while
// never stall the claims of others.
func TestInFlightIsBoundedPerProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := make(chan struct{})
	var hangers []hooked
	for _, name := range []string{"Hang One", "Hang Two", "Hang Three"} {
		hk := newHooked(t, h, name, func(_ int, w http.ResponseWriter) { <-release })
		hk.record(t, h, 10)
		hangers = append(hangers, hk)
	}
	d := h.Dispatcher(webhook.DispatcherOptions{InFlight: 12, PerEndpoint: 8, Poll: 20 * time.Millisecond, Timeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx, nil) }()
	waitUntil(t, 5*time.Second, "12 deliveries in flight", func() bool {
		n := 0
		for _, hk := range hangers {
			n += len(hk.rc.Requests())
		}
		return n >= 12
	})
	time.Sleep(200 * time.Millisecond) // room for a 13th, if the bound did not hold
	if peak := d.Peak(); peak != 12 {
		t.Errorf("peak in flight %d, want 12", peak)
	}
	// Twelve hang, yet the pool serves the API at once.
	th.WantOK(t, h.Get("/v2/webhooks", hangers[0].key))
	close(release)
	cancel()
	<-done
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFinishedDeliveriesClaimAgainOnlyWhereALimitHeldOneBack: with no poll
// and no notification, the deliveries that the endpoint's limit, the
// process's limit or the endpoint's backoff held back still go as the ones
// before them finish; and where no limit held anything back, a finished
// delivery starts no claim of its own (new deliveries come with a
// notification).
func TestFinishedDeliveriesClaimAgainOnlyWhereALimitHeldOneBack(t *testing.T) {
	t.Parallel()
	// run starts a dispatcher that never polls (only wake starts a round)
	// and stops it when the test ends.
	run := func(t *testing.T, h *harness, opts webhook.DispatcherOptions, wake chan struct{}) *webhook.Dispatcher {
		opts.Poll, opts.Timeout = time.Hour, 5*time.Second
		d := h.Dispatcher(opts)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); d.Run(ctx, wake) }()
		t.Cleanup(func() { cancel(); <-done })
		return d
	}
	delivered := func(t *testing.T, h *harness, hk hooked, n int) {
		t.Helper()
		waitUntil(t, 5*time.Second, fmt.Sprintf("%d deliveries", n), func() bool {
			var got int
			if err := h.SQL().Get(&got, `SELECT count(*) FROM webhook_deliveries WHERE merchant_id = $1 AND status = 'delivered'`, hk.scope.MerchantID); err != nil {
				t.Fatal(err)
			}
			return got == n
		})
	}
	// Each limit holds deliveries back; each must still let them all go.
	for _, c := range []struct {
		name      string
		events    int
		opts      webhook.DispatcherOptions
		backedOff bool
	}{
		{"the endpoint's limit", 6, webhook.DispatcherOptions{InFlight: 16, PerEndpoint: 2}, false},
		{"the process's limit", 5, webhook.DispatcherOptions{InFlight: 2, PerEndpoint: 8}, false},
		// One goes; its success ends the backoff, and the others follow.
		{"a backing-off endpoint that recovers", 3, webhook.DispatcherOptions{InFlight: 16, PerEndpoint: 8}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			hk := newHooked(t, h, "Held Back", nil)
			if c.backedOff {
				if _, err := h.SQL().Exec(`UPDATE webhook_endpoints SET consecutive_failures = $2, failing_since = $3 WHERE merchant_id = $1`,
					hk.scope.MerchantID, webhook.BackoffAfter, h.Clock.Now()); err != nil {
					t.Fatal(err)
				}
				if got := th.WantOK(t, h.Get("/v2/webhooks", hk.key))["status"]; got != webhook.StatusBackingOff {
					t.Fatalf("endpoint status %v, want %s", got, webhook.StatusBackingOff)
				}
			}
			hk.record(t, h, c.events)
			run(t, h, c.opts, nil)
			delivered(t, h, hk, c.events)
		})
	}
	t.Run("no limit held one back", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		hk := newHooked(t, h, "Plenty Of Room", nil)
		wake := make(chan struct{}, 1)
		d := run(t, h, webhook.DispatcherOptions{InFlight: 16, PerEndpoint: 8}, wake)
		const events = 10
		for i := range events {
			hk.record(t, h, 1)
			wake <- struct{}{}
			delivered(t, h, hk, i+1)
		}
		time.Sleep(100 * time.Millisecond) // for a claim the last one would start
		// One round when Run starts, and one per notification.
		if got := d.Claims(); got > events+1 {
			t.Errorf("%d claims for %d events sent one at a time, want at most %d", got, events, events+1)
		}
	})
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
	a, b := th.NewReceiver(t, slow), th.NewReceiver(t, nil)
	keyA := h.Merchant("Acme").Sandbox.SecretKey
	keyB := h.Merchant("Other").Sandbox.SecretKey
	h.RegisterWebhook(keyA, a.URL())
	h.RegisterWebhook(keyB, b.URL())
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
	for len(a.Requests()) < n || len(b.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d and %d of %d", len(a.Requests()), len(b.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if peak := peakOf(); peak > 2 || peak < 1 {
		t.Errorf("peak concurrent deliveries to one endpoint = %d, want at most 2", peak)
	}
	seen := map[string]bool{}
	for _, r := range append(a.Requests(), b.Requests()...) {
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
	r := th.NewReceiver(t, slow)
	key := h.Merchant("Acme").Sandbox.SecretKey
	h.RegisterWebhook(key, r.URL())
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
	for len(r.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d", len(r.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if peak := peakOf(); peak < 6 {
		t.Errorf("peak concurrent deliveries = %d, want the backlog spread over (nearly) all 8 places in flight", peak)
	}
}
