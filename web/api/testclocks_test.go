package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// newClock creates a sandbox test clock at frozen and returns its id.
func newClock(t *testing.T, h *webtest.Harness, key string, frozen time.Time) string {
	t.Helper()
	return th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"`+rfc(frozen)+`"}`))["test_clock_id"].(string)
}

func TestTestClockRoutesAnswerTheContractsCodes(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	frozen := h.Clock.Now().Add(48 * time.Hour).Truncate(time.Second)

	k := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"`+rfc(frozen)+`","name":"Renewals"}`))
	id, _ := k["test_clock_id"].(string)
	if !strings.HasPrefix(id, "clk_") || k["name"] != "Renewals" || k["frozen_time"] != rfc(frozen) || k["status"] != "ready" {
		t.Fatalf("created clock: %s", th.MustJSON(k))
	}
	if _, ok := k["advance_to"]; ok {
		t.Errorf("a ready clock shows advance_to: %s", th.MustJSON(k))
	}
	unnamed := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"`+rfc(frozen)+`"}`))
	if v, ok := unnamed["name"]; !ok || v != nil {
		t.Errorf("a clock without a name: name = %v (present %v), want null", v, ok)
	}

	bad := h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"`+rfc(h.Clock.Now().Add(-time.Second))+`"}`)
	th.WantError(t, bad, http.StatusBadRequest, "invalid_request")
	if bad.JSON(t)["error"].(map[string]any)["param"] != "frozen_time" {
		t.Errorf("past frozen_time: %s", bad.Body)
	}
	th.WantError(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"tomorrow"}`), http.StatusBadRequest, "invalid_request")

	list := th.WantOK(t, h.Get("/v2/sandbox/test-clocks?limit=1", key))
	if data := list["data"].([]any); len(data) != 1 || list["has_more"] != true {
		t.Errorf("list: %s", th.MustJSON(list))
	}
	if got := th.WantOK(t, h.Get("/v2/sandbox/test-clocks/"+id, key)); got["test_clock_id"] != id || got["status"] != "ready" {
		t.Errorf("get: %s", th.MustJSON(got))
	}

	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Get("/v2/sandbox/test-clocks/"+id, other), http.StatusNotFound, "test_clock_not_found")
	th.WantError(t, h.Post("/v2/sandbox/test-clocks/"+id+"/advance", other, `{"frozen_time":"`+rfc(frozen.Add(time.Hour))+`"}`),
		http.StatusNotFound, "test_clock_not_found")
	th.WantError(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/sandbox/test-clocks/" + id, Key: other}), http.StatusNotFound, "test_clock_not_found")

	advance := func(to time.Time) *th.Response {
		return h.Post("/v2/sandbox/test-clocks/"+id+"/advance", key, `{"frozen_time":"`+rfc(to)+`"}`)
	}
	th.WantError(t, advance(frozen), http.StatusBadRequest, "invalid_request")
	th.WantError(t, advance(frozen.Add(-time.Hour)), http.StatusBadRequest, "invalid_request")
	th.WantError(t, advance(frozen.AddDate(2, 0, 0).Add(time.Second)), http.StatusBadRequest, "invalid_request")
	adv := th.WantOK(t, advance(frozen.AddDate(2, 0, 0)))
	if adv["status"] != "advancing" || adv["frozen_time"] != rfc(frozen) || adv["advance_to"] != rfc(frozen.AddDate(2, 0, 0)) {
		t.Errorf("advance: %s", th.MustJSON(adv))
	}
	th.WantError(t, advance(frozen.Add(time.Hour)), http.StatusConflict, "conflict")
	th.WantError(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/sandbox/test-clocks/" + id, Key: key}), http.StatusConflict, "conflict")

	live := h.Production(m).SecretKey
	before := h.Count("test_clocks")
	for _, r := range []th.Req{
		{Method: http.MethodPost, Path: "/v2/sandbox/test-clocks", Body: `{"frozen_time":"` + rfc(frozen) + `"}`},
		{Method: http.MethodGet, Path: "/v2/sandbox/test-clocks"},
		{Method: http.MethodGet, Path: "/v2/sandbox/test-clocks/" + id},
		{Method: http.MethodPost, Path: "/v2/sandbox/test-clocks/" + id + "/advance", Body: `{"frozen_time":"` + rfc(frozen.Add(time.Hour)) + `"}`},
		{Method: http.MethodDelete, Path: "/v2/sandbox/test-clocks/" + id},
	} {
		r.Key = live
		th.WantError(t, h.Do(r), http.StatusForbidden, "permission_denied")
	}
	th.WantError(t, h.Post("/v2/customers", live, `{"first_name":"A","last_name":"B","email":"a@example.com","test_clock":"`+id+`"}`),
		http.StatusForbidden, "permission_denied")
	if after := h.Count("test_clocks"); after != before {
		t.Errorf("refused requests changed the clocks: %d, then %d", before, after)
	}
}

// TestARequestAboutAnObjectOnAClockRunsOnTheClock: a customer created on a
// clock lives at its time; a source of it (named in the body) and a change
// of it (named in the path) record their events on the clock, at its
// time; while the clock advances its objects can be read, not written; off
// the clock nothing carries a clock.
func TestARequestAboutAnObjectOnAClockRunsOnTheClock(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	wall := h.Customer(key) // before any clock: the key says none
	frozen := h.Clock.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
	id := newClock(t, h, key, frozen)
	rc := th.NewReceiver(t, nil)
	h.RegisterWebhook(key, rc.URL())

	cus := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","test_clock":"`+id+`"}`))
	user := cus["user_id"].(string)
	if cus["test_clock"] != id || cus["created_at"] != rfc(frozen) {
		t.Fatalf("customer on the clock: %s", th.MustJSON(cus))
	}
	// Its webhook leaves now, though the clock's time is a month ahead.
	h.Deliver()
	delivered := false
	for _, r := range rc.Requests() {
		if p := r.Payload(t); p["type"] == "customer.created" && p["test_clock"] == id && p["clock_time"] == rfc(frozen) {
			delivered = true
		}
	}
	if !delivered {
		t.Error("customer.created of the clock's customer was not delivered at once with test_clock and clock_time")
	}
	if w := th.WantOK(t, h.Get("/v2/customers/"+wall, key)); w["test_clock"] != nil {
		t.Errorf("a customer off the clock shows test_clock: %s", th.MustJSON(w))
	}
	theirs := newClock(t, h, h.Merchant("Other").Sandbox.SecretKey, frozen)
	th.WantError(t, h.Post("/v2/customers", key, `{"first_name":"A","last_name":"B","email":"a@example.com","test_clock":"`+theirs+`"}`),
		http.StatusNotFound, "test_clock_not_found")

	src := h.Source(key, user, "123456789")
	th.WantOK(t, h.Post("/v2/customers/"+wall, key, `{"email":"wall@example.com"}`))
	events := th.WantOK(t, h.Get("/v2/events?limit=100", key))["data"].([]any)
	seen := map[string]bool{}
	for _, e := range events {
		ev := e.(map[string]any)
		data, _ := ev["data"].(map[string]any)
		onClock := data["user_id"] == user
		if onClock {
			seen[ev["type"].(string)] = true
			if ev["test_clock"] != id || ev["clock_time"] != rfc(frozen) {
				t.Errorf("%s of the clock's customer: test_clock %v clock_time %v", ev["type"], ev["test_clock"], ev["clock_time"])
			}
		} else if _, ok := ev["test_clock"]; ok {
			t.Errorf("%s off the clock carries test_clock: %s", ev["type"], th.MustJSON(ev))
		}
	}
	if !seen["customer.created"] || !seen["funding_source.created"] {
		t.Errorf("events on the clock: %v, want customer.created and funding_source.created", seen)
	}

	to := frozen.Add(24 * time.Hour)
	th.WantOK(t, h.Post("/v2/sandbox/test-clocks/"+id+"/advance", key, `{"frozen_time":"`+rfc(to)+`"}`))
	th.WantOK(t, h.Get("/v2/customers/"+user, key))
	th.WantOK(t, h.Get("/v2/funding-source/"+src, key))
	th.WantError(t, h.Post("/v2/customers/"+user, key, `{"email":"new@example.com"}`), http.StatusConflict, "conflict")
	th.WantError(t, h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+src+`"}`), http.StatusConflict, "conflict")
	th.WantError(t, h.Post("/v2/customers", key, `{"first_name":"A","last_name":"B","email":"a@example.com","test_clock":"`+id+`"}`),
		http.StatusConflict, "conflict")
	th.WantOK(t, h.Post("/v2/customers/"+wall, key, `{"email":"wall2@example.com"}`)) // off the clock: not held

	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	if _, err := h.Svc.TestClocks.MarkReady(context.Background(), scope, id); err != nil {
		t.Fatal(err)
	}
	if k := th.WantOK(t, h.Get("/v2/sandbox/test-clocks/"+id, key)); k["status"] != "ready" || k["frozen_time"] != rfc(to) {
		t.Errorf("after the advance: %s", th.MustJSON(k))
	}
	if upd := th.WantOK(t, h.Post("/v2/customers/"+user, key, `{"email":"new@example.com"}`)); upd["test_clock"] != id {
		t.Errorf("the updated customer lost its clock: %s", th.MustJSON(upd))
	}
	var clock, at string
	if err := h.SQL().QueryRow(`SELECT test_clock_id, clock_time FROM events WHERE type = 'customer.updated' AND data->>'user_id' = $1`, user).Scan(&clock, &at); err != nil {
		t.Fatal(err)
	}
	if got, _ := time.Parse(time.RFC3339, at); clock != id || !got.Equal(to) {
		t.Errorf("customer.updated on the clock: %s at %s, want %s at %v", clock, at, id, to)
	}
	ready := h.Events("test_clock.ready")
	if len(ready) != 1 || ready[0]["test_clock_id"] != id || ready[0]["status"] != "ready" {
		t.Errorf("test_clock.ready: %v", ready)
	}
}

// TestDeletingAClockDeletesEverythingOnItAndNothingElse: the clock's
// customers, sources, payments and events go; another clock's, another
// merchant's and the wall clock's stay.
func TestDeletingAClockDeletesEverythingOnItAndNothingElse(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	otherKey := h.Merchant("Other").Sandbox.SecretKey
	frozen := h.Clock.Now().Add(time.Hour).Truncate(time.Second)
	doomed, kept, theirs := newClock(t, h, key, frozen), newClock(t, h, key, frozen), newClock(t, h, otherKey, frozen)
	onClock := func(key, clock, account string) (string, string) {
		user := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"L","email":"a@example.com","test_clock":"`+clock+`"}`))["user_id"].(string)
		src := h.VerifiedSource(key, user, account)
		th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"10.00"`, "debit")))
		return user, src
	}
	gone, goneSrc := onClock(key, doomed, "111111111")
	h.Source(key, gone, "111111112") // a second, unverified source
	keptUser, _ := onClock(key, kept, "222222222")
	theirUser, _ := onClock(otherKey, theirs, "333333333")
	wallUser := h.Customer(key)
	wallSrc := h.VerifiedSource(key, wallUser, "444444444")
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(wallSrc, `"10.00"`, "debit")))

	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := h.SQL().Get(&n, query, args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM payments WHERE customer_id = $1`, gone); n != 1 {
		t.Fatalf("the doomed customer has %d payments, want 1", n)
	}
	tables := []string{"customers", "funding_sources", "payments", "mandates", "account_numbers", "events"}
	before := map[string]int{}
	for _, tb := range tables {
		before[tb] = h.Count(tb)
	}

	del := th.WantOK(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/sandbox/test-clocks/" + doomed, Key: key}))
	if del["test_clock_id"] != doomed || del["deleted"] != true {
		t.Errorf("delete answered %s", th.MustJSON(del))
	}
	th.WantError(t, h.Get("/v2/sandbox/test-clocks/"+doomed, key), http.StatusNotFound, "test_clock_not_found")
	th.WantError(t, h.Get("/v2/customers/"+gone, key), http.StatusNotFound, "customer_not_found")
	th.WantError(t, h.Get("/v2/funding-source/"+goneSrc, key), http.StatusNotFound, "funding_source_not_found")
	th.WantError(t, h.Do(th.Req{Method: http.MethodDelete, Path: "/v2/sandbox/test-clocks/" + doomed, Key: key}), http.StatusNotFound, "test_clock_not_found")

	for _, c := range []struct {
		query string
		want  int
	}{
		{`SELECT count(*) FROM customers WHERE id = $1`, 0},
		{`SELECT count(*) FROM funding_sources WHERE customer_id = $1`, 0},
		{`SELECT count(*) FROM payments WHERE customer_id = $1`, 0},
		{`SELECT count(*) FROM mandates WHERE customer_id = $1`, 0},
		{`SELECT count(*) FROM account_numbers WHERE customer_id = $1`, 0},
		{`SELECT count(*) FROM events WHERE data->>'user_id' = $1`, 0},
	} {
		if n := count(c.query, gone); n != c.want {
			t.Errorf("%s: %d, want %d", c.query, n, c.want)
		}
	}
	// Two sources of the doomed customer, one payment and its mandate,
	// the customer; nothing else.
	for tb, want := range map[string]int{"customers": 1, "funding_sources": 2, "payments": 1, "mandates": 1, "account_numbers": 2} {
		if got := before[tb] - h.Count(tb); got != want {
			t.Errorf("%s: %d rows deleted, want %d", tb, got, want)
		}
	}
	for _, u := range []struct{ key, user string }{{key, keptUser}, {otherKey, theirUser}, {key, wallUser}} {
		th.WantOK(t, h.Get("/v2/customers/"+u.user, u.key))
		if n := count(`SELECT count(*) FROM payments WHERE customer_id = $1`, u.user); n != 1 {
			t.Errorf("customer %s kept %d payments, want 1", u.user, n)
		}
	}
	if n := count(`SELECT count(*) FROM test_clocks`); n != 2 {
		t.Errorf("%d clocks left, want 2", n)
	}
}

// TestOnlyAMerchantWithClocksPaysForThem: a request of a merchant without
// a clock costs what it did (its key, cached, says so), one of a merchant
// with clocks one query more, which finds the clock of its objects.
func TestOnlyAMerchantWithClocksPaysForThem(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db, trips := pgtest.CountingOn(t, url)
	h := webtest.NewHarnessOn(t, db, url)
	plain, clocked := h.Merchant("Plain").Sandbox.SecretKey, h.Merchant("Clocked").Sandbox.SecretKey
	plainUser := h.Customer(plain)
	clk := newClock(t, h, clocked, h.Clock.Now().Add(time.Hour))
	clockUser := th.WantOK(t, h.Post("/v2/customers", clocked, `{"first_name":"A","last_name":"B","email":"a@example.com","test_clock":"`+clk+`"}`))["user_id"].(string)
	wallUser := h.Customer(clocked)
	measure := func(key, user string) int {
		t.Helper()
		th.WantOK(t, h.Get("/v2/customers/"+user, key)) // caches the key, prepares the statements
		trips.Reset()
		th.WantOK(t, h.Get("/v2/customers/"+user, key))
		return trips.Count()
	}
	base := measure(plain, plainUser)
	if got := measure(clocked, clockUser); got != base+1 {
		t.Errorf("a customer on a clock: %d round trips, want %d (one more than without clocks)", got, base+1)
	}
	if got := measure(clocked, wallUser); got != base+1 {
		t.Errorf("a wall-clock customer of a merchant with clocks: %d round trips, want %d", got, base+1)
	}
	if got := measure(plain, plainUser); got != base {
		t.Errorf("without clocks, after another merchant's: %d round trips, want %d", got, base)
	}
}
