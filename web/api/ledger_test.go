package api_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// metadataOf is a metadata object of n keys k0…, each valued v.
func metadataOf(n int, v string) string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestMetadataAtItsLimits: sources and payments take metadata of 20 keys
// (a payment's of 500 characters each); metadata over a limit (21 keys on
// a customer, a source or a payment, a key of 41 characters on a
// subscription) or with a value that is not a string is invalid_request
// on metadata and writes nothing. An update merges, "" removes, and
// payments are listed by metadata. Each limit's edges are tested beside
// it, in the metadata package.
func TestMetadataAtItsLimits(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	customer := func(meta string) *th.Response {
		return h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"L","email":"ada@example.com","metadata":`+meta+`}`)
	}
	before := h.Count("customers")
	for _, meta := range []string{metadataOf(21, "v"), `{"k":1}`} {
		r := customer(meta)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if r.ErrParam(t) != "metadata" && !strings.Contains(meta, ":1") {
			t.Errorf("metadata %.40s…: param %q", meta, r.ErrParam(t))
		}
	}
	if h.Count("customers") != before {
		t.Errorf("a refused customer was stored")
	}
	c := th.WantOK(t, customer(`{"crm":"42","drop":"x"}`))
	id := c["user_id"].(string)
	got := th.WantOK(t, h.Post("/v2/customers/"+id, key, `{"metadata":{"drop":"","tier":"gold"}}`))
	if m := got["metadata"].(map[string]any); len(m) != 2 || m["crm"] != "42" || m["tier"] != "gold" {
		t.Errorf("customer metadata after update = %v", m)
	}
	if m := th.WantOK(t, h.Get("/v2/customers/"+id, key))["metadata"].(map[string]any); m["tier"] != "gold" {
		t.Errorf("customer read back = %v", m)
	}
	if ev := h.Events("customer.updated"); len(ev) != 1 || ev[0]["metadata"].(map[string]any)["tier"] != "gold" {
		t.Errorf("customer.updated = %v", ev)
	}

	// Funding sources: at creation (nothing written over a limit) and by update.
	sourceWith := func(account, meta string) *th.Response {
		return h.Post("/v2/funding-source", key, strings.TrimSuffix(th.SourceBody(id, "021000021", account), "}")+`,"metadata":`+meta+`}`)
	}
	sources := h.Count("funding_sources")
	th.WantError(t, sourceWith("333333333", metadataOf(21, "v")), http.StatusBadRequest, "invalid_request")
	if h.Count("funding_sources") != sources {
		t.Error("a source with 21 metadata keys was stored")
	}
	fs := th.WantOK(t, sourceWith("333333333", metadataOf(20, "v")))
	fsID := fs["funding_source_id"].(string)
	if m := fs["metadata"].(map[string]any); len(m) != 20 {
		t.Errorf("source metadata = %v", m)
	}
	th.WantError(t, h.Post("/v2/funding-source/"+fsID, key, `{"metadata":{"one_more":"x"}}`), http.StatusBadRequest, "invalid_request")
	got = th.WantOK(t, h.Post("/v2/funding-source/"+fsID, key, `{"metadata":{"k0":"","one_more":"x"}}`))
	if m := got["metadata"].(map[string]any); len(m) != 20 || m["one_more"] != "x" || m["k0"] != nil {
		t.Errorf("source metadata after update = %v", m)
	}
	if m := th.WantOK(t, h.Get("/v2/funding-source/"+fsID, key))["metadata"].(map[string]any); m["one_more"] != "x" {
		t.Errorf("source read back = %v", m)
	}
	if ev := h.Events("funding_source.updated"); len(ev) != 1 || ev[0]["metadata"].(map[string]any)["one_more"] != "x" {
		t.Errorf("funding_source.updated = %v", ev)
	}

	src := h.VerifiedSource(key, id, "222222222")
	pay := func(amount, meta string) *th.Response {
		return h.Post("/v2/payments", key, `{"funding_source_id":"`+src+`","amount":"`+amount+`","direction":"credit","metadata":`+meta+`}`)
	}
	p := th.WantOK(t, pay("1.00", `{"order":"A-1"}`))
	th.WantOK(t, pay("2.00", `{"order":"A-2"}`))
	th.WantOK(t, pay("3.00", metadataOf(20, strings.Repeat("v", 500))))
	if p["metadata"].(map[string]any)["order"] != "A-1" || p["trace_number"] != nil {
		t.Errorf("payment = %v", p)
	}
	n := h.Count("payments")
	th.WantError(t, pay("4.00", metadataOf(21, "v")), http.StatusBadRequest, "invalid_request")
	if h.Count("payments") != n {
		t.Error("a payment with 21 metadata keys was stored")
	}
	list := th.WantOK(t, h.Get("/v2/payments?metadata[order]=A-1", key))["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["payment_id"] != p["payment_id"] {
		t.Errorf("payments by metadata = %v", list)
	}
	if all := th.WantOK(t, h.Get("/v2/payments", key))["data"].([]any); len(all) != 3 {
		t.Errorf("payments = %d, want 3", len(all))
	}
	pid := p["payment_id"].(string)
	up := th.WantOK(t, h.Post("/v2/payments/"+pid, key, `{"metadata":{"order":"","note":"n"}}`))
	if m := up["metadata"].(map[string]any); len(m) != 1 || m["note"] != "n" {
		t.Errorf("payment metadata after update = %v", m)
	}
	if list := th.WantOK(t, h.Get("/v2/payments?metadata[order]=A-1", key))["data"].([]any); len(list) != 0 {
		t.Errorf("payments by a removed key = %v", list)
	}
	th.WantError(t, h.Post("/v2/payments/"+pid, key, `{"metadata":`+metadataOf(20, "v")+`}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/payments/pay_nothere", key, `{"metadata":{"a":"b"}}`), http.StatusNotFound, "payment_not_found")

	start := h.Clock.Now().AddDate(0, 0, 3).Format(time.DateOnly)
	subBody := strings.TrimSuffix(webtest.SubscriptionBody(src, "9.99", "monthly", start), "}")
	th.WantError(t, h.Post("/v2/subscriptions", key, subBody+`,"metadata":{"`+strings.Repeat("k", 41)+`":"v"}}`), http.StatusBadRequest, "invalid_request")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, subBody+`,"metadata":{"plan":"basic"}}`))
	subID := sub["subscription_id"].(string)
	if ev := h.Events("subscription.created"); len(ev) != 1 || ev[0]["metadata"].(map[string]any)["plan"] != "basic" {
		t.Errorf("subscription.created = %v", ev)
	}
	up = th.WantOK(t, h.Post("/v2/subscriptions/"+subID, key, `{"metadata":{"plan":"pro"}}`))
	if m := th.WantOK(t, h.Get("/v2/subscriptions/"+subID, key))["metadata"].(map[string]any); m["plan"] != "pro" || up["metadata"].(map[string]any)["plan"] != "pro" {
		t.Errorf("subscription metadata after update = %v", m)
	}
}

// TestRefundsOverHTTP: a refund of a processed debit is a credit naming
// it, replayed under its Idempotency-Key; one over the rest is 409
// refund_not_allowed; payment.refunded fires; the ledger and the
// balances agree; the day's settlements report lists the debit in JSON
// and CSV, and a bad date is invalid_request.
func TestRefundsOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	src := h.VerifiedSource(key, user, "222222222")
	debit := th.WantOK(t, h.Post("/v2/payments", key,
		`{"funding_source_id":"`+src+`","amount":"25.00","direction":"debit","metadata":{"order":"A, \"1\""}}`))["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+debit+"/refund", key, `{}`), http.StatusConflict, "refund_not_allowed")
	h.Clock.Advance(5 * time.Second)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := th.Req{Method: http.MethodPost, Path: "/v2/payments/" + debit + "/refund", Key: key, Body: `{"amount":"10.00","reason":"damaged"}`,
		Header: map[string]string{"Idempotency-Key": "refund-1"}}
	first := h.Do(req)
	r := th.WantOK(t, first)
	// A refund goes by method auto: instant here (the sandbox's rail
	// reaches the bank), sent once the key's transaction committed.
	if r["refund_of"] != debit || r["direction"] != "credit" || r["amount"] != "10.00" || r["funding_source_id"] != src || r["refund_reason"] != "damaged" ||
		r["method"] != "auto" || r["rail"] == "ach" || r["status"] != "processed" {
		t.Errorf("refund = %v", r)
	}
	again := h.Do(req)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Errorf("replay = %s %v", again.Body, again.Header)
	}
	over := h.Post("/v2/payments/"+debit+"/refund", key, `{"amount":"15.01"}`)
	th.WantError(t, over, http.StatusConflict, "refund_not_allowed")
	if e := over.JSON(t)["error"].(map[string]any); e["reason"] != "over_remaining_amount" || e["remaining"] != "15.00" {
		t.Errorf("over the rest: %v", e)
	}
	if d := th.WantOK(t, h.Get("/v2/payments/"+debit, key)); d["refunded_amount"] != "10.00" {
		t.Errorf("debit's refunded_amount = %v", d["refunded_amount"])
	}
	if ev := h.Events("payment.refunded"); len(ev) != 1 || ev[0]["payment_id"] != debit || ev[0]["refunded_amount"] != "10.00" {
		t.Errorf("payment.refunded = %v", ev)
	}

	lines := th.WantOK(t, h.Get("/v2/balance-transactions?limit=100", key))["data"].([]any)
	types := map[string]string{}
	for _, l := range lines {
		m := l.(map[string]any)
		types[m["type"].(string)] = m["amount"].(string) + "/" + m["status"].(string)
	}
	if types["debit"] != "25.00/available" || types["refund"] != "-10.00/available" || len(lines) != 2 {
		t.Errorf("balance transactions = %v", lines)
	}
	b := th.WantOK(t, h.Get("/v2/balances", key))
	if b["available"] != "15.00" || b["pending"] != "0.00" {
		t.Errorf("balances = %v", b)
	}

	day := h.Clock.Now().In(time.FixedZone("ET", -5*3600)).Format(time.DateOnly)
	rep := th.WantOK(t, h.Get("/v2/reports/settlements?date="+day, key))
	data := rep["data"].([]any)
	if rep["date"] != day || len(data) != 1 || data[0].(map[string]any)["payment_id"] != debit || data[0].(map[string]any)["statement_line"] != nil {
		t.Errorf("report of %s = %v", day, rep)
	}
	res := h.Do(th.Req{Method: http.MethodGet, Path: "/v2/reports/settlements?date=" + day, Key: key, Header: map[string]string{"Accept": "text/csv"}})
	if res.Code != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV report: %d %s", res.Code, res.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "payment_id" || rows[1][0] != debit || rows[1][2] != "25.00" || rows[1][9] != `{"order":"A, \"1\""}` {
		t.Errorf("CSV report = %q, %v", rows, err)
	}
	for _, bad := range []string{"", "2026-02-30", "12/01/2026", "2026-1-2"} {
		r := h.Get("/v2/reports/settlements?date="+bad, key)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if r.ErrParam(t) != "date" {
			t.Errorf("date %q: param %q", bad, r.ErrParam(t))
		}
	}
}
