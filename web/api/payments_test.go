package api_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/payment"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestDebitsNeedAVerifiedSourceCreditsDoNot(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	unverified := h.Source(key, user, "111111111")
	verified := h.VerifiedSource(key, user, "222222222")

	r := h.Post("/v2/payments", key, th.PaymentBody(unverified, `"25.00"`, "debit"))
	th.WantError(t, r, http.StatusForbidden, "debit_not_allowed")
	if r.ErrParam(t) != "funding_source_id" {
		t.Errorf("param = %q", r.ErrParam(t))
	}
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(unverified, `"25.00"`, "credit")))
	if credit["status"] != "pending" || credit["direction"] != "credit" || credit["amount"] != "25.00" || credit["user_id"] != user {
		t.Errorf("credit = %v", credit)
	}
	debit := th.WantOK(t, h.Post("/v2/payments", key,
		`{"funding_source_id":"`+verified+`","amount":12.5,"direction":"debit","description":" Order 1001 "}`))
	if !strings.HasPrefix(debit["payment_id"].(string), "pay_") || debit["amount"] != "12.50" || debit["description"] != "Order 1001" ||
		debit["status"] != "pending" || debit["currency"] != "USD" || debit["settled_at"] != nil {
		t.Errorf("debit = %v", debit)
	}
	if h.Count("payments") != 2 {
		t.Errorf("payments stored = %d, want 2", h.Count("payments"))
	}

	// Removed: 409 for both directions; unknown: 404.
	th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+verified+`"}`))
	th.WantError(t, h.Post("/v2/payments", key, th.PaymentBody(verified, `1`, "credit")), http.StatusConflict, "funding_source_removed")
	th.WantError(t, h.Post("/v2/payments", key, th.PaymentBody("fs_nope", `1`, "credit")), http.StatusNotFound, "funding_source_not_found")
	// Another merchant's source is unknown here.
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Post("/v2/payments", other, th.PaymentBody(unverified, `1`, "credit")), http.StatusNotFound, "funding_source_not_found")
}

func TestPaymentInputIsChecked(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.PaymentMaxCents = 100000 }) // 1,000.00
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.Source(key, h.Customer(key), "111111111")
	for _, tc := range []struct{ body, code, param string }{
		{th.PaymentBody(src, `-1`, "credit"), "invalid_amount", "amount"},
		{th.PaymentBody(src, `"1000.01"`, "credit"), "invalid_amount", "amount"},
		{th.PaymentBody(src, `null`, "credit"), "invalid_amount", "amount"},
		{`{"funding_source_id":"` + src + `","direction":"credit"}`, "invalid_amount", "amount"},
		{th.PaymentBody(src, `1`, "refund"), "invalid_request", "direction"},
		{th.PaymentBody("", `1`, "credit"), "invalid_request", "funding_source_id"},
		{`{"funding_source_id":"` + src + `","amount":1,"direction":"credit","description":"` + strings.Repeat("x", 101) + `"}`, "invalid_request", "description"},
		{`{"funding_source_id":"` + src + `","amount":1,"direction":"credit","extra":1}`, "invalid_request", ""},
	} {
		r := h.Post("/v2/payments", key, tc.body)
		th.WantError(t, r, http.StatusBadRequest, tc.code)
		if tc.param != "" && r.ErrParam(t) != tc.param {
			t.Errorf("%s: param %q, want %q", tc.body, r.ErrParam(t), tc.param)
		}
	}
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1000.00"`, "credit")))
	if n := h.Count("payments"); n != 1 {
		t.Errorf("payments stored = %d, want 1 (refusals store nothing)", n)
	}
}

func TestSandboxPaymentsSettleWithEventsAndMagicAmountsFail(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // settle delay: 5 s
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.VerifiedSource(key, user, "222222222")
	ok1 := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	r01 := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"13.01"`, "debit")))["payment_id"].(string)
	r03 := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"13.03"`, "credit")))["payment_id"].(string)

	if n, err := h.Consequences.SettleDue(context.Background()); err != nil || n != 0 {
		t.Fatalf("before the delay: settled %d, %v", n, err)
	}
	h.Clock.Advance(5 * time.Second)
	if n, err := h.Consequences.SettleDue(context.Background()); err != nil || n != 3 {
		t.Fatalf("after the delay: settled %d, %v", n, err)
	}
	if n, _ := h.Consequences.SettleDue(context.Background()); n != 0 {
		t.Errorf("settled again: %d", n)
	}
	p := th.WantOK(t, h.Get("/v2/payments/"+ok1, key))
	if p["status"] != "processed" || p["failure_code"] != nil || p["settled_at"] != h.Clock.Now().Format(time.RFC3339) {
		t.Errorf("processed payment = %v", p)
	}
	for id, code := range map[string]string{r01: "R01", r03: "R03"} {
		p := th.WantOK(t, h.Get("/v2/payments/"+id, key))
		if p["status"] != "failed" || p["failure_code"] != code || p["failure_reason"] == nil {
			t.Errorf("magic amount payment = %v, want failed %s", p, code)
		}
	}
	success, failed := h.Events("payment.success"), h.Events("payment.failed")
	if len(success) != 1 || success[0]["payment_id"] != ok1 || success[0]["status"] != "processed" {
		t.Errorf("payment.success events = %v", success)
	}
	if len(failed) != 2 {
		t.Errorf("payment.failed events = %v", failed)
	}
	for _, ev := range append(success, failed...) {
		if strings.Contains(th.MustJSON(ev), "222222222") {
			t.Errorf("event carries the account number: %v", ev)
		}
	}
}

func TestPaymentsGetAndList(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	a, b := h.Source(key, user, "111111111"), h.Source(key, user, "333333333")
	var ids []string
	for i, src := range []string{a, b, a} {
		h.Clock.Advance(time.Second)
		ids = append(ids, th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.0`+string(rune('1'+i))+`"`, "credit")))["payment_id"].(string))
	}
	all := th.WantOK(t, h.Get("/v2/payments?limit=2", key))
	data := all["data"].([]any)
	if len(data) != 2 || all["has_more"] != true || data[0].(map[string]any)["payment_id"] != ids[2] {
		t.Fatalf("first page = %v", all)
	}
	next := th.WantOK(t, h.Get("/v2/payments?limit=2&starting_after="+ids[1], key))
	if d := next["data"].([]any); len(d) != 1 || d[0].(map[string]any)["payment_id"] != ids[0] || next["has_more"] != false {
		t.Errorf("second page = %v", next)
	}
	ofA := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+a, key))["data"].([]any)
	if len(ofA) != 2 {
		t.Errorf("payments of a = %d, want 2", len(ofA))
	}
	th.WantError(t, h.Get("/v2/payments/pay_nope", key), http.StatusNotFound, "payment_not_found")
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Get("/v2/payments/"+ids[0], other), http.StatusNotFound, "payment_not_found")
	th.WantError(t, h.Get("/v2/payments?starting_after=pay_nope", key), http.StatusBadRequest, "invalid_request")
}

func TestPaymentIdempotency(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.Source(key, h.Customer(key), "111111111")
	send := func(body string) *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: body,
			Header: map[string]string{"Idempotency-Key": "order-1001"}})
	}
	first := th.WantOK(t, send(th.PaymentBody(src, `"5.00"`, "credit")))
	again := send(th.PaymentBody(src, `"5.00"`, "credit"))
	if th.WantOK(t, again)["payment_id"] != first["payment_id"] || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %s", again.Body)
	}
	th.WantError(t, send(th.PaymentBody(src, `"6.00"`, "credit")), http.StatusConflict, "idempotency_key_reused")
	if n := h.Count("payments"); n != 1 {
		t.Errorf("payments = %d, want 1", n)
	}
}

func TestSubscriptionsDebitEachDueDateOnce(t *testing.T) {
	t.Parallel()
	// Two schedulers as two processes would run them: each with its own
	// connection pool to the one database.
	url := pgtest.URL(t)
	pools := make([]*postgres.DB, 2)
	for i := range pools {
		db, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		pools[i] = db
	}
	h := webtest.NewHarnessOn(t, pools[0], url) // Monday 2026-11-02 15:04 UTC = 10:04 US Eastern
	schedulers := []*payment.Service{h.Payments,
		payment.NewService(pools[1].Payments(), payment.Config{MaxAmount: h.Cfg.PaymentMaxCents, SettleDelay: h.Cfg.PaymentSettleDelay}, h.Clock.Now)}
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	unverified := h.Source(key, user, "111111111")
	src := h.VerifiedSource(key, user, "222222222")

	th.WantError(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(unverified, "9.99", "weekly", "2026-11-02")), http.StatusForbidden, "debit_not_allowed")
	for _, body := range []string{
		webtest.SubscriptionBody(src, "9.99", "daily", "2026-11-02"),
		webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-01"), // yesterday
		webtest.SubscriptionBody(src, "9.99", "weekly", "2026-13-01"),
		webtest.SubscriptionBody(src, "9.99", "weekly", "2028-01-01"), // more than a year ahead
		webtest.SubscriptionBody(src, "0", "weekly", "2026-11-02"),
	} {
		r := h.Post("/v2/subscriptions", key, body)
		if r.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400\n%s", body, r.Code, r.Body)
		}
	}
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-02")))
	id := sub["subscription_id"].(string)
	if sub["status"] != "active" || sub["next_payment_date"] != "2026-11-02" || sub["amount"] != "9.99" || sub["payment_count"] != float64(0) {
		t.Errorf("subscription = %v", sub)
	}
	if ev := h.Events("subscription.created"); len(ev) != 1 || ev[0]["subscription_id"] != id {
		t.Errorf("subscription.created events = %v", ev)
	}

	// Both schedulers at once: one debit per date.
	run := func() int {
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i := range counts {
			wg.Go(func() {
				n, err := schedulers[i].RunDue(context.Background())
				if err != nil {
					t.Errorf("RunDue: %v", err)
				}
				counts[i] = n
			})
		}
		wg.Wait()
		return counts[0] + counts[1]
	}
	if n := run(); n != 1 {
		t.Errorf("first run created %d debits, want 1", n)
	}
	if n := run(); n != 0 {
		t.Errorf("second run the same day created %d", n)
	}
	h.Clock.Advance(21 * 24 * time.Hour) // three more due dates, caught up at once
	if n := run(); n != 3 {
		t.Errorf("after three weeks: %d debits, want 3", n)
	}
	debits := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+src, key))["data"].([]any)
	seen := map[string]bool{}
	for _, d := range debits {
		p := d.(map[string]any)
		if p["direction"] != "debit" || p["subscription_id"] != id || p["amount"] != "9.99" {
			t.Errorf("subscription payment = %v", p)
		}
		seen[p["payment_id"].(string)] = true
	}
	if len(debits) != 4 || len(seen) != 4 {
		t.Errorf("debits = %d", len(debits))
	}
	if got := th.WantOK(t, h.Get("/v2/subscriptions/"+id, key)); got["next_payment_date"] != "2026-11-30" || got["payment_count"] != float64(4) {
		t.Errorf("after four debits: %v", got)
	}

	// Cancel: no more debits; canceling again is harmless.
	c := th.WantOK(t, h.Post("/v2/subscriptions/"+id+"/cancel", key, `{}`))
	if c["status"] != "canceled" || c["next_payment_date"] != nil || c["cancel_reason"] != "requested" || c["canceled_at"] == nil {
		t.Errorf("canceled = %v", c)
	}
	th.WantOK(t, h.Post("/v2/subscriptions/"+id+"/cancel", key, ``))
	h.Clock.Advance(7 * 24 * time.Hour)
	if n := run(); n != 0 {
		t.Errorf("a canceled subscription created %d debits", n)
	}
	th.WantError(t, h.Get("/v2/subscriptions/sub_nope", key), http.StatusNotFound, "subscription_not_found")
	if l := th.WantOK(t, h.Get("/v2/subscriptions?funding_source_id="+src, key))["data"].([]any); len(l) != 1 {
		t.Errorf("subscriptions of the source = %d", len(l))
	}
}

func TestSubscriptionOfARemovedSourceIsCanceled(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	id := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "5.00", "monthly", "2026-11-03")))["subscription_id"].(string)
	th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+src+`"}`))
	h.Clock.Advance(24 * time.Hour)
	if n, err := h.Payments.RunDue(context.Background()); err != nil || n != 0 {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+id, key)); s["status"] != "canceled" || s["cancel_reason"] != "funding_source_removed" {
		t.Errorf("subscription = %v", s)
	}
	th.WantError(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "5.00", "monthly", "2026-11-03")), http.StatusConflict, "funding_source_removed")
}

func TestMonthlyDueDatesKeepTheDayOrTheMonthsLast(t *testing.T) {
	t.Parallel()
	sub := payment.Subscription{Interval: payment.Monthly, StartDate: "2027-01-31"}
	want := []string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2028-02-29"}
	got := []string{payment.DueDate(sub, 0), payment.DueDate(sub, 1), payment.DueDate(sub, 2), payment.DueDate(sub, 3), payment.DueDate(sub, 13)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("due dates = %v, want %v", got, want)
	}
	weekly := payment.Subscription{Interval: payment.Weekly, StartDate: "2026-12-28"}
	if d := payment.DueDate(weekly, 1); d != "2027-01-04" {
		t.Errorf("weekly next = %s", d)
	}
}

// TestPaymentCreationUnderConcurrency: the payment's statement takes the
// Idempotency-Key claim, checks the source under a share lock and inserts
// the payment. Concurrent retries of one request make one payment; a
// removal racing with debits leaves no payment on a source removed before
// it committed, and each refused debit's answer is stored with no writes.
func TestPaymentCreationUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.VerifiedSource(key, user, "222233334444")
	send := func(idem, body string) *th.Response {
		return h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments", Key: key, Body: body,
			Header: map[string]string{"Idempotency-Key": idem}})
	}
	results := th.Concurrently(16, func(int) *th.Response { return send("order-7", th.PaymentBody(src, `"7.00"`, "debit")) })
	ids := map[any]bool{}
	for _, r := range results {
		switch {
		case r.Code == http.StatusOK:
			ids[r.JSON(t)["payment_id"]] = true
		case r.Code == http.StatusConflict && r.ErrCode(t) == "request_in_progress":
		default:
			t.Errorf("retry: %d %s", r.Code, r.Body)
		}
	}
	if len(ids) != 1 || h.Count("payments") != 1 {
		t.Fatalf("retries: %d payment ids answered, %d payments; want 1 and 1", len(ids), h.Count("payments"))
	}

	// Debits racing with the source's removal (the last request).
	results = th.Concurrently(13, func(i int) *th.Response {
		if i == 12 {
			return h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+src+`"}`)
		}
		return send("race-"+strconv.Itoa(i), th.PaymentBody(src, `"1.00"`, "debit"))
	})
	th.WantOK(t, results[12])
	results = results[:12]
	made := 0
	for i, r := range results {
		switch {
		case r.Code == http.StatusOK:
			made++
		case r.Code == http.StatusConflict && r.ErrCode(t) == "funding_source_removed":
			again := send("race-"+strconv.Itoa(i), th.PaymentBody(src, `"1.00"`, "debit"))
			if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, r.Body) {
				t.Errorf("a refused debit's retry: %d %s", again.Code, again.Body)
			}
		default:
			t.Errorf("racing debit: %d %s", r.Code, r.Body)
		}
	}
	var late int
	if err := h.SQL().Get(&late, `SELECT count(*) FROM payments p JOIN funding_sources f ON f.id = p.funding_source_id
		WHERE p.created_at > f.removed_at`); err != nil {
		t.Fatal(err)
	}
	if late != 0 || h.Count("payments") != 1+made {
		t.Errorf("%d payments after the removal; %d payments for %d accepted debits", late, h.Count("payments"), made)
	}
}
