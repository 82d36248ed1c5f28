package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestAMerchantsFirstTestClockDropsTheServersCachedKeys: the key lookup
// says whether the environment has a clock; the first clock notifies the
// key channel (every server drops its cached keys), a second one does
// not.
func TestAMerchantsFirstTestClockDropsTheServersCachedKeys(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	scope := f.Sandbox("Other")
	heard := make(chan struct{}, 16)
	sub := postgres.Subscribe(ctx, f.URL, postgres.KeyChannel, slog.New(slog.DiscardHandler), func() { heard <- struct{}{} })
	deadline := time.Now().Add(10 * time.Second)
	for !sub.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("the subscription did not connect")
		}
		time.Sleep(10 * time.Millisecond)
	}
	drain := func() {
		for {
			select {
			case <-heard:
			case <-time.After(300 * time.Millisecond):
				return
			}
		}
	}
	drain()

	_, env, err := f.DB.APIKeyByHash(ctx, merchant.HashSecret(m.Sandbox.SecretKey))
	if err != nil || env.HasTestClocks {
		t.Fatalf("before any clock: has clocks %v (%v)", env.HasTestClocks, err)
	}
	own := m.Sandbox.SecretKey
	p, err := f.Merchants.Authenticate(ctx, own)
	if err != nil || p.HasTestClocks {
		t.Fatalf("principal before any clock: %+v, %v", p, err)
	}
	frozen := f.Clock.Now().Add(time.Hour)
	first := testclock.Clock{Scope: p.Scope, ID: "clk_first", FrozenTime: frozen, Status: testclock.Ready, CreatedAt: f.Clock.Now()}
	if ok, err := f.DB.InsertClock(ctx, first, testclock.MaxClocks); err != nil || !ok {
		t.Fatalf("insert the first clock: %v %v", ok, err)
	}
	select {
	case <-heard:
	case <-time.After(5 * time.Second):
		t.Fatal("the first clock sent no key notification")
	}
	drain()
	if _, env, err := f.DB.APIKeyByHash(ctx, merchant.HashSecret(own)); err != nil || !env.HasTestClocks {
		t.Fatalf("after the first clock: has clocks %v (%v)", env.HasTestClocks, err)
	}
	second := first
	second.ID = "clk_second"
	if ok, err := f.DB.InsertClock(ctx, second, testclock.MaxClocks); err != nil || !ok {
		t.Fatalf("insert the second clock: %v %v", ok, err)
	}
	select {
	case <-heard:
		t.Error("a second clock notified the key channel")
	case <-time.After(500 * time.Millisecond):
	}
	// Another merchant's environment still has none.
	other, err := f.DB.ListClocks(ctx, scope, paging.Page{Limit: 10})
	if err != nil || len(other) != 0 {
		t.Errorf("another merchant's clocks: %v %v", other, err)
	}
}
