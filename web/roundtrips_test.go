package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestRoundTrips counts, at the wire, the round trips to PostgreSQL of the
// hot requests (a warm server: its key cached, its statements prepared). A
// source's GET is one, and so is the hosted page (its link's owner, with
// the merchant's name and redirect origins, comes from the key cache), and
// a test event. A
// creation, with an Idempotency-Key or without, is one
// statement: the claim of the key, the customer check, the account claim,
// the source, its events and deliveries, and the stored response. The
// micro-deposit writes and a payment are counted below, each with what it
// does.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	db, trips := pgtest.CountingDB(t)
	h := newHarnessOn(t, db)
	m := h.merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.customer(key)
	wantOK(t, h.post("/v2/webhooks", key, `{"url":"https://hooks.example.com/fundsource"}`)) // deliveries are written too
	n := 0
	account := func() string {
		n++
		return fmt.Sprintf("40000000%04d", n)
	}
	// measure sends a request made by mk twice, the first to prepare the
	// statements on the connection (sequential requests reuse the last
	// connection), and counts the second.
	measure := func(name string, most int, mk func() req) *response {
		t.Helper()
		h.do(mk())
		trips.Reset()
		res := h.do(mk())
		got := trips.Count()
		t.Logf("%s: %d round trips", name, got)
		if got > most {
			t.Errorf("%s: %d round trips, want at most %d:\n  %s", name, got, most, strings.Join(trips.Log(), "\n  "))
		}
		return res
	}
	create := func(idem string) func() req {
		return func() req {
			r := req{method: http.MethodPost, path: "/v2/funding-source", key: key, body: sourceBody(user, "021000021", account())}
			if idem != "" {
				r.header = map[string]string{"Idempotency-Key": idem + strconv.Itoa(n)}
			}
			return r
		}
	}
	wantOK(t, measure("creation with an Idempotency-Key", 1, create("create-")))
	wantOK(t, measure("creation without one", 1, create("")))
	firstResp := h.do(req{method: http.MethodPost, path: "/v2/funding-source", key: key, body: sourceBody(user, "021000021", "500000000001"),
		header: map[string]string{"Idempotency-Key": "again"}})
	first, firstBody := wantOK(t, firstResp), firstResp.Body
	// A replay finds the stored response in the creation's statement.
	replay := measure("replay", 1, func() req {
		return req{method: http.MethodPost, path: "/v2/funding-source", key: key, body: sourceBody(user, "021000021", "500000000001"),
			header: map[string]string{"Idempotency-Key": "again"}}
	})
	if got := wantOK(t, replay); got["funding_source_id"] != first["funding_source_id"] || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s", replay.Body)
	}
	// The response the statement stored is the one the handler sent.
	if !bytes.Equal(replay.Body, firstBody) {
		t.Errorf("stored response differs from the first:\n%s\n%s", replay.Body, firstBody)
	}
	if got, want := h.count("funding_sources"), 5; got != want || len(h.events("funding_source.created")) != want || h.count("webhook_deliveries") != want {
		t.Errorf("%d sources, %d created events, %d deliveries; want %d of each", got, len(h.events("funding_source.created")), h.count("webhook_deliveries"), want)
	}
	id := first["funding_source_id"].(string)
	wantOK(t, measure("GET funding source", 1, func() req { return req{method: http.MethodGet, path: "/v2/funding-source/" + id, key: key} }))
	// Initiating micro-deposits: BEGIN, the source locked (its row carries
	// its current verification), the deposits with their event, COMMIT.
	// (measure sends each kind of request twice: to two sources.)
	pending := []string{id, h.source(key, user, "500000000002")}
	next := func(ids *[]string) string {
		v := (*ids)[0]
		*ids = (*ids)[1:]
		return v
	}
	initiate := slices.Clone(pending)
	measure("initiating micro-deposits", 4, func() req {
		return req{method: http.MethodPost, path: "/v2/funding-source/initiate/verification", key: key, body: `{"funding_source_id":"` + next(&initiate) + `"}`}
	})
	// A wrong guess: BEGIN, the source, its deposits, the attempt, COMMIT.
	guessed := h.source(key, user, "500000000003")
	wantOK(t, h.post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+guessed+`"}`))
	wrong := wrongPair(h.amounts(key, guessed))
	wantError(t, measure("a wrong guess", 5, func() req {
		return req{method: http.MethodPost, path: "/v2/funding-source/verify", key: key, body: `{"funding_source_id":"` + guessed + `","amounts":` + wrong + `}`}
	}), 400, "verification_failed")
	// The right one adds the source's new status with its event.
	wantOK(t, measure("verification", 6, func() req {
		src := next(&pending)
		a := h.amounts(key, src)
		trips.Reset() // the sandbox read of the amounts is not the verification's
		return req{method: http.MethodPost, path: "/v2/funding-source/verify", key: key, body: `{"funding_source_id":"` + src + `","amounts":[` + a[0] + `,` + a[1] + `]}`}
	}))
	// A payment: one statement checks the source under a share lock and
	// inserts the payment (taking the Idempotency-Key claim): BEGIN, that,
	// the stored response, COMMIT; without a key, the statement alone.
	pay := func(idem string) func() req {
		return func() req {
			n++
			r := req{method: http.MethodPost, path: "/v2/payments", key: key, body: paymentBody(id, `"1.00"`, "debit")}
			if idem != "" {
				r.header = map[string]string{"Idempotency-Key": idem + strconv.Itoa(n)}
			}
			return r
		}
	}
	wantOK(t, measure("payment with an Idempotency-Key", 4, pay("pay-")))
	wantOK(t, measure("payment without one", 1, pay("")))
	page := measure("hosted page", 1, func() req {
		return req{method: http.MethodGet, path: "/bank-account/" + m.Sandbox.PublicKey + "/" + user + "/" + id + "?successUrl=http%3A%2F%2F127.0.0.1%2Fdone",
			header: map[string]string{"Accept": "text/html"}}
	})
	if page.Code != http.StatusOK || !strings.Contains(string(page.Body), "Acme") {
		t.Errorf("hosted page: %d\n%s", page.Code, page.Body)
	}
	// A test event: one statement checks the endpoint and writes the event
	// with its delivery. The answer is the event as committed, as the
	// events API shows it (no dispatcher runs here).
	test := measure("test event", 1, func() req { return req{method: http.MethodPost, path: "/v2/webhooks/test", key: key} })
	sent := wantOK(t, test)
	shown := h.get("/v2/events/"+sent["id"].(string), key)
	wantOK(t, shown)
	if !bytes.Equal(test.Body, shown.Body) {
		t.Errorf("test event answered\n%s\nthe events API shows\n%s", test.Body, shown.Body)
	}
	if ds, _ := sent["deliveries"].([]any); len(ds) != 1 || ds[0].(map[string]any)["status"] != "pending" {
		t.Errorf("test event's deliveries: %v", sent["deliveries"])
	}
}

// TestCreationWakesTheDispatchers: the creation's one statement queues its
// deliveries, and the dispatchers are notified after it commits, as after
// every other write of an event.
func TestCreationWakesTheDispatchers(t *testing.T) {
	t.Parallel()
	db, woken := pgtest.Woken(t, pgtest.URL(t))
	h := newHarnessOn(t, db)
	key := h.merchant("Acme").Sandbox.SecretKey
	user := h.customer(key)
	h.source(key, user, "700000000001")
	if woken(time.Second) {
		t.Error("a notification without a webhook endpoint (nothing queued)")
	}
	wantOK(t, h.post("/v2/webhooks", key, `{"url":"https://hooks.example.com/fundsource"}`))
	for woken(100 * time.Millisecond) {
	}
	h.source(key, user, "700000000002")
	if !woken(5 * time.Second) {
		t.Error("no notification after a creation that queued a delivery")
	}
}
