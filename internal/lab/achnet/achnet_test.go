package achnet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/testing/nachatest"

	"github.com/fundsource/fundsource/internal/lab/rig"
)

// outboxFile is nachatest.OutboxFile.
func outboxFile(t *testing.T, effective string, deposits, web, ccd []string) []byte {
	return nachatest.OutboxFile(t, effective, deposits, web, ccd)
}

func run(t *testing.T, outbox, inbox, date string, extra ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"--outbox", outbox, "--inbox", inbox, "--date", date}, extra...)
	if err := Run(context.Background(), args, rig.IO{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatalf("achnet %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

// answers reads the inbox files written on date.
func answers(t *testing.T, inbox, date string) []*nacha.File {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(inbox, "achnet-"+strings.ReplaceAll(date, "-", "")+"-*.ach"))
	var out []*nacha.File
	for _, n := range names {
		f, err := nacha.ReadFile(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("%s does not validate: %v", n, err)
		}
		out = append(out, f)
	}
	return out
}

func TestRunAnswersOnTheBankingDaysAndNeverTwice(t *testing.T) {
	dir := t.TempDir()
	outbox, inbox := filepath.Join(dir, "outbox"), filepath.Join(dir, "inbox")
	if err := os.MkdirAll(outbox, 0o700); err != nil {
		t.Fatal(err)
	}
	// Effective Tuesday 2026-11-03. Deposits, two credits each: to a C01
	// account (one NOC for both) and to an R07 account (R07 is for
	// debits: accepted);
	// WEB debits: R07, a late R10, an R29 (consumer: accepted), a clean
	// one; a CCD debit to an R29 account.
	data := outboxFile(t, "261103", []string{"5559101", "5559101", "5550007", "5550007"}, []string{"7770007", "7771010", "7770029", "7776789"}, []string{"8880029"})
	if err := os.WriteFile(filepath.Join(outbox, "fundsource-20261102-a.ach"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	out := run(t, outbox, inbox, "2026-11-02")
	if !strings.Contains(out, "0 settled, 0 returns") || !strings.Contains(out, "4 answer(s) pending, the next on 2026-11-05") {
		t.Errorf("before settlement:\n%s", out)
	}
	if out := run(t, outbox, inbox, "2026-11-03"); !strings.Contains(out, "9 entries; 9 settled, 0 returns") {
		t.Errorf("settlement day:\n%s", out)
	}
	out = run(t, outbox, inbox, "2026-11-05")
	if !strings.Contains(out, "0 settled, 2 returns, 1 notifications of change") {
		t.Errorf("two banking days later:\n%s", out)
	}
	if strings.Contains(out, "5559101") || strings.Contains(out, "7770007") {
		t.Errorf("the output shows a full account number:\n%s", out)
	}
	files := answers(t, inbox, "2026-11-05")
	if len(files) != 1 {
		t.Fatalf("inbox files on 2026-11-05: %d", len(files))
	}
	f := files[0]
	if f.Header.ImmediateDestination != "121042882" || f.Header.ImmediateOrigin != "231380104" || f.Header.FileCreationDate != "261105" {
		t.Errorf("file header = %+v", f.Header)
	}
	got := map[string]string{}
	for _, b := range f.Batches {
		bh := b.GetHeader()
		if bh.ODFIIdentification != "02600959" || bh.EffectiveEntryDate != "261105" || bh.CompanyName != "FUNDSOURCE" {
			t.Errorf("batch header = %+v", bh)
		}
		for _, e := range b.GetEntries() {
			acct := strings.TrimSpace(e.DFIAccountNumber)
			switch {
			case e.Addenda99 != nil:
				a := e.Addenda99
				got[acct] = bh.StandardEntryClassCode + " " + a.ReturnCode
				if a.OriginalDFI != "02600959" || !strings.HasPrefix(a.OriginalTrace, "12104288") || e.RDFIIdentification+e.CheckDigit != "121042882" ||
					e.Amount != 1200 || !strings.HasPrefix(e.TraceNumber, "02600959") {
					t.Errorf("return entry %s / %+v", e.String(), a)
				}
			case e.Addenda98 != nil:
				a := e.Addenda98
				got[acct] = bh.StandardEntryClassCode + " " + a.ChangeCode + " " + strings.TrimSpace(a.CorrectedData)
				if e.Amount != 0 || e.TransactionCode != nacha.SavingsReturnNOCCredit || a.OriginalDFI != "02600959" {
					t.Errorf("NOC entry %s / %+v", e.String(), a)
				}
			}
		}
	}
	want := map[string]string{"7770007": "WEB R07", "8880029": "CCD R29", "5559101": "COR C01 5559100"}
	if len(got) != len(want) {
		t.Errorf("answers = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("answer for %s = %q, want %q", k, got[k], v)
		}
	}
	// The return of a WEB debit is a 26 in a WEB batch, debit returns only.
	for _, b := range f.Batches {
		if b.GetHeader().StandardEntryClassCode == "WEB" && (b.GetHeader().ServiceClassCode != nacha.DebitsOnly || b.GetEntries()[0].TransactionCode != nacha.CheckingReturnNOCDebit) {
			t.Errorf("WEB return batch = %+v / %s", b.GetHeader(), b.GetEntries()[0].String())
		}
	}

	// Again on the same day, and the next: nothing twice.
	if out := run(t, outbox, inbox, "2026-11-05"); !strings.Contains(out, "0 settled, 0 returns, 0 notifications") || strings.Contains(out, "wrote") {
		t.Errorf("the same day again:\n%s", out)
	}
	// Veterans Day: no banking, nothing sent.
	if out := run(t, outbox, inbox, "2026-11-11"); !strings.Contains(out, "not a banking day") || strings.Contains(out, "wrote") {
		t.Errorf("on a holiday:\n%s", out)
	}
	// The late R10 comes 10 banking days after settlement, on 2026-11-18.
	if out := run(t, outbox, inbox, "2026-11-17"); strings.Contains(out, "wrote") || !strings.Contains(out, "the next on 2026-11-18") {
		t.Errorf("the day before the late return:\n%s", out)
	}
	out = run(t, outbox, inbox, "2026-11-20", "--json")
	if !strings.Contains(out, `"returns":1`) {
		t.Errorf("after the late return's day:\n%s", out)
	}
	late := answers(t, inbox, "2026-11-20")
	if len(late) != 1 || late[0].Batches[0].GetEntries()[0].Addenda99.ReturnCode != "R10" {
		t.Errorf("late return files = %v", late)
	}
	if names, _ := filepath.Glob(filepath.Join(inbox, "*.ach")); len(names) != 2 {
		t.Errorf("inbox files = %v", names)
	}
}

func TestRunRefusesBadArguments(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"rules":[{"account_suffix":"1","answer":"R03","after_banking_days":5}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--outbox", "x"},
		{"--inbox", "x"},
		{"--outbox", "x", "--inbox", "y", "--date", "11/05/2026"},
		{"--outbox", "x", "--inbox", "y", "--rules", rules},
		{"--outbox", "x", "--inbox", "y", "--watch", "1s", "--date", "2026-11-05"},
		{"--outbox", filepath.Join(t.TempDir(), "no-such-folder"), "--inbox", t.TempDir()},
	} {
		var errOut bytes.Buffer
		err := Run(context.Background(), args, rig.IO{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}, Stderr: &errOut})
		if err == nil || !strings.Contains(errOut.String(), "Usage:") {
			t.Errorf("Run(%v) = %v, %q", args, err, errOut.String())
		}
	}
}

func TestRunTakesARulesFileAndRejectsABadOutboxFile(t *testing.T) {
	dir := t.TempDir()
	outbox, inbox := filepath.Join(dir, "outbox"), filepath.Join(dir, "inbox")
	if err := os.MkdirAll(outbox, 0o700); err != nil {
		t.Fatal(err)
	}
	data := outboxFile(t, "261103", nil, []string{"7776789", "7770007"}, nil)
	if err := os.WriteFile(filepath.Join(outbox, "a.ach"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outbox, "b.ach"), []byte("101 not a NACHA file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte(`{"rules":[{"account":"7776789","answer":"R01","after_banking_days":0}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(t, outbox, inbox, "2026-11-03", "--rules", rules)
	if !strings.Contains(out, "1 outbox file(s)") || !strings.Contains(out, "rejected b.ach") || !strings.Contains(out, "1 returns") {
		t.Errorf("with a rules file:\n%s", out)
	}
	files := answers(t, inbox, "2026-11-03")
	if len(files) != 1 || len(files[0].Batches) != 1 || len(files[0].Batches[0].GetEntries()) != 1 ||
		files[0].Batches[0].GetEntries()[0].Addenda99.ReturnCode != "R01" {
		t.Errorf("answers with the rules file (the 0007 account is accepted): %v", files)
	}
}
