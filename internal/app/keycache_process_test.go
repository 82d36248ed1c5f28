package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// status is the status of GET url with the key.
func status(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// A server remembers resolved keys, and forgets them when any process (or
// an operator's SQL) changes a key: PostgreSQL notifies every server.
func TestKeyChangesReachEveryServersKeyCache(t *testing.T) {
	c := newCluster(t)
	_, addr := c.serveAt("server")
	customers := "http://" + addr + "/v2/customers"
	waitFor(t, 20*time.Second, "the server answers with the key", func() bool {
		return status(t, customers, c.key) == http.StatusOK
	})
	ctx := context.Background()

	// Proof that the server answers from its cache: with the trigger off,
	// a revocation in the database goes unnoticed.
	waitFor(t, 5*time.Second, "an answer from the cache", func() bool {
		if status(t, customers, c.key) != http.StatusOK {
			t.Fatal("the key stopped working")
		}
		tx := c.db.SQL().MustBeginTx(ctx, nil)
		defer tx.Rollback()
		tx.MustExec(`ALTER TABLE api_keys DISABLE TRIGGER api_keys_changed`)
		tx.MustExec(`UPDATE api_keys SET revoked_at = now() WHERE merchant_id = $1 AND revoked_at IS NULL`, c.scope.MerchantID)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		cached := status(t, customers, c.key) == http.StatusOK
		c.db.SQL().MustExec(`ALTER TABLE api_keys ENABLE TRIGGER api_keys_changed`)
		if !cached {
			// Not cached yet (the server's subscription was still
			// connecting): undo and try again.
			c.db.SQL().MustExec(`UPDATE api_keys SET revoked_at = NULL WHERE merchant_id = $1`, c.scope.MerchantID)
		}
		return cached
	})
	// Any statement on the table notifies; the server forgets the key.
	c.db.SQL().MustExec(`UPDATE api_keys SET revoked_at = revoked_at WHERE merchant_id = $1`, c.scope.MerchantID)
	waitFor(t, 2*time.Second, "the revoked key refused", func() bool {
		return status(t, customers, c.key) == http.StatusUnauthorized
	})

	// A roll by another process: the new key works, the old one (cached
	// again first) stops.
	c.db.SQL().MustExec(`UPDATE api_keys SET revoked_at = NULL WHERE merchant_id = $1`, c.scope.MerchantID)
	waitFor(t, 2*time.Second, "the restored key accepted", func() bool {
		return status(t, customers, c.key) == http.StatusOK
	})
	rolled, err := c.svc.Merchants.RollKey(ctx, c.scope)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the old key refused after the roll", func() bool {
		return status(t, customers, c.key) == http.StatusUnauthorized
	})
	if got := status(t, customers, rolled); got != http.StatusOK {
		t.Errorf("the rolled key: %d", got)
	}
}
