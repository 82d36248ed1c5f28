package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/webhook"
)

// A merchant deleting its endpoint while a dispatcher records an attempt
// of one of its deliveries: the dispatcher's transaction holds the
// delivery and then updates the endpoint's failure streak, while the
// delete cancels the deliveries and removes the endpoint. Both must
// succeed; with the two rows locked in opposite orders PostgreSQL aborted
// one of them as a deadlock.
func TestDeletingAnEndpointWhileADeliveryIsRecorded(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	scope := tenant.Scope{MerchantID: "mer_deadlock", Env: tenant.Sandbox}
	execAll(t, db.Pool(), merchantRows(scope.MerchantID)...)
	execAll(t, db.Pool(), `INSERT INTO webhook_endpoints (merchant_id, environment, url, secret_key_id, secret_sealed, created_at, updated_at)
VALUES ('mer_deadlock', 'sandbox', 'https://hooks.example/in', 'k1', '\x00', now(), now())`)
	now := time.Now().UTC()
	if err := db.RecordEvent(ctx, event.New(scope, event.WebhookTest, map[string]int{"n": 1}, now)); err != nil {
		t.Fatal(err)
	}
	var id string
	if err := db.Pool().GetContext(ctx, &id, `UPDATE webhook_deliveries SET lease_token = 'tok', leased_until = now() + interval '1 minute'
WHERE merchant_id = 'mer_deadlock' RETURNING id`); err != nil {
		t.Fatal(err)
	}

	deleted := make(chan error, 1)
	err := db.WithTx(ctx, func(tx postgres.Tx) error {
		// The dispatcher's transaction: the delivery's new state first.
		next := now.Add(time.Minute)
		failure := "connection refused"
		if err := tx.FinishDelivery(ctx, webhook.Delivery{ID: id, Scope: scope, Status: webhook.Pending, Attempts: 1,
			NextAttemptAt: &next, LastError: &failure, UpdatedAt: now},
			webhook.Attempt{AttemptedAt: now, URL: "https://hooks.example/in", Error: &failure}, "tok"); err != nil {
			return err
		}
		// The merchant deletes the endpoint meanwhile; it waits for the
		// delivery this transaction holds.
		go func() { deleted <- db.DeleteEndpoint(context.Background(), scope, now) }()
		waitForLockWait(t, db.Pool(), 1)
		// Then the endpoint's failure streak.
		_, err := tx.EndpointFailed(ctx, scope, now, time.Hour)
		return err
	})
	if err != nil {
		t.Fatalf("the dispatcher's transaction: %v", err)
	}
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatalf("delete: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delete never finished")
	}
	var endpoints int
	var status string
	if err := db.Pool().GetContext(ctx, &endpoints, `SELECT count(*) FROM webhook_endpoints WHERE merchant_id = 'mer_deadlock'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool().GetContext(ctx, &status, `SELECT status FROM webhook_deliveries WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if endpoints != 0 || status != webhook.Canceled {
		t.Errorf("after the delete: %d endpoints, delivery %s; want 0 and %s", endpoints, status, webhook.Canceled)
	}
}

// waitForLockWait returns once n sessions of the test's database wait for
// a lock.
func waitForLockWait(t *testing.T, db interface {
	GetContext(context.Context, any, string, ...any) error
}, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var waiting int
		if err := db.GetContext(context.Background(), &waiting, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d sessions ever waited for a lock", n)
}

// The dispatchers are woken after a transaction that queued a delivery
// commits, by a notification of its own (the transaction does not notify,
// see waker): not before the commit, not after a rollback, and not for an
// event that queued nothing.
func TestDispatchersAreWokenAfterTheCommit(t *testing.T) {
	t.Parallel()
	db, woken := pgtest.Woken(t, pgtest.URL(t))
	ctx := context.Background()
	quiet, hooked := tenant.Scope{MerchantID: "mer_quiet", Env: tenant.Sandbox}, tenant.Scope{MerchantID: "mer_hooked", Env: tenant.Sandbox}
	execAll(t, db.Pool(), merchantRows(quiet.MerchantID, hooked.MerchantID)...)
	execAll(t, db.Pool(), `INSERT INTO webhook_endpoints (merchant_id, environment, url, secret_key_id, secret_sealed, created_at, updated_at)
VALUES ('mer_hooked', 'sandbox', 'https://hooks.example/in', 'k1', '\x00', now(), now())`)
	record := func(st postgres.Stores, scope tenant.Scope) error {
		return st.Webhooks().RecordEvent(ctx, event.New(scope, event.WebhookTest, map[string]int{"n": 1}, time.Now().UTC()))
	}

	if err := record(db, quiet); err != nil {
		t.Fatal(err)
	}
	if woken(500 * time.Millisecond) {
		t.Error("woken by an event that queued no delivery")
	}

	rollback := errors.New("roll back")
	if err := db.WithTx(ctx, func(tx postgres.Tx) error {
		if err := record(tx, hooked); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if woken(500 * time.Millisecond) {
		t.Error("woken by a transaction that rolled back")
	}

	if err := db.WithTx(ctx, func(tx postgres.Tx) error {
		if err := record(tx, hooked); err != nil {
			return err
		}
		if woken(500 * time.Millisecond) {
			t.Error("woken before the commit")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !woken(5 * time.Second) {
		t.Error("not woken after the commit of a queued delivery")
	}

	if err := record(db, hooked); err != nil { // a statement on its own
		t.Fatal(err)
	}
	if !woken(5 * time.Second) {
		t.Error("not woken after a queued delivery outside a transaction")
	}
}
