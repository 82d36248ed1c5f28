package app_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/app"
	"github.com/fundsource/fundsource/internal/testing/camttest"
)

// TestACHFileLifeCommands: `ach reconcile` applies a camt.053 statement
// once by its SHA-256 (the same bytes again change nothing), `ach
// reconciliation` lists its unexpected line as unmatched, `ach files`
// lists it received; a file that is no statement is refused, and the
// arguments are checked.
func TestACHFileLifeCommands(t *testing.T) {
	c := newCLI(t)
	c.env["ACH_ODFI_ROUTING"], c.env["ACH_COMPANY_NAME"], c.env["ACH_COMPANY_ID"] = "121042882", "FUNDSOURCE", "1234567890"
	c.env["ACH_OFFSET_ACCOUNT"], c.env["ACH_OUTBOX_DIR"], c.env["ACH_INBOX_DIR"] = "31337", t.TempDir(), t.TempDir()
	dir := t.TempDir()
	stmt := filepath.Join(dir, "stmt.xml")
	body := `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>S1</MsgId><CreDtTm>2026-11-05T22:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><Othr><Id>ODFI-121042882</Id></Othr></Id></Acct><Ntry><NtryRef>7</NtryRef><Amt Ccy="USD">99.01</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2026-11-05</Dt></BookgDt><BkTxCd></BkTxCd><AddtlNtryInf>FEE</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>`
	if err := os.WriteFile(stmt, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := c.json("ach", "reconcile", stmt); got["status"] != "applied" || got["duplicate"] != false || got["kind"] != "statement" {
		t.Fatalf("reconcile = %v", got)
	}
	if got := c.json("ach", "reconcile", "--json", stmt); got["duplicate"] != true {
		t.Errorf("reconcile again = %v", got)
	}
	r := c.json("ach", "reconciliation", "--date", "2026-11-05")
	unmatched := r["unmatched"].(map[string]any)["statement"].([]any)
	if len(unmatched) != 1 || unmatched[0].(map[string]any)["amount_cents"] != 9901.0 || len(r["matched"].([]any)) != 0 {
		t.Errorf("reconciliation = %v", r)
	}
	files := c.json("ach", "files")
	if in := files["inbound"].([]any); len(in) != 1 || in[0].(map[string]any)["name"] != stmt || len(files["files"].([]any)) != 0 {
		t.Errorf("files = %v", files)
	}
	text, _, err := c.run("ach", "reconciliation", "--date", "2026-11-05")
	if err != nil || !strings.Contains(text, "1 statement line(s) unmatched") || !strings.Contains(text, "99.01") {
		t.Errorf("reconciliation text = %q, %v", text, err)
	}
	nacha := filepath.Join(dir, "returns.ach")
	if err := os.WriteFile(nacha, []byte("101 121042882 2313801042611050600A094101\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.run("ach", "reconcile", nacha); err == nil || !strings.Contains(err.Error(), "camt.053") {
		t.Errorf("reconcile of a NACHA file: %v", err)
	}
	if _, _, err := c.run("ach", "reconciliation", "--date", "05/11/2026"); err == nil || errors.Is(err, app.ErrUsage) {
		t.Errorf("a bad date: %v", err)
	}
	for _, args := range [][]string{{"ach", "reconciliation"}, {"ach", "reconcile"}, {"ach", "files", "x"}, {"ach", "files", "--date", "2026-11-05"},
		{"ach", "files", "show"}, {"ach", "files", "show", "a.ach", "b.ach"}, {"ach", "files", "show", "a.ach", "--hex"}} {
		if _, _, err := c.run(args...); !errors.Is(err, app.ErrUsage) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"fundsource-20261105-none.ach"}, {"fundsource-20261105-none.ach", "--raw"}} {
		if _, _, err := c.run(append([]string{"ach", "files", "show"}, args...)...); err == nil || errors.Is(err, app.ErrUsage) ||
			!strings.Contains(err.Error(), "fundsource-20261105-none.ach") {
			t.Errorf("showing an unknown file %q: err = %v, want one naming it", args, err)
		}
	}
}

// TestACHReconcileReadsTheServersSettlementAccount: `ach reconcile`
// reads ACH_SETTLEMENT_ACCOUNT as the server does: a statement of
// another account is refused (exit 1) and recorded rejected, as the inbox
// records it; with the setting naming that account (an IBAN, grouped),
// another file of it is read, a pending line counted; the same statement
// in a third file is a duplicate.
func TestACHReconcileReadsTheServersSettlementAccount(t *testing.T) {
	c := newCLI(t)
	c.env["ACH_ODFI_ROUTING"], c.env["ACH_COMPANY_NAME"], c.env["ACH_COMPANY_ID"] = "121042882", "FUNDSOURCE", "1234567890"
	c.env["ACH_OFFSET_ACCOUNT"], c.env["ACH_OUTBOX_DIR"], c.env["ACH_INBOX_DIR"] = "31337", t.TempDir(), t.TempDir()
	dir := t.TempDir()
	write := func(name, msgID string) string {
		t.Helper()
		doc := camttest.Document("camt.053.001.05", camttest.Statement{ID: "NL-1", IBAN: "NL91ABNA0417164300", Entries: []camttest.Entry{
			{Ref: "B1", Amount: "12.00", Info: "WIRE"}, {Ref: "P1", Amount: "3.00", Status: "PDNG"}}})
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Replace(string(doc), "MSG-20261105-1", msgID, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	first := write("nl.xml", "M1")
	if _, _, err := c.run("ach", "reconcile", first); err == nil || !strings.Contains(err.Error(), "no statement of the settlement account") ||
		strings.Contains(err.Error(), "NL91ABNA0417164300") {
		t.Fatalf("reconcile of another account's statement: %v", err)
	}
	files := c.json("ach", "files")
	if in := files["inbound"].([]any); len(in) != 1 || in[0].(map[string]any)["status"] != "rejected" {
		t.Fatalf("files = %v", files)
	}

	c.env["ACH_SETTLEMENT_ACCOUNT"] = "NL91 ABNA 0417 1643 00"
	got := c.json("ach", "reconcile", write("nl-2.xml", "M2"))
	res, _ := got["result"].(map[string]any)
	if got["status"] != "applied" || res["statements"] != 1.0 || res["lines"] != 1.0 || res["pending"] != 1.0 || res["unmatched"] != 1.0 ||
		res["version"] != "camt.053.001.05" {
		t.Fatalf("reconcile with the settlement account set = %v", got)
	}
	text, _, err := c.run("ach", "reconcile", write("nl-3.xml", "M3"))
	if err != nil || !strings.Contains(text, "0 statement(s) read, 1 read before (duplicates)") {
		t.Errorf("the statement again = %q, %v", text, err)
	}
	r := c.json("ach", "reconciliation", "--date", "2026-11-05")
	if unmatched := r["unmatched"].(map[string]any)["statement"].([]any); len(unmatched) != 1 {
		t.Errorf("reconciliation = %v", r)
	}
}
