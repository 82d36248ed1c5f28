package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/testing/camttest"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// bankAccount is the settlement account of these tests, as the bank's
// statements name it in <Othr><Id>.
const bankAccount = "000123456782882"

// TestStatementSettlesTheFileAndItsPayments, for every camt.053 version:
// the service builds and delivers a file with an individual's debit
// (effective Tuesday 2026-11-03); the bank's statement, built in the
// version's layout, holds another account's statement that would match
// it, and ours with the debit pending on Tuesday and booked on Wednesday.
// Imported (through the inbox, or `ach reconcile`'s path, by turns), only
// the booked line matches: the file is settled, the payment processed
// (payment.success) with Wednesday as its settlement date and the
// windows that follow, and its debit at risk through the 60th day after
// Wednesday, not the day after. The same statement in another file is a
// duplicate: counted, nothing recorded.
func TestStatementSettlesTheFileAndItsPayments(t *testing.T) {
	t.Parallel()
	for i, version := range camttest.Versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t) // Monday 2026-11-02
			_, key, _ := liveMerchant(t, h)
			dir := t.TempDir()
			folders := ach.Folders{Outbox: filepath.Join(dir, "outbox"), Inbox: filepath.Join(dir, "inbox")}
			cfg := achConfig(folders.Outbox)
			cfg.SettlementAccount = bankAccount
			o := h.originator(cfg).WithTransport(folders)
			user := h.Customer(key)
			body := strings.TrimSuffix(th.SourceBody(user, "021000021", "000123458888"), "}") + `,"account_holder_type":"individual"}`
			src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, body))["funding_source_id"].(string)
			debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"40.00"`)))["payment_id"].(string)

			delivered, err := o.Run(context.Background())
			if err != nil || len(delivered) != 1 {
				t.Fatalf("run = %v, %v", delivered, err)
			}
			name := delivered[0]
			p := th.WantOK(t, h.Get("/v2/payments/"+debit, key))
			if p["status"] != "pending" || p["settlement_date"] != "2026-11-03" {
				t.Fatalf("payment once sent = %s", th.MustJSON(p))
			}
			balances(t, h, key, "40.00", "0.00")

			statement := camttest.Document(version,
				camttest.Statement{ID: "NL-20261104", IBAN: "NL91 ABNA 0417 1643 00", Entries: []camttest.Entry{
					{Ref: "NL1", Amount: "40.00", Booked: "2026-11-03"}}},
				camttest.Statement{ID: "STMT-20261104", Other: bankAccount, Entries: []camttest.Entry{
					{Ref: "P1", Amount: "40.00", Status: "PDNG", Booked: "2026-11-03"},
					{Ref: "I1", Amount: "40.00", Status: "INFO", Booked: "2026-11-03"},
					{Ref: "B1", Amount: "40.00", Booked: "2026-11-04", Info: "ACH " + name}}},
			)
			// The inbox and the operator's command take one path.
			var in ach.Inbound
			if i%2 == 0 {
				if err := os.MkdirAll(folders.Inbox, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(folders.Inbox, "stmt.xml"), statement, 0o600); err != nil {
					t.Fatal(err)
				}
				if n, err := o.Poll(context.Background()); err != nil || n != 1 {
					t.Fatalf("poll = %d, %v", n, err)
				}
				_, inbound, err := o.Files(context.Background(), 10)
				if err != nil || len(inbound) != 1 {
					t.Fatalf("inbound = %+v, %v", inbound, err)
				}
				in = inbound[0]
			} else if in, err = o.Reconcile(context.Background(), "stmt.xml", statement); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			var res ach.ReconcileResult
			if err := json.Unmarshal(in.Result, &res); err != nil || in.Status != ach.InboundApplied {
				t.Fatalf("inbound = %+v, %v", in, err)
			}
			if res.Version != version || res.Statements != 1 || res.OtherAccounts != 1 || res.Duplicates != 0 || res.Lines != 1 ||
				res.Pending != 1 || res.Information != 1 || res.Matched != 1 || res.Unmatched != 0 ||
				len(res.Settled) != 1 || res.Settled[0] != name || res.PaymentsSettled != 1 {
				t.Fatalf("result = %+v", res)
			}
			if f := fileStatus(t, o, name); f.Status != ach.StatusSettled {
				t.Fatalf("file = %+v", f)
			}
			p = th.WantOK(t, h.Get("/v2/payments/"+debit, key))
			want := map[string]any{"status": "processed", "effective_date": "2026-11-03", "settlement_date": "2026-11-04",
				"return_window_closes_at":              "2026-11-07T04:59:59Z", // end of Friday 11-06, EST
				"unauthorized_return_window_closes_at": "2027-01-04T04:59:59Z", // end of 2027-01-03, 60 days on
			}
			for k, w := range want {
				if p[k] != w {
					t.Errorf("payment.%s = %v, want %v", k, p[k], w)
				}
			}
			if ev := h.Events("payment.success"); len(ev) != 1 || ev[0]["settlement_date"] != "2026-11-04" {
				t.Errorf("payment.success events = %v", ev)
			}
			balances(t, h, key, "0.00", "40.00")
			h.Clock.Set(webtest.Eastern(2027, 1, 3, 23, 59))
			balances(t, h, key, "0.00", "40.00")
			h.Clock.Set(webtest.Eastern(2027, 1, 4, 0, 0))
			balances(t, h, key, "0.00", "0.00")

			// The same statement again, in a file of other bytes.
			again := []byte(strings.Replace(string(statement), "MSG-20261105-1", "MSG-20261105-2", 1))
			in, err = o.Reconcile(context.Background(), "stmt-again.xml", again)
			if err != nil || in.Duplicate {
				t.Fatalf("the statement again: %+v, %v", in, err)
			}
			res = ach.ReconcileResult{}
			if err := json.Unmarshal(in.Result, &res); err != nil || res.Duplicates != 1 || res.Statements != 0 || res.Lines != 0 {
				t.Errorf("the statement again = %+v, %v", res, err)
			}
			var lines int
			if err := h.SQL().Get(&lines, `SELECT count(*) FROM ach_statement_lines`); err != nil || lines != 1 {
				t.Errorf("statement lines = %d, %v; want 1", lines, err)
			}
			if ev := h.Events("payment.success"); len(ev) != 1 {
				t.Errorf("payment.success events = %d, want 1", len(ev))
			}
		})
	}
}

// TestStatementsThatCannotBeReadAreRefused: a statement of another
// account, a file without a statement, a pending line in an older
// version's layout written as a newer one's (read as no status), and a
// bad amount are rejected whole: nothing recorded, the file unsettled,
// the payment pending, the error saying why without the whole account.
func TestStatementsThatCannotBeReadAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, key, _ := liveMerchant(t, h)
	cfg := achConfig(t.TempDir())
	cfg.SettlementAccount = bankAccount
	o := h.originator(cfg)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000123458888")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"40.00"`)))["payment_id"].(string)
	delivered, err := o.Run(context.Background())
	if err != nil || len(delivered) != 1 {
		t.Fatalf("run = %v, %v", delivered, err)
	}
	booked := camttest.Entry{Ref: "B1", Amount: "40.00", Booked: "2026-11-03"}
	for name, c := range map[string]struct {
		doc  []byte
		says string
	}{
		"another account": {camttest.Document("camt.053.001.02", camttest.Statement{ID: "NL", IBAN: "NL91ABNA0417164300",
			Entries: []camttest.Entry{booked}}), "no statement of the settlement account"},
		"no statement": {camttest.Document("camt.053.001.08"), "no statement"},
		"a .02 status as .07 writes it": {camttest.Document("camt.053.001.02", camttest.Statement{ID: "S", Other: bankAccount,
			Entries: []camttest.Entry{{Ref: "B1", Amount: "40.00", Status: "PDNG", Layout: camttest.LayoutChoice, Booked: "2026-11-03"}}}),
			"entry 1 (NtryRef B1) has no status"},
		"a hex amount": {camttest.Document("camt.053.001.08", camttest.Statement{ID: "S", Other: bankAccount,
			Entries: []camttest.Entry{{Ref: "B1", Amount: "0x1.4p5", Booked: "2026-11-03"}}}), `entry 1 (NtryRef B1): amount "0x1.4p5"`},
	} {
		if _, err := o.Reconcile(context.Background(), name+".xml", c.doc); err == nil || !strings.Contains(err.Error(), c.says) ||
			strings.Contains(err.Error(), "NL91ABNA0417164300") {
			t.Errorf("%s: err = %v, want one saying %q", name, err, c.says)
		}
	}
	_, inbound, err := o.Files(context.Background(), 10)
	if err != nil || len(inbound) != 4 {
		t.Fatalf("inbound = %+v, %v", inbound, err)
	}
	for _, in := range inbound {
		if in.Status != ach.InboundRejected || in.Error == "" {
			t.Errorf("%s: %s (%s), want rejected with a reason", in.Name, in.Status, in.Error)
		}
	}
	var lines, statements int
	if err := h.SQL().Get(&lines, `SELECT count(*) FROM ach_statement_lines`); err != nil || lines != 0 {
		t.Errorf("statement lines = %d, %v", lines, err)
	}
	if err := h.SQL().Get(&statements, `SELECT count(*) FROM ach_statements`); err != nil || statements != 0 {
		t.Errorf("statements = %d, %v", statements, err)
	}
	if f := fileStatus(t, o, delivered[0]); f.Status != ach.StatusDelivered {
		t.Errorf("file = %+v", f)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, key)); p["status"] != "pending" {
		t.Errorf("payment = %s", th.MustJSON(p))
	}
}

func balances(t *testing.T, h *harness, key, pending, atRisk string) {
	t.Helper()
	b := th.WantOK(t, h.Get("/v2/balances", key))
	if b["pending_debits"] != pending || b["at_risk_debits"] != atRisk {
		t.Errorf("balances = %s, want pending_debits %s, at_risk_debits %s", th.MustJSON(b), pending, atRisk)
	}
}

// TestStatementReadBeforeTheUpgradeIsADuplicate: a statement the previous
// release read is known by its lines alone; read again, it is a
// duplicate and records nothing. So is a statement a file repeats.
func TestStatementReadBeforeTheUpgradeIsADuplicate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := achConfig(t.TempDir())
	cfg.SettlementAccount = bankAccount
	o := h.originator(cfg)
	digest := strings.Repeat("ab", 32)
	if _, err := h.SQL().Exec(`INSERT INTO ach_inbound_files (sha256, name, kind, status, received_at) VALUES ($1, 'old.xml', 'statement', 'applied', now())`, digest); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SQL().Exec(`INSERT INTO ach_statement_lines (statement_sha256, statement_id, entry_ref, booking_date, direction, amount_cents, info)
		VALUES ($1, 'STMT-OLD', 'B1', '2026-11-03', 'credit', 4000, '')`, digest); err != nil {
		t.Fatal(err)
	}
	doc := camttest.Document("camt.053.001.04", camttest.Statement{ID: "STMT-OLD", Other: bankAccount,
		Entries: []camttest.Entry{{Ref: "B1", Amount: "40.00", Booked: "2026-11-03"}}})
	in, err := o.Reconcile(context.Background(), "old-again.xml", doc)
	if err != nil {
		t.Fatal(err)
	}
	var res ach.ReconcileResult
	if err := json.Unmarshal(in.Result, &res); err != nil || res.Duplicates != 1 || res.Lines != 0 {
		t.Errorf("result = %+v, %v", res, err)
	}
	var lines int
	if err := h.SQL().Get(&lines, `SELECT count(*) FROM ach_statement_lines`); err != nil || lines != 1 {
		t.Errorf("statement lines = %d, %v; want 1", lines, err)
	}

	// A file that repeats a new statement: the second copy is a duplicate.
	twice := camttest.Statement{ID: "STMT-NEW", Other: bankAccount, Entries: []camttest.Entry{{Ref: "B2", Amount: "41.00", Booked: "2026-11-04"}}}
	if in, err = o.Reconcile(context.Background(), "twice.xml", camttest.Document("camt.053.001.07", twice, twice)); err != nil {
		t.Fatal(err)
	}
	res = ach.ReconcileResult{}
	if err := json.Unmarshal(in.Result, &res); err != nil || res.Statements != 1 || res.Duplicates != 1 || res.Lines != 1 {
		t.Errorf("a statement twice in a file = %+v, %v", res, err)
	}
	if err := h.SQL().Get(&lines, `SELECT count(*) FROM ach_statement_lines`); err != nil || lines != 2 {
		t.Errorf("statement lines = %d, %v; want 2", lines, err)
	}
}
