package e2e_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/testing/camttest"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// ledgerAgrees reads every balance transaction and checks that the
// balances' available and pending are the sums of its lines; it answers
// the lines' sums by type/status.
func ledgerAgrees(t *testing.T, h *harness, key, after string) map[string]string {
	t.Helper()
	var available, pending int64
	sums := map[string]int64{}
	path := "/v2/balance-transactions?limit=2"
	for {
		page := th.WantOK(t, h.Get(path, key))
		data := page["data"].([]any)
		for _, l := range data {
			m := l.(map[string]any)
			c, ok := money.ParseCents(strings.TrimPrefix(m["amount"].(string), "-"))
			if !ok {
				t.Fatalf("%s: line amount %v", after, m["amount"])
			}
			if strings.HasPrefix(m["amount"].(string), "-") {
				c = -c
			}
			if m["status"] == "available" {
				available += c
			} else {
				pending += c
			}
			sums[m["type"].(string)+"/"+m["status"].(string)] += c
		}
		if page["has_more"] != true {
			break
		}
		path = "/v2/balance-transactions?limit=2&starting_after=" + data[len(data)-1].(map[string]any)["balance_transaction_id"].(string)
	}
	b := th.WantOK(t, h.Get("/v2/balances", key))
	if b["available"] != money.Format(available) || b["pending"] != money.Format(pending) {
		t.Errorf("%s: balances %s; the lines sum to available %s, pending %s", after, th.MustJSON(b), money.Format(available), money.Format(pending))
	}
	out := map[string]string{}
	for k, v := range sums {
		out[k] = money.Format(v)
	}
	return out
}

// TestADishonoredReturnInTheLedger: a debit's untimely return is
// dishonored; the ledger shows the debit, the return and the dishonor
// (pending until its file is written, then available), and the balances
// are the lines' sums at every step. The payment shows its trace number
// once sent.
func TestADishonoredReturnInTheLedger(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456801")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"20.00"`)))["payment_id"].(string)
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["trace_number"] != nil {
		t.Errorf("trace_number before the file = %v", p["trace_number"])
	}
	if got := ledgerAgrees(t, h, n.key, "a pending debit"); got["debit/pending"] != "20.00" {
		t.Errorf("lines = %v", got)
	}
	n.originate(t)
	trace := n.traceOf(t, 2000)
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["trace_number"] != trace {
		t.Errorf("trace_number once sent = %v, want %s", p["trace_number"], trace)
	}
	n.step(t, "2026-11-03")
	if _, res := n.step(t, "2026-11-09"); res.Dishonored != 1 {
		t.Fatalf("untimely return: %+v", res)
	}
	got := ledgerAgrees(t, h, n.key, "a dishonor not yet sent")
	if got["return/available"] != "-20.00" || got["dishonor/pending"] != "20.00" {
		t.Errorf("lines after the dishonor = %v", got)
	}
	h.Clock.Advance(7 * 24 * time.Hour)
	n.originate(t)
	got = ledgerAgrees(t, h, n.key, "the dishonor sent")
	if got["dishonor/available"] != "20.00" || got["dishonor/pending"] != "" {
		t.Errorf("lines after the dishonor left = %v", got)
	}
}

// TestTheSettlementsReportNamesTheStatementLine: a debit settled by the
// bank's statement is in the report of the statement's booking date with
// its trace number, metadata and the line it was reconciled with, in JSON
// and in CSV.
func TestTheSettlementsReportNamesTheStatementLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02
	_, key, _ := liveMerchant(t, h)
	dir := t.TempDir()
	folders := ach.Folders{Outbox: filepath.Join(dir, "outbox"), Inbox: filepath.Join(dir, "inbox")}
	cfg := achConfig(folders.Outbox)
	cfg.SettlementAccount = bankAccount
	o := h.originator(cfg).WithTransport(folders)
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", "000123458888")))["funding_source_id"].(string)
	body := strings.TrimSuffix(th.DebitBody(src, `"40.00"`), "}") + `,"metadata":{"invoice":"INV-7, \"final\""}}`
	debit := th.WantOK(t, h.Post("/v2/payments", key, body))["payment_id"].(string)
	delivered, err := o.Run(context.Background())
	if err != nil || len(delivered) != 1 {
		t.Fatalf("run = %v, %v", delivered, err)
	}
	statement := camttest.Document(camttest.Versions[len(camttest.Versions)-1],
		camttest.Statement{ID: "STMT-20261104", Other: bankAccount, Entries: []camttest.Entry{
			{Ref: "B1", Amount: "40.00", Booked: "2026-11-04", Info: "ACH " + delivered[0]}}})
	if _, err := o.Reconcile(context.Background(), "stmt.xml", statement); err != nil {
		t.Fatal(err)
	}
	p := th.WantOK(t, h.Get("/v2/payments/"+debit, key))
	rep := th.WantOK(t, h.Get("/v2/reports/settlements?date=2026-11-04", key))
	data := rep["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("report = %s", th.MustJSON(rep))
	}
	row := data[0].(map[string]any)
	line, _ := row["statement_line"].(map[string]any)
	if row["payment_id"] != debit || row["trace_number"] != p["trace_number"] || row["trace_number"] == nil ||
		row["metadata"].(map[string]any)["invoice"] != `INV-7, "final"` || line == nil ||
		line["statement_id"] != "STMT-20261104" || line["entry_ref"] != "B1" || line["amount"] != "40.00" || line["booking_date"] != "2026-11-04" {
		t.Errorf("report row = %s", th.MustJSON(row))
	}
	if other := th.WantOK(t, h.Get("/v2/reports/settlements?date=2026-11-03", key)); len(other["data"].([]any)) != 0 {
		t.Errorf("report of the day before = %s", th.MustJSON(other))
	}
	res := h.Do(th.Req{Method: http.MethodGet, Path: "/v2/reports/settlements?date=2026-11-04", Key: key,
		Header: map[string]string{"Accept": "text/csv"}})
	rows, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
	if res.Code != http.StatusOK || err != nil || len(rows) != 2 || rows[1][0] != debit || rows[1][2] != "40.00" ||
		rows[1][6] != p["trace_number"] || rows[1][9] != `{"invoice":"INV-7, \"final\""}` || rows[1][10] != "STMT-20261104" || rows[1][14] != "40.00" {
		t.Errorf("CSV = %q, %v", rows, err)
	}
}
