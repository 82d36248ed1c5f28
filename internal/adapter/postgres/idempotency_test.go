package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
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

	// The first request takes the key before it runs and holds it until it
	// commits. A second request with the same key does not run: it answers
	// request_in_progress at once.
	write := func(tx postgres.Tx, id string) error {
		return tx.WithTx(ctx, func(tx postgres.Tx) error {
			return tx.InsertMerchant(ctx, newMerchant(id, id+"@example.com"))
		})
	}
	entered, release := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		_, err := db.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "k", Hash: hash, Now: now}, func(tx postgres.Tx) (idempotency.Response, bool) {
			if err := write(tx, "mer_first"); err != nil {
				t.Errorf("first request's write: %v", err)
			}
			close(entered)
			<-release
			return idempotency.Response{Status: 200, Body: []byte(`{"n":1}`)}, true
		})
		firstDone <- err
	}()
	<-entered
	second := func(id string) (*idempotency.Response, error, bool) {
		ran := false
		replay, err := db.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "k", Hash: hash, Now: now}, func(tx postgres.Tx) (idempotency.Response, bool) {
			ran = true
			if err := write(tx, id); err != nil {
				t.Errorf("write of %s: %v", id, err)
			}
			return idempotency.Response{Status: 201, Body: []byte(`{"n":2}`)}, true
		})
		return replay, err, ran
	}
	replay, err, ran := second("mer_second")
	if got := errs.CodeOf(err); got != errs.RequestInProgress || replay != nil {
		t.Errorf("in-flight duplicate: replay %v, code = %q, want %q", replay, got, errs.RequestInProgress)
	}
	if ran {
		t.Error("an in-flight duplicate ran")
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	// After the first committed, a retry is answered from the stored
	// response, and does not run.
	replay, err, ran = second("mer_third")
	if err != nil || replay == nil || replay.Status != 200 || string(replay.Body) != `{"n":1}` {
		t.Fatalf("replay = %+v, %v", replay, err)
	}
	if ran {
		t.Error("a replayed request ran")
	}
	for id, want := range map[string]bool{"mer_first": true, "mer_second": false, "mer_third": false} {
		if _, err := db.Merchant(ctx, id); (err == nil) != want {
			t.Errorf("merchant %s committed = %v, want %v", id, err == nil, want)
		}
	}
	// The same key with another request is idempotency_key_reused.
	if _, err := db.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "k", Hash: []byte("h2"), Now: now}, func(postgres.Tx) (idempotency.Response, bool) {
		return idempotency.Response{Status: 200}, true
	}); errs.CodeOf(err) != errs.IdempotencyKeyReused {
		t.Errorf("other request with the key: %v, want %s", err, errs.IdempotencyKeyReused)
	}

	// A response stored by another transaction after this request took
	// the key (as when a first request commits between the snapshot of
	// this one's claiming statement and its lock) wins when this request
	// stores its own: this request's writes roll back, and it answers with
	// the stored response.
	replay, err = db.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "raced", Hash: hash, Now: now}, func(tx postgres.Tx) (idempotency.Response, bool) {
		if err := write(tx, "mer_raced"); err != nil {
			t.Errorf("raced request's write: %v", err)
		}
		if _, err := db.Pool().ExecContext(context.Background(), `INSERT INTO idempotency_keys
			(merchant_id, environment, key, request_hash, response_status, response_body, created_at)
			VALUES ('mer_i', 'sandbox', 'raced', $1, 200, '{"n":"stored"}', $2)`, hash, now); err != nil {
			t.Errorf("store beside the request: %v", err)
		}
		return idempotency.Response{Status: 200, Body: []byte(`{"n":"mine"}`)}, true
	})
	if err != nil || replay == nil || string(replay.Body) != `{"n":"stored"}` {
		t.Errorf("raced request: replay %+v, %v; want the stored response", replay, err)
	}
	if _, err := db.Merchant(ctx, "mer_raced"); !errs.Is(err, errs.NotFound) {
		t.Errorf("a raced request's writes were committed: %v", err)
	}

	// A response that is not kept (5xx) rolls back the request's writes and
	// leaves the key free for a retry.
	runs := 0
	for range 2 {
		replay, err := db.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "k5", Hash: hash, Now: now}, func(tx postgres.Tx) (idempotency.Response, bool) {
			runs++
			if err := tx.InsertMerchant(ctx, newMerchant("mer_5xx", "5xx@example.com")); err != nil {
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
