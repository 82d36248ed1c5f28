package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	th "github.com/fundsource/fundsource/internal/testing/harness"
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
		tx := c.sql.MustBeginTx(ctx, nil)
		defer tx.Rollback()
		tx.MustExec(`ALTER TABLE api_keys DISABLE TRIGGER api_keys_changed`)
		tx.MustExec(`UPDATE api_keys SET revoked_at = now() WHERE merchant_id = $1 AND revoked_at IS NULL`, c.scope.MerchantID)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		cached := status(t, customers, c.key) == http.StatusOK
		c.sql.MustExec(`ALTER TABLE api_keys ENABLE TRIGGER api_keys_changed`)
		if !cached {
			// Not cached yet (the server's subscription was still
			// connecting): undo and try again.
			c.sql.MustExec(`UPDATE api_keys SET revoked_at = NULL WHERE merchant_id = $1`, c.scope.MerchantID)
		}
		return cached
	})
	// Any statement on the table notifies; the server forgets the key.
	c.sql.MustExec(`UPDATE api_keys SET revoked_at = revoked_at WHERE merchant_id = $1`, c.scope.MerchantID)
	waitFor(t, 2*time.Second, "the revoked key refused", func() bool {
		return status(t, customers, c.key) == http.StatusUnauthorized
	})

	// A roll by another process: the new key works, the old one (cached
	// again first) stops.
	c.sql.MustExec(`UPDATE api_keys SET revoked_at = NULL WHERE merchant_id = $1`, c.scope.MerchantID)
	waitFor(t, 2*time.Second, "the restored key accepted", func() bool {
		return status(t, customers, c.key) == http.StatusOK
	})
	rolled, err := c.svc.Merchants.RollKey(ctx, c.scope, audit.Operator("test"))
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

// TestMetricsOnTheirOwnListener: with METRICS_ADDR, /metrics is served
// there and not on the service's listener.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	c := newCluster(t)
	metricsAddr := th.FreeAddr(t)
	c.env = append(c.env, "METRICS_ADDR="+metricsAddr)
	_, addr := c.serveAt("server")
	waitFor(t, 20*time.Second, "the server answers", func() bool {
		return status(t, "http://"+addr+"/v2/customers", c.key) == http.StatusOK
	})
	if got := status(t, "http://"+addr+"/metrics", ""); got != http.StatusNotFound {
		t.Errorf("/metrics on the service's listener: %d, want 404", got)
	}
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `fundsource_http_requests_total{method="GET",route="/v2/customers",status="200"}`) {
		t.Errorf("/metrics on METRICS_ADDR: %d\n%.500s", res.StatusCode, body)
	}
	// The main listener's connection cap is served too.
	for _, series := range []string{"fundsource_http_connections_open ", "fundsource_http_connections_refused_total 0"} {
		if !strings.Contains(string(body), "\n"+series) {
			t.Errorf("/metrics has no %q", series)
		}
	}
}

// A server also remembers what a hosted-page link's public key resolves to
// (the merchant's name and redirect origins), and forgets it when any
// process changes an origin.
func TestRedirectOriginChangesReachEveryServersCache(t *testing.T) {
	c := newCluster(t)
	_, addr := c.serveAt("server")
	ctx := context.Background()
	cust, err := c.svc.Customers.Create(ctx, c.scope, customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.svc.Funding.CreateForMicroDeposits(ctx, c.scope, funding.Input{CustomerID: cust.ID, RoutingNumber: "021000021", AccountNumber: "12345678"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := c.svc.Merchants.Environment(ctx, c.scope)
	if err != nil {
		t.Fatal(err)
	}
	page := "http://" + addr + "/bank-account/" + env.PublicKey + "/" + cust.ID + "/" + src.ID + "?successUrl=https%3A%2F%2Fshop.example%2Fdone"
	// Sandbox takes loopback addresses only until an origin is allowed.
	waitFor(t, 20*time.Second, "the page refuses an origin not allowed", func() bool {
		return status(t, page, "") == http.StatusBadRequest
	})
	// Proof that the server answers from its cache: with the trigger off,
	// an origin allowed in the database goes unnoticed.
	waitFor(t, 5*time.Second, "an answer from the cache", func() bool {
		tx := c.sql.MustBeginTx(ctx, nil)
		defer tx.Rollback()
		tx.MustExec(`ALTER TABLE redirect_origins DISABLE TRIGGER redirect_origins_changed`)
		tx.MustExec(`INSERT INTO redirect_origins (merchant_id, environment, origin, created_at) VALUES ($1, 'sandbox', 'https://shop.example', now())`, c.scope.MerchantID)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		cached := status(t, page, "") == http.StatusBadRequest
		c.sql.MustExec(`ALTER TABLE redirect_origins ENABLE TRIGGER redirect_origins_changed`)
		if !cached {
			c.sql.MustExec(`DELETE FROM redirect_origins WHERE merchant_id = $1`, c.scope.MerchantID)
			waitFor(t, 2*time.Second, "the origin refused again", func() bool { return status(t, page, "") == http.StatusBadRequest })
		}
		return cached
	})
	// Any statement on the table notifies; the server reads the origins again.
	c.sql.MustExec(`UPDATE redirect_origins SET origin = origin WHERE merchant_id = $1`, c.scope.MerchantID)
	waitFor(t, 2*time.Second, "the allowed origin accepted", func() bool {
		return status(t, page, "") == http.StatusOK
	})
}

// The remembered link includes the merchant's brand: a brand written by
// another process (here an operator's SQL) reaches the page well within
// API_KEY_CACHE_TTL, through the trigger on merchant_brands.
func TestBrandChangesReachEveryServersCache(t *testing.T) {
	c := newCluster(t)
	_, addr := c.serveAt("server")
	ctx := context.Background()
	cust, err := c.svc.Customers.Create(ctx, c.scope, customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.svc.Funding.CreateForMicroDeposits(ctx, c.scope, funding.Input{CustomerID: cust.ID, RoutingNumber: "021000021", AccountNumber: "12345678"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := c.svc.Merchants.Environment(ctx, c.scope)
	if err != nil {
		t.Fatal(err)
	}
	page := "http://" + addr + "/bank-account/" + env.PublicKey + "/" + cust.ID + "/" + src.ID
	body := func() string {
		res, err := http.Get(page)
		if err != nil {
			return ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	waitFor(t, 20*time.Second, "the page, remembered without a brand", func() bool {
		return strings.Contains(body(), `id="payee-name">Acme<`)
	})
	c.sql.MustExec(`INSERT INTO merchant_brands (merchant_id, display_name, accent, updated_at) VALUES ($1, 'Acme Books', '#1a7f5a', now())`, c.scope.MerchantID)
	waitFor(t, 5*time.Second, "the brand on the page", func() bool {
		b := body()
		return strings.Contains(b, `id="payee-name">Acme Books<`) && strings.Contains(b, "/theme.css?v=1a7f5a")
	})
}
