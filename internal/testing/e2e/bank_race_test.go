package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/lab/achnet"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// countingFolders is the folder transport counting deliveries by name.
type countingFolders struct {
	ach.Folders
	mu    sync.Mutex
	count map[string]int
}

func (c *countingFolders) Deliver(ctx context.Context, name string, data []byte) error {
	c.mu.Lock()
	c.count[name]++
	c.mu.Unlock()
	return c.Folders.Deliver(ctx, name, data)
}

// secondProcess is an originator on a database pool of its own, as
// another serve process has.
func secondProcess(t *testing.T, h *harness, t2 ach.Transport) *ach.Originator {
	t.Helper()
	db, err := postgres.Open(context.Background(), h.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetAuditKey(h.Cfg.AuditKey)
	return ach.NewOriginator(achConfig(t.TempDir()), db.ACH(), h.Funding, h.Payments, h.Svc.Consequences, h.Clock.Now).WithTransport(t2)
}

// fourEach calls f four times on each originator, all at once, and fails
// t on the first error.
func fourEach(t *testing.T, f func(o *ach.Originator) error, originators ...*ach.Originator) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(originators))
	for range 4 {
		for _, o := range originators {
			wg.Go(func() { errs <- f(o) })
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// run is one origination run.
func run(o *ach.Originator) error { _, err := o.Run(context.Background()); return err }

// TestTwoProcessesDeliverAndApplyOnce: two originators on their own
// database pools run at once, over and over, against one outbox and one
// inbox: every file is delivered exactly once, and every inbound file
// (returns and statements) is applied exactly once.
func TestTwoProcessesDeliverAndApplyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, key, _ := liveMerchant(t, h)
	dir := t.TempDir()
	folders := &countingFolders{Folders: ach.Folders{Outbox: filepath.Join(dir, "outbox"), Inbox: filepath.Join(dir, "inbox")}, count: map[string]int{}}
	a := h.originator(achConfig(folders.Outbox)).WithTransport(folders)
	b := secondProcess(t, h, folders)
	user := h.Customer(key)
	var payments []string
	for _, acct := range []string{"000123450001", "000123450002", "000123458888"} {
		src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", acct)))["funding_source_id"].(string)
		payments = append(payments, th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, `"10.00"`)))["payment_id"].(string))
	}

	race := func(f func(o *ach.Originator) error) { t.Helper(); fourEach(t, f, a, b) }
	race(run)
	if len(folders.count) != 1 {
		t.Fatalf("files delivered = %v; want one", folders.count)
	}
	for name, n := range folders.count {
		if n != 1 {
			t.Errorf("%s delivered %d times", name, n)
		}
	}

	bank := &achnet.Network{Outbox: folders.Outbox, Inbox: folders.Inbox, State: filepath.Join(dir, "state.json"), Rules: banksim.Sandbox}
	step(t, bank, "2026-11-03")
	if sum := step(t, bank, "2026-11-05"); sum.Returns != 2 {
		t.Fatalf("achnet = %+v", sum)
	}
	race(func(o *ach.Originator) error { _, err := o.Poll(context.Background()); return err })
	var applied []struct {
		Kind   string `db:"kind"`
		Status string `db:"status"`
	}
	if err := h.SQL().Select(&applied, `SELECT kind, status FROM ach_inbound_files ORDER BY kind`); err != nil {
		t.Fatal(err)
	}
	if len(applied) != 3 || applied[0].Kind != ach.KindReturns || applied[1].Kind != ach.KindStatement || applied[2].Kind != ach.KindStatement {
		t.Fatalf("inbound files = %+v; want one return file and two statements", applied)
	}
	for i, want := range []string{"failed", "failed", "processing"} {
		p := th.WantOK(t, h.Get("/v2/payments/"+payments[i], key))
		if p["status"] != want && !(want == "processing" && p["status"] != "failed") {
			t.Errorf("payment %d = %s", i, th.MustJSON(p))
		}
	}
	if ev := h.Events("payment.failed"); len(ev) != 2 {
		t.Errorf("payment.failed events = %d, want 2", len(ev))
	}
	var lines, matched int
	if err := h.SQL().Get(&lines, `SELECT count(*) FROM ach_statement_lines`); err != nil {
		t.Fatal(err)
	}
	if err := h.SQL().Get(&matched, `SELECT count(*) FROM ach_statement_lines WHERE settlement_id IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if lines != 2 || matched != 2 {
		t.Errorf("statement lines = %d, matched %d; want 2 and 2", lines, matched)
	}
}

// TestMalformedInboundFileIsSetAside: a file in the inbox that is neither
// a readable NACHA file nor a camt.053 (here a NACHA file cut short) is
// recorded rejected, counted, moved to inbox/rejected and applies
// nothing; the files beside it apply.
func TestMalformedInboundFileIsSetAside(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := t.TempDir()
	folders := ach.Folders{Outbox: filepath.Join(dir, "outbox"), Inbox: filepath.Join(dir, "inbox")}
	o := h.originator(achConfig(folders.Outbox)).WithTransport(folders)
	if err := os.MkdirAll(folders.Inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	short := "101 121042882 2313801042611050600A094101FEDERAL RESERVE BANK   FUNDSOURCE BANK\n"
	statement := `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>S1</MsgId><CreDtTm>2026-11-05T22:00:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><Othr><Id>ODFI-121042882</Id></Othr></Id></Acct><Ntry><NtryRef>1</NtryRef><Amt Ccy="USD">12.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2026-11-05</Dt></BookgDt><BkTxCd></BkTxCd><AddtlNtryInf>WIRE</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>`
	for name, body := range map[string]string{"bad.ach": short, "notes.txt": "hello", "stmt.xml": statement} {
		if err := os.WriteFile(filepath.Join(folders.Inbox, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := o.Poll(context.Background())
	if err != nil || n != 3 || o.RejectedFiles() != 2 {
		t.Fatalf("poll = %d, %v; rejected %d", n, err, o.RejectedFiles())
	}
	for _, name := range []string{"bad.ach", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(folders.Inbox, "rejected", name)); err != nil {
			t.Errorf("%s was not set aside: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(folders.Inbox, "stmt.xml")); err != nil {
		t.Errorf("the statement moved: %v", err)
	}
	_, inbound, err := o.Files(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, in := range inbound {
		statuses[in.Name] = in.Status
		if in.Status == ach.InboundRejected && in.Error == "" {
			t.Errorf("%s rejected without a reason", in.Name)
		}
	}
	if statuses["bad.ach"] != "rejected" || statuses["notes.txt"] != "rejected" || statuses["stmt.xml"] != "applied" {
		t.Errorf("inbound statuses = %v", statuses)
	}
	// The unexpected wire is an unmatched line.
	r, err := o.Reconciliation(context.Background(), "2026-11-05")
	if err != nil || len(r.Unmatched.Statement) != 1 || r.Unmatched.Statement[0].Cents != 1200 || len(r.Matched) != 0 {
		t.Fatalf("reconciliation = %+v, %v", r, err)
	}
	if st, _ := o.Unmatched(); st != 1 {
		t.Errorf("unmatched statement lines = %d, want 1", st)
	}
	if n, err := o.Poll(context.Background()); err != nil || n != 0 {
		t.Errorf("second poll = %d, %v", n, err)
	}
}

// TestRunsAtOnceAssignEverythingToOneFile: runs started together on two
// processes, with many payments waiting, put them all in one file, round
// after round; none is left for a second file.
func TestRunsAtOnceAssignEverythingToOneFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, key, _ := liveMerchant(t, h)
	dir := t.TempDir()
	folders := &countingFolders{Folders: ach.Folders{Outbox: filepath.Join(dir, "outbox")}, count: map[string]int{}}
	a := h.originator(achConfig(folders.Outbox)).WithTransport(folders)
	b := secondProcess(t, h, folders)
	user := h.Customer(key)
	// Five debits a source, the most a banking day's velocity rule lets
	// through without a hold.
	const rounds, sources, perSource = 3, 8, 5
	for round := range rounds {
		for s := range sources {
			src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key,
				th.SourceBody(user, "021000021", fmt.Sprintf("0001234%d%04d", round, s))))["funding_source_id"].(string)
			for i := range perSource {
				th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(src, fmt.Sprintf(`"1.%02d"`, i))))
			}
		}
		before := maps.Clone(folders.count)
		fourEach(t, run, a, b)
		var names []string
		for name := range folders.count {
			if before[name] == 0 {
				names = append(names, name)
			}
		}
		if len(names) != 1 {
			t.Fatalf("round %d: files delivered %v; want one", round, names)
		}
		var entries int
		if err := h.SQL().Get(&entries, `SELECT count(*) FROM ach_entries e JOIN ach_files f ON f.id = e.file_id WHERE f.name = $1`, names[0]); err != nil {
			t.Fatal(err)
		}
		if entries != sources*perSource {
			t.Fatalf("round %d: the file holds %d entries; want %d", round, entries, sources*perSource)
		}
	}
}
