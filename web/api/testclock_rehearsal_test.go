package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// rehearsal is one merchant's clock driven through the API alone, the
// advances run as the serve process's job runs them.
type rehearsal struct {
	t    *testing.T
	h    *webtest.Harness
	key  string
	id   string // the clock
	user string // its customer
	n    int    // sources made
}

// advance moves the clock to to over HTTP, runs the advance while the wall
// clock ticks (as it does while a real advance runs), and checks the clock
// answers ready at to.
func (r *rehearsal) advance(to time.Time) {
	r.t.Helper()
	a := th.WantOK(r.t, r.h.Post("/v2/sandbox/test-clocks/"+r.id+"/advance", r.key, `{"frozen_time":"`+rfc(to)+`"}`))
	if a["status"] != "advancing" {
		r.t.Fatalf("advance: %s", th.MustJSON(a))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
				r.h.Clock.Advance(time.Millisecond)
			}
		}
	})
	n, err := r.h.Svc.Advances.RunDue(context.Background())
	close(done)
	wg.Wait()
	if err != nil || n != 1 {
		r.t.Fatalf("RunDue = %d, %v; want the one advance", n, err)
	}
	if k := th.WantOK(r.t, r.h.Get("/v2/sandbox/test-clocks/"+r.id, r.key)); k["status"] != "ready" || k["frozen_time"] != rfc(to) {
		r.t.Fatalf("after the advance: %s", th.MustJSON(k))
	}
}

// source is a new source of the clock's customer on an account ending in
// digits no rule of the simulated bank answers unless suffix says so.
func (r *rehearsal) source(suffix string) string {
	r.t.Helper()
	r.n++
	return r.h.Source(r.key, r.user, fmt.Sprintf("5%03d%s", r.n, suffix))
}

func (r *rehearsal) verified() string {
	r.t.Helper()
	id := r.source("8888")
	th.WantOK(r.t, r.h.Initiate(r.key, id))
	a := r.h.Amounts(r.key, id)
	th.WantOK(r.t, r.h.Post("/v2/funding-source/verify", r.key, th.VerifyBody(id, "["+a[0]+","+a[1]+"]")))
	return id
}

func (r *rehearsal) debit(src, amount string) string {
	r.t.Helper()
	return th.WantOK(r.t, r.h.Post("/v2/payments", r.key, th.PaymentBody(src, `"`+amount+`"`, "debit")))["payment_id"].(string)
}

func (r *rehearsal) payment(id string) map[string]any {
	r.t.Helper()
	return th.WantOK(r.t, r.h.Get("/v2/payments/"+id, r.key))
}

// want checks a payment's status, failure code (nil for none), effective
// date (its settlement date too) and settled_at.
func (r *rehearsal) want(what, id, status string, code any, effective string, settled time.Time) {
	r.t.Helper()
	p := r.payment(id)
	if p["status"] != status || p["failure_code"] != code || p["effective_date"] != effective || p["settlement_date"] != effective || p["settled_at"] != rfc(settled) {
		r.t.Errorf("%s: %v %v effective %v settled %v; want %s %v effective %s settled %s", what,
			p["status"], p["failure_code"], p["effective_date"], p["settled_at"], status, code, effective, rfc(settled))
	}
}

// TestSixtyDaysOnAClockThroughTheAPI rehearses on one clock, through the API
// alone, what the Sandbox guide promises: each sandbox amount's return on
// the banking day the network delivers it, 13.91's R01 and its settled
// retry, a return that falls across a weekend, micro-deposits expiring
// after ten days and returned R03 by an account ending 0003, a monthly
// subscription falling due twice, and the day-60 edge (what is due the
// banking day after an advance's end waits for the next advance); then
// that every event of the clock is listed once, with the clock and its
// time, in the clock's order.
func TestSixtyDaysOnAClockThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	// Monday 2027-03-01, 09:00 Eastern (EST); no banking holiday until
	// Memorial Day.
	start := time.Date(2027, 3, 1, 14, 0, 0, 0, time.UTC)
	r := &rehearsal{t: t, h: h, key: key, id: newClock(t, h, key, start)}
	r.user = th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","test_clock":"`+r.id+`"}`))["user_id"].(string)
	eastern, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	midnight := func(d int) time.Time { return time.Date(2027, 3, d, 0, 0, 0, 0, eastern) }
	noon := func(m time.Month, d int) time.Time { return time.Date(2027, m, d, 12, 0, 0, 0, time.UTC) }

	// Monday: one debit per magic amount, each from its own source (a
	// return acts on its source), in the 09:45 window: effective Tuesday
	// 03-02, which is their settlement date.
	amounts := map[string]string{"13.01": "R01", "13.02": "R02", "13.03": "R03", "13.04": "R04", "13.16": "R16"}
	magic := map[string]string{}
	for a := range amounts {
		magic[a] = r.debit(r.verified(), a)
	}
	// R29 (corporate customer advises not authorized) answers only a
	// corporate entry: a business's debit (CCD); an individual's 13.29
	// (PPD) the network accepts, as it would.
	individual29 := r.debit(r.verified(), "13.29")
	person := r.user
	r.user = th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","business_name":"Analytical Engines","test_clock":"`+r.id+`"}`))["user_id"].(string)
	magic["13.29"], amounts["13.29"] = r.debit(r.verified(), "13.29"), "R29"
	r.user = person
	// R01 is a funds return, a debit's only: a credit of 13.01 is accepted.
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(r.verified(), `"13.01"`, "credit")))["payment_id"].(string)
	once := r.debit(r.verified(), "13.91")
	good := r.verified()
	fine := r.debit(good, "20.00")
	noAccount := r.source("0003")
	silent := r.source("7777")
	for _, id := range []string{noAccount, silent} {
		th.WantOK(t, h.Initiate(key, id))
	}
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, `{"funding_source_id":"`+good+`","amount":"9.99","interval":"monthly","start_date":"2027-03-08"}`))["subscription_id"].(string)

	// To Thursday 09:00: the returns of Tuesday's entries came with the
	// banking days the network delivers them (NACHA's two for R01 and
	// R02 …); the good debit settles at noon UTC two banking days after
	// its effective date.
	r.advance(time.Date(2027, 3, 4, 14, 0, 0, 0, time.UTC))
	for a, code := range amounts {
		p := r.payment(magic[a])
		if p["status"] != "failed" || p["failure_code"] != code || p["effective_date"] != "2027-03-02" {
			t.Errorf("a debit of %s: %v %v effective %v, want failed %s effective 2027-03-02", a, p["status"], p["failure_code"], p["effective_date"], code)
		}
	}
	r.want("an individual's 13.29", individual29, "processed", nil, "2027-03-02", noon(time.March, 4))
	r.want("a credit of 13.01", credit, "processed", nil, "2027-03-02", noon(time.March, 4))
	r.want("the 13.91 debit", once, "failed", "R01", "2027-03-02", midnight(4))
	r.want("the good debit", fine, "processed", nil, "2027-03-02", noon(time.March, 4))
	if v := th.WantOK(t, h.Get("/v2/funding-source/"+noAccount, key))["verification"].(map[string]any); v["status"] != "failed" {
		t.Errorf("the 0003 micro-deposits: %s, want failed by their R03", th.MustJSON(v))
	}

	// Thursday: the retry of 13.91, and a debit whose R01 falls across the
	// weekend: effective Friday 03-05, back on Tuesday 03-09.
	retry := th.WantOK(t, h.Post("/v2/payments/"+once+"/retry", key, ""))
	if retry["retry_of"] != once {
		t.Fatalf("retry: %s", th.MustJSON(retry))
	}
	weekend := r.debit(r.verified(), "13.01")

	// To Wednesday 04-28 (day 58), 09:00 EDT.
	r.advance(time.Date(2027, 4, 28, 13, 0, 0, 0, time.UTC))
	r.want("the retry", retry["payment_id"].(string), "processed", nil, "2027-03-05", noon(time.March, 9))
	r.want("the weekend debit", weekend, "failed", "R01", "2027-03-05", midnight(9))
	if v := th.WantOK(t, h.Get("/v2/funding-source/"+silent, key))["verification"].(map[string]any); v["status"] != "expired" {
		t.Errorf("the unanswered micro-deposits after 58 days: %s, want expired", th.MustJSON(v))
	}
	var expired time.Time
	if err := h.SQL().QueryRow(`SELECT finished_at FROM micro_deposits WHERE funding_source_id = $1`, silent).Scan(&expired); err != nil {
		t.Fatal(err)
	}
	if lo, hi := start.AddDate(0, 0, 10), start.AddDate(0, 0, 11); expired.Before(lo) || !expired.Before(hi) {
		t.Errorf("the micro-deposits expired at %s, want on the tenth day (%s)", expired, lo)
	}
	subs := th.WantOK(t, h.Get("/v2/payments?limit=100", key))["data"].([]any)
	var due []string
	for _, p := range subs {
		if p := p.(map[string]any); p["subscription_id"] == sub {
			if p["status"] != "processed" {
				t.Errorf("a subscription debit: %s", th.MustJSON(p))
			}
			due = append(due, p["effective_date"].(string))
		}
	}
	if len(due) != 2 {
		t.Errorf("the subscription's debits by day 58: effective %v, want two (03-08 and 04-08)", due)
	}

	// Wednesday's debit: effective Thursday 04-29, settled at noon UTC
	// Monday 05-03. An advance ending on day 60 (Friday 04-30) leaves it
	// pending; one more banking day settles it.
	last := r.debit(good, "30.00")
	day60 := start.AddDate(0, 0, 60)
	r.advance(day60)
	if p := r.payment(last); p["status"] != "pending" || p["effective_date"] != "2027-04-29" {
		t.Errorf("on day 60 the debit due Monday: %v effective %v, want pending effective 2027-04-29", p["status"], p["effective_date"])
	}
	r.advance(time.Date(2027, 5, 3, 13, 0, 0, 0, time.UTC))
	r.want("the debit due the banking day after day 60", last, "processed", nil, "2027-04-29", noon(time.May, 3))

	// Every event of the clock, listed once, with the clock and its time,
	// in the clock's order by creation (the list is newest first).
	var listed []map[string]any
	for after := ""; ; {
		page := th.WantOK(t, h.Get("/v2/events?limit=100"+after, key))
		for _, e := range page["data"].([]any) {
			listed = append(listed, e.(map[string]any))
		}
		if page["has_more"] != true {
			break
		}
		after = "&starting_after=" + listed[len(listed)-1]["id"].(string)
	}
	var onClock []string
	rows, err := h.SQL().Query(`SELECT id FROM events WHERE test_clock_id = $1`, r.id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		onClock = append(onClock, id)
	}
	seen := map[string]int{}
	var last2 time.Time
	types := map[string]int{}
	for i := len(listed) - 1; i >= 0; i-- {
		e := listed[i]
		if e["test_clock"] != r.id {
			continue
		}
		seen[e["id"].(string)]++
		types[e["type"].(string)]++
		at, err := time.Parse(time.RFC3339, fmt.Sprint(e["clock_time"]))
		if err != nil {
			t.Errorf("%s without a clock_time: %s", e["type"], th.MustJSON(e))
			continue
		}
		// Written on the wall clock, which is months before the clock.
		if created, _ := time.Parse(time.RFC3339, fmt.Sprint(e["created_at"])); created.After(h.Clock.Now()) {
			t.Errorf("%s created at %v, after the wall clock's %s", e["type"], e["created_at"], h.Clock.Now())
		}
		if at.Before(last2) {
			t.Errorf("%s at %s (created %v) listed after an event at %s", e["type"], at, e["created_at"], last2)
		}
		last2 = at
	}
	if len(seen) != len(onClock) || len(onClock) == 0 {
		t.Errorf("%d events of the clock listed, %d written", len(seen), len(onClock))
	}
	for _, id := range onClock {
		if seen[id] != 1 {
			t.Errorf("event %s of the clock listed %d times", id, seen[id])
		}
	}
	for typ, want := range map[string]int{"test_clock.ready": 4, "payment.failed": 8, "funding_source.verification_expired": 1, "funding_source.verification_failed": 1} {
		if types[typ] != want {
			t.Errorf("%d %s events on the clock, want %d (all: %v)", types[typ], typ, want, types)
		}
	}
	// The calendar's edges are the clock's, never the wall clock's: the
	// wall clock has moved on by only the milliseconds of the advances.
	if wall := h.Clock.Now(); wall.After(start) {
		t.Errorf("the wall clock reached %s", wall)
	}
}
