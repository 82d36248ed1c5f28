package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/idempotency"
	"github.com/fundsource/fundsource/internal/pgtest"
	"github.com/fundsource/fundsource/internal/tenant"
)

func TestIdempotentInFlightAndDiscardedResponses(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	if err := db.InsertMerchant(ctx, newMerchant("mer_i", "i@example.com")); err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: "mer_i", Env: tenant.Sandbox}
	now := time.Now().UTC()
	hash := []byte("h1")

	// While the first request runs, a second with the same key is refused.
	entered, release := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		_, err := db.Idempotent(ctx, scope, "k", hash, now, func(ctx context.Context) (idempotency.Response, bool) {
			close(entered)
			<-release
			return idempotency.Response{Status: 200, Body: []byte(`{"n":1}`)}, true
		})
		firstDone <- err
	}()
	<-entered
	_, err := db.Idempotent(ctx, scope, "k", hash, now, func(context.Context) (idempotency.Response, bool) {
		t.Error("second request ran while the first was in flight")
		return idempotency.Response{}, false
	})
	if got := errs.CodeOf(err); got != errs.RequestInProgress {
		t.Errorf("in-flight duplicate: code = %q, want %q", got, errs.RequestInProgress)
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	replay, err := db.Idempotent(ctx, scope, "k", hash, now, nil)
	if err != nil || replay == nil || replay.Status != 200 || string(replay.Body) != `{"n":1}` {
		t.Fatalf("replay = %+v, %v", replay, err)
	}

	// A response that is not kept (5xx) rolls back the request's writes and
	// leaves the key free for a retry.
	runs := 0
	for range 2 {
		replay, err := db.Idempotent(ctx, scope, "k5", hash, now, func(ctx context.Context) (idempotency.Response, bool) {
			runs++
			if err := db.InsertMerchant(ctx, newMerchant("mer_5xx", "5xx@example.com")); err != nil {
				t.Errorf("insert inside idempotent run: %v", err)
			}
			return idempotency.Response{Status: 500}, false
		})
		if err != nil || replay != nil {
			t.Fatalf("discarded run: replay %v, err %v", replay, err)
		}
	}
	if runs != 2 {
		t.Errorf("5xx request ran %d times over two tries, want 2 (not stored)", runs)
	}
	if _, err := db.Merchant(ctx, "mer_5xx"); !errs.Is(err, errs.NotFound) {
		t.Errorf("writes of a discarded run were committed: %v", err)
	}
}
