package api_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func idemPost(h *webtest.Harness, key, idem, body string) *th.Response {
	h.T.Helper()
	return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/customers", Key: key, Body: body,
		Header: map[string]string{"Idempotency-Key": idem}})
}

func TestIdempotencyReplayAndMismatch(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	key := a.Sandbox.SecretKey

	first := idemPost(h, key, "order-1", webtest.Ada)
	th.WantOK(t, first)
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("first response marked as replay")
	}
	again := idemPost(h, key, "order-1", webtest.Ada)
	if again.Code != first.Code || string(again.Body) != string(first.Body) {
		t.Fatalf("replay = %d %s, want %d %s", again.Code, again.Body, first.Code, first.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay lacks Idempotent-Replayed: true")
	}
	if again.Header.Get("X-Request-Id") == first.Header.Get("X-Request-Id") {
		t.Errorf("replay reused the first request id")
	}
	if n := h.Count("customers"); n != 1 {
		t.Fatalf("%d customers after replay, want 1", n)
	}

	// Same key, different body: refused, nothing created.
	other := `{"first_name":"Grace","last_name":"Hopper","email":"grace@example.com"}`
	th.WantError(t, idemPost(h, key, "order-1", other), http.StatusConflict, "idempotency_key_reused")
	// Keys are per merchant: another merchant's identical key is independent.
	th.WantOK(t, idemPost(h, b.Sandbox.SecretKey, "order-1", other))

	// A client error is stored and replayed as well (and the next key is free).
	bad := `{"first_name":"","last_name":"L","email":"x@example.com"}`
	r1 := idemPost(h, key, "order-2", bad)
	th.WantError(t, r1, http.StatusBadRequest, "invalid_request")
	r2 := idemPost(h, key, "order-2", bad)
	if r2.Code != 400 || string(r2.Body) != string(r1.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("4xx replay = %d %s", r2.Code, r2.Body)
	}

	// Key format.
	th.WantError(t, idemPost(h, key, strings.Repeat("k", 256), webtest.Ada), http.StatusBadRequest, "invalid_request")
	th.WantError(t, idemPost(h, key, "tab\there", webtest.Ada), http.StatusBadRequest, "invalid_request")

	if n := h.Count("customers"); n != 2 {
		t.Fatalf("%d customers, want 2 (one per merchant)", n)
	}
}

func TestIdempotencyKeysExpireAfter24Hours(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	first := th.WantOK(t, idemPost(h, key, "k", webtest.Ada))
	h.Clock.Advance(23 * time.Hour)
	if r := idemPost(h, key, "k", webtest.Ada); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay within 24 h not marked")
	}
	h.Clock.Advance(2 * time.Hour)
	second := th.WantOK(t, idemPost(h, key, "k", webtest.Ada))
	if second["user_id"] == first["user_id"] {
		t.Errorf("after 25 h the key still replayed the first response")
	}
	if n, err := h.DB.DeleteExpiredIdempotencyKeys(t.Context(), h.Clock.Now().Add(25*time.Hour)); err != nil || n != 1 {
		t.Errorf("sweep deleted %d (%v), want 1", n, err)
	}
}

func TestIdempotencyConcurrentRequestsCreateOneCustomer(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	const n = 20
	results := make([]*th.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = idemPost(h, key, "same-key", webtest.Ada)
		}()
	}
	close(start)
	wg.Wait()

	var ids = map[string]bool{}
	inProgress := 0
	for _, r := range results {
		switch r.Code {
		case http.StatusOK:
			ids[r.JSON(t)["user_id"].(string)] = true
		case http.StatusConflict:
			if c := r.ErrCode(t); c != "request_in_progress" {
				t.Errorf("409 with code %q, want request_in_progress", c)
			}
			inProgress++
		default:
			t.Errorf("unexpected %d %s", r.Code, r.Body)
		}
	}
	if len(ids) != 1 {
		t.Errorf("%d different user_ids among the 200s, want 1", len(ids))
	}
	if c := h.Count("customers"); c != 1 {
		t.Fatalf("%d customers created by %d concurrent requests with one key, want 1", c, n)
	}
	t.Logf("%d answered 200, %d answered request_in_progress", n-inProgress, inProgress)
}

// TestIdempotencyRecordsCannotTestGuesses: the stored hash of a creation is
// keyed, so a database reader who sees it beside the stored response (the
// bank and the last four digits) cannot find the account number by hashing
// guesses, as an unkeyed SHA-256 of the body allowed.
func TestIdempotencyRecordsCannotTestGuesses(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	body := th.SourceBody(user, "021000021", "4410072233")
	th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: body,
		Header: map[string]string{"Idempotency-Key": "create-1"}}))
	var stored []byte
	if err := h.SQL().Get(&stored, `SELECT request_hash FROM idempotency_keys WHERE key = 'create-1'`); err != nil {
		t.Fatal(err)
	}
	// The attack: knowing the customer, routing number and last four, try
	// the 10^6 middles; here the right guess is tried directly.
	unkeyed := sha256.Sum256([]byte("POST /v2/funding-source\n" + body))
	if bytes.Equal(stored, unkeyed[:]) {
		t.Fatal("the stored request hash is an unkeyed SHA-256 of the body: guesses can be tested against it")
	}
	mac := hmac.New(sha256.New, h.Cfg.IdempotencyKey)
	mac.Write([]byte("POST /v2/funding-source\n" + body))
	if !bytes.Equal(stored, mac.Sum(nil)) {
		t.Error("the stored hash is not the HMAC of the request under IDEMPOTENCY_KEY")
	}
}

// TestKeyedCreationUnderConcurrency: the creation takes its Idempotency-Key
// in the same statement that writes the source. Concurrent retries of one
// request create one source with one event and answer it or
// request_in_progress; concurrent requests with their own keys for one
// account number create one source, and the others' error answers are
// stored without any of their writes.
func TestKeyedCreationUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	ka, kb := a.Sandbox.SecretKey, b.Sandbox.SecretKey
	user, other, stranger := h.Customer(ka), h.Customer(ka), h.Customer(kb)
	create := func(key, idem, body string) *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: body,
			Header: map[string]string{"Idempotency-Key": idem}})
	}
	// One request, retried 16 times at once.
	ids := map[string]bool{}
	for _, r := range th.Concurrently(16, func(int) *th.Response {
		return create(ka, "retried", th.SourceBody(user, "021000021", "900000000001"))
	}) {
		switch {
		case r.Code == http.StatusOK:
			ids[r.JSON(t)["funding_source_id"].(string)] = true
		case r.Code == http.StatusConflict && r.ErrCode(t) == "request_in_progress":
		default:
			t.Errorf("retry: %d %s", r.Code, r.Body)
		}
	}
	if len(ids) != 1 || h.Count("funding_sources") != 1 || len(h.Events("funding_source.created")) != 1 {
		t.Fatalf("retries: %d ids answered, %d sources, %d events; want 1 of each", len(ids), h.Count("funding_sources"), len(h.Events("funding_source.created")))
	}

	// One account number, 24 requests with their own keys: the same
	// customer, another of the merchant's customers, another merchant's.
	bodies := []struct{ key, user string }{{ka, user}, {ka, other}, {kb, stranger}}
	results := th.Concurrently(24, func(i int) *th.Response {
		c := bodies[i%3]
		return create(c.key, "own-"+strconv.Itoa(i), th.SourceBody(c.user, "021000021", "900000000002"))
	})
	won := -1
	for i, r := range results {
		switch {
		case r.Code == http.StatusOK && won < 0:
			won = i
		case r.Code == http.StatusOK:
			t.Errorf("a second creation of one account number succeeded: %s", r.Body)
		case r.Code != http.StatusConflict:
			t.Errorf("own key: %d %s", r.Code, r.Body)
		}
	}
	if won < 0 || h.Count("funding_sources") != 2 || h.Count("account_numbers") != 2 || len(h.Events("funding_source.created")) != 2 {
		t.Fatalf("one account: winner %d, %d sources, %d claims, %d events; want one more of each", won,
			h.Count("funding_sources"), h.Count("account_numbers"), len(h.Events("funding_source.created")))
	}
	// Each loser's answer was stored: its retry replays it, even once the
	// number is free again, and writes nothing.
	winner := results[won].JSON(t)["funding_source_id"].(string)
	th.WantOK(t, h.Post("/v2/accounts/delete", bodies[won%3].key, `{"funding_source_id":"`+winner+`"}`))
	for i, r := range results {
		if i == won {
			continue
		}
		c, want := bodies[i%3], "account_in_use"
		if c.user == bodies[won%3].user {
			want = "duplicate_funding_source"
		}
		if r.ErrCode(t) != want {
			t.Errorf("request %d: %s, want %s", i, r.ErrCode(t), want)
		}
		again := create(c.key, "own-"+strconv.Itoa(i), th.SourceBody(c.user, "021000021", "900000000002"))
		if again.Header.Get("Idempotent-Replayed") != "true" || again.Code != r.Code || !bytes.Equal(again.Body, r.Body) {
			t.Errorf("request %d's retry: %d %s, want the stored %d %s", i, again.Code, again.Body, r.Code, r.Body)
		}
	}
	if h.Count("funding_sources") != 2 || h.Count("account_numbers") != 1 {
		t.Errorf("after the retries: %d sources, %d claims; want 2 and 1 (the first part's)", h.Count("funding_sources"), h.Count("account_numbers"))
	}
	// A failed creation's answer is kept too: an unknown customer.
	missing := create(ka, "missing", th.SourceBody("cus_missing", "021000021", "900000000003"))
	th.WantError(t, missing, http.StatusNotFound, "customer_not_found")
	if again := create(ka, "missing", th.SourceBody("cus_missing", "021000021", "900000000003")); again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("customer_not_found was not stored: %d %s", again.Code, again.Body)
	}
}
