package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/webhook"
)

// slowRecords is the dispatcher's store with every attempt's record
// waiting for the disk as a durable commit does while other work writes
// beside it (the request log's flush, the periodic jobs, a checkpoint):
// the pgtest cluster does not sync, so the wait is added here.
type slowRecords struct {
	webhook.Store
	wait time.Duration
}

func (s slowRecords) FinishDelivery(ctx context.Context, d webhook.Delivery, a webhook.Attempt, token string) error {
	time.Sleep(s.wait)
	return s.Store.FinishDelivery(ctx, d, a, token)
}

func (s slowRecords) WithTx(ctx context.Context, fn func(tx webhook.Store) error) error {
	return s.Store.WithTx(ctx, func(tx webhook.Store) error { return fn(slowRecords{tx, s.wait}) })
}

// TestDeliveriesKeepPaceWhileRecordsWaitForTheDisk: events at a steady
// rate to one healthy endpoint, each attempt's record taking 40 ms (a
// commit behind other writers' flushes), reach the endpoint at once. An
// endpoint's places bound what it is sent at once, not the commits after
// its answers: a success that held its place until its record committed
// would let the endpoint take at most PerEndpoint ÷ 40 ms = 200 a second,
// so the 300 a second would queue, each waiting longer than the one
// before.
func TestDeliveriesKeepPaceWhileRecordsWaitForTheDisk(t *testing.T) {
	h := newHarness(t)
	m := h.Merchant("Steady")
	key := m.Sandbox.SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}

	var mu sync.Mutex
	sent, arrived := map[string]time.Time{}, map[string]time.Time{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if id := r.Header.Get("webhook-id"); arrived[id].IsZero() {
			arrived[id] = at
		}
	}))
	defer rc.Close()
	h.RegisterWebhook(key, rc.URL)

	const perEndpoint, rate, wait = 8, 300, 40 * time.Millisecond
	d := webhook.NewDispatcher(slowRecords{h.DB.Webhooks(), wait}, h.Svc.Vault, webhook.NewClient(true), h.Svc.Now,
		webhook.DispatcherOptions{PerEndpoint: perEndpoint, Poll: time.Hour})
	wake := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx, wake) }()
	defer func() { cancel(); <-done }()

	// Open loop, as the bench's load: by time t, rate·t events started,
	// each followed by the wake-up its commit's notification would send.
	start := time.Now()
	var wg sync.WaitGroup
	for started := 0; time.Since(start) < 2*time.Second; time.Sleep(time.Millisecond) {
		for due := int(time.Since(start).Seconds() * rate); started < due; started++ {
			wg.Go(func() {
				e := event.New(scope, event.WebhookTest, map[string]string{"message": "steady"}, h.Clock.Now())
				t0 := time.Now()
				if err := h.DB.RecordEvent(context.Background(), e); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				sent[e.ID] = t0
				mu.Unlock()
				select {
				case wake <- struct{}{}:
				default:
				}
			})
		}
	}
	wg.Wait()
	waitUntil(t, 30*time.Second, "every event delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived) >= len(sent)
	})
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for id, t0 := range sent {
		lat = append(lat, arrived[id].Sub(t0))
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[min(int(q*float64(len(lat))), len(lat)-1)] }
	p50, p99 := at(0.5), at(0.99)
	t.Logf("%d events at %d/s, records taking %s: delivery p50 %s, p99 %s", len(lat), rate, wait, p50, p99)
	// A queue that grows for 2 s ends a second or more behind, and its
	// median delivery waits half of that; keeping pace, a delivery waits
	// for its claim and the machine's load alone.
	if p50 > 100*time.Millisecond || p99 > 600*time.Millisecond {
		t.Errorf("delivery p99 %s (p50 %s) at %d events/s with records of %s: the deliveries queued behind their records", p99, p50, rate, wait)
	}
}
