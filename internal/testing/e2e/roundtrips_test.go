package e2e_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
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
	url := pgtest.URL(t)
	db, trips := pgtest.CountingOn(t, url)
	h := newHarnessOn(t, db, url)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	business := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"B","last_name":"L","email":"b@example.com","business_name":"B LLC"}`))["user_id"].(string)
	th.WantOK(t, h.Post("/v2/webhooks", key, `{"url":"https://hooks.example.com/fundsource"}`)) // deliveries are written too
	n := 0
	account := func() string {
		n++
		return fmt.Sprintf("40000000%04d", n)
	}
	// measure sends a request made by mk twice, the first to prepare the
	// statements on the connection (sequential requests reuse the last
	// connection), and counts the second.
	measure := func(name string, most int, mk func() th.Req) *th.Response {
		t.Helper()
		h.Do(mk())
		trips.Reset()
		res := h.Do(mk())
		got := trips.Count()
		t.Logf("%s: %d round trips", name, got)
		if got > most {
			t.Errorf("%s: %d round trips, want at most %d:\n  %s", name, got, most, strings.Join(trips.Log(), "\n  "))
		}
		return res
	}
	create := func(idem string) func() th.Req {
		return func() th.Req {
			r := th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: th.SourceBody(user, "021000021", account())}
			if idem != "" {
				r.Header = map[string]string{"Idempotency-Key": idem + strconv.Itoa(n)}
			}
			return r
		}
	}
	// A new account's creation checks that the account has no history in
	// that statement, with no read of its own.
	th.WantOK(t, measure("creation with an Idempotency-Key", 1, create("create-")))
	th.WantOK(t, measure("creation without one", 1, create("")))
	// A business customer's source is a company's by default, which the
	// creation checks on the customer's row it reads anyway; named in the
	// request, it is one statement too.
	holderNamed := measure("creation naming account_holder_type", 1, func() th.Req {
		return th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key,
			Body: strings.TrimSuffix(th.SourceBody(business, "021000021", account()), "}") + `,"account_holder_type":"company"}`}
	})
	if got := th.WantOK(t, holderNamed); got["account_holder_type"] != "company" {
		t.Errorf("named account_holder_type: %s", holderNamed.Body)
	}
	firstResp := h.Do(th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: th.SourceBody(user, "021000021", "500000000001"),
		Header: map[string]string{"Idempotency-Key": "again"}})
	first, firstBody := th.WantOK(t, firstResp), firstResp.Body
	// A replay finds the stored response in the creation's statement.
	replay := measure("replay", 1, func() th.Req {
		return th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: th.SourceBody(user, "021000021", "500000000001"),
			Header: map[string]string{"Idempotency-Key": "again"}}
	})
	if got := th.WantOK(t, replay); got["funding_source_id"] != first["funding_source_id"] || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s", replay.Body)
	}
	// The response the statement stored is the one the handler sent.
	if !bytes.Equal(replay.Body, firstBody) {
		t.Errorf("stored response differs from the first:\n%s\n%s", replay.Body, firstBody)
	}
	if got, want := h.Count("funding_sources"), 7; got != want || len(h.Events("funding_source.created")) != want || h.Count("webhook_deliveries") != want {
		t.Errorf("%d sources, %d created events, %d deliveries; want %d of each", got, len(h.Events("funding_source.created")), h.Count("webhook_deliveries"), want)
	}
	id := first["funding_source_id"].(string)
	th.WantOK(t, measure("GET funding source", 1, func() th.Req { return th.Req{Method: http.MethodGet, Path: "/v2/funding-source/" + id, Key: key} }))
	// Initiating micro-deposits: BEGIN, the source locked (its row carries
	// its current verification), the deposits with their event, COMMIT.
	// (measure sends each kind of request twice: to two sources.)
	pending := []string{id, h.Source(key, user, "500000000002")}
	next := func(ids *[]string) string {
		v := (*ids)[0]
		*ids = (*ids)[1:]
		return v
	}
	initiate := slices.Clone(pending)
	measure("initiating micro-deposits", 4, func() th.Req {
		return th.Req{Method: http.MethodPost, Path: "/v2/funding-source/initiate/verification", Key: key, Body: `{"funding_source_id":"` + next(&initiate) + `"}`}
	})
	// A wrong guess: BEGIN, the source, its deposits, the attempt, COMMIT.
	guessed := h.Source(key, user, "500000000003")
	th.WantOK(t, h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+guessed+`"}`))
	wrong := th.WrongPair(h.Amounts(key, guessed))
	th.WantError(t, measure("a wrong guess", 5, func() th.Req {
		return th.Req{Method: http.MethodPost, Path: "/v2/funding-source/verify", Key: key, Body: `{"funding_source_id":"` + guessed + `","amounts":` + wrong + `}`}
	}), 400, "verification_failed")
	// The right one adds the account's verified fact and the source's new
	// status with its event.
	th.WantOK(t, measure("verification", 7, func() th.Req {
		src := next(&pending)
		a := h.Amounts(key, src)
		trips.Reset() // the sandbox read of the amounts is not the verification's
		return th.Req{Method: http.MethodPost, Path: "/v2/funding-source/verify", Key: key, Body: `{"funding_source_id":"` + src + `","amounts":[` + a[0] + `,` + a[1] + `]}`}
	}))
	// A credit: one read of what the risk rules judge it by (the source's
	// age, check, day's debits and changes, the customer's screening, the
	// originator's return rates: indexed lookups in one statement), then
	// one statement checks the source under a share lock and inserts the
	// payment; with an Idempotency-Key: BEGIN, the key's claim, those two,
	// the stored response, COMMIT; without a key, the two alone. (A held
	// payment costs more: it is written in a transaction with its hold.)
	pay := func(idem, body string) func() th.Req {
		return func() th.Req {
			n++
			r := th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: body}
			if idem != "" {
				r.Header = map[string]string{"Idempotency-Key": idem + strconv.Itoa(n)}
			}
			return r
		}
	}
	th.WantOK(t, measure("credit with an Idempotency-Key", 6, pay("pay-", th.PaymentBody(id, `"1.00"`, "credit"))))
	th.WantOK(t, measure("credit without one", 2, pay("", th.PaymentBody(id, `"1.00"`, "credit"))))
	// A debit, like a credit, is the risk read and one statement: with its authorization,
	// the source under a share lock, the mandate with its mandate.created
	// event and delivery, and the payment; under a named (here a
	// subscription's recurring) mandate, the mandate locked instead.
	th.WantOK(t, measure("debit with an authorization", 2, pay("", th.DebitBody(id, `"1.00"`))))
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, `{"funding_source_id":"`+id+`","amount":"2.00","interval":"monthly","start_date":"2026-12-01","authorization":`+th.Authorization+`}`))
	named := `{"funding_source_id":"` + id + `","amount":"1.00","direction":"debit","mandate_id":"` + sub["mandate_id"].(string) + `"}`
	if got := th.WantOK(t, measure("debit under a mandate_id", 2, pay("", named))); got["mandate_id"] != sub["mandate_id"] {
		t.Errorf("debit under a mandate_id: %v", got)
	}
	page := measure("hosted page", 1, func() th.Req {
		return th.Req{Method: http.MethodGet, Path: "/bank-account/" + m.Sandbox.PublicKey + "/" + user + "/" + id + "?successUrl=http%3A%2F%2F127.0.0.1%2Fdone",
			Header: map[string]string{"Accept": "text/html"}}
	})
	if page.Code != http.StatusOK || !strings.Contains(string(page.Body), "Acme") {
		t.Errorf("hosted page: %d\n%s", page.Code, page.Body)
	}
	// A test event: one statement checks the endpoint and writes the event
	// with its delivery. The answer is the event as committed, as the
	// events API shows it (no dispatcher runs here).
	test := measure("test event", 1, func() th.Req { return th.Req{Method: http.MethodPost, Path: "/v2/webhooks/test", Key: key} })
	sent := th.WantOK(t, test)
	shown := h.Get("/v2/events/"+sent["id"].(string), key)
	th.WantOK(t, shown)
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
	url := pgtest.URL(t)
	db, woken := pgtest.Woken(t, url)
	h := newHarnessOn(t, db, url)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	h.Source(key, user, "700000000001")
	if woken(time.Second) {
		t.Error("a notification without a webhook endpoint (nothing queued)")
	}
	th.WantOK(t, h.Post("/v2/webhooks", key, `{"url":"https://hooks.example.com/fundsource"}`))
	for woken(100 * time.Millisecond) {
	}
	h.Source(key, user, "700000000002")
	if !woken(5 * time.Second) {
		t.Error("no notification after a creation that queued a delivery")
	}
}
