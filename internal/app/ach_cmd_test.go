package app_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/app"
)

// TestImportReturnsCountsAsJSON imports a bank's return file naming an
// entry never originated here: the JSON answer carries every count, the
// return among the unmatched and unknown. The operator lists it (the
// account by its last four only), cannot resolve it without a note or
// against a payment in no file, and dismisses it.
func TestImportReturnsCountsAsJSON(t *testing.T) {
	c := newCLI(t)
	c.env["ACH_ODFI_ROUTING"], c.env["ACH_COMPANY_NAME"], c.env["ACH_COMPANY_ID"] = "121042882", "FUNDSOURCE", "1234567890"
	c.env["ACH_OFFSET_ACCOUNT"], c.env["ACH_OUTBOX_DIR"] = "31337", t.TempDir()

	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode = nacha.CreditsOnly
	bh.CompanyName, bh.CompanyIdentification = "FUNDSOURCE", "1234567890"
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.PPD, "PAYMENT"
	bh.EffectiveEntryDate, bh.ODFIIdentification = "261105", "23138010"
	batch := nacha.NewBatchPPD(bh)
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.CheckingReturnNOCCredit
	e.SetRDFI("121042882")
	e.DFIAccountNumber, e.Amount, e.IndividualName = "000111222333", 100, "RETURN"
	e.SetTraceNumber("23138010", 1)
	a := nacha.NewAddenda99()
	a.ReturnCode, a.OriginalTrace, a.OriginalDFI = "R01", "121042889999999", "12104288"
	e.Addenda99, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryReturn, 1
	batch.AddEntry(e)
	if err := batch.Create(); err != nil {
		t.Fatal(err)
	}
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "231380104"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FUNDSOURCE BANK", "FEDERAL RESERVE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	file.AddBatch(batch)
	data, err := ach.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "returns.ach")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.json("ach", "import-returns", path)
	for key, want := range map[string]float64{"returns": 1, "applied": 0, "dishonored": 0, "duplicates": 0, "contested": 0, "notifications_of_change": 0, "ignored_forward": 0} {
		if got, ok := out[key].(float64); !ok || got != want {
			t.Errorf("%s = %v, want %v (%v)", key, out[key], want, out)
		}
	}
	if u, _ := out["unknown"].([]any); len(u) != 1 || u[0] != "121042889999999" || out["unmatched"] != 1.0 || out["ambiguous"] != 0.0 {
		t.Errorf("unknown = %v, unmatched %v, ambiguous %v", out["unknown"], out["unmatched"], out["ambiguous"])
	}

	// The inbox's record: the file is received once by its SHA-256.
	files := c.json("ach", "files")
	if in, _ := files["inbound"].([]any); len(in) != 1 || in[0].(map[string]any)["sha256"] != out["sha256"] ||
		in[0].(map[string]any)["status"] != "applied" || in[0].(map[string]any)["kind"] != "returns" {
		t.Errorf("inbound files after the import = %v", files["inbound"])
	}
	if again := c.json("ach", "import-returns", path); again["file_applied_before"] != true || again["applied"] != 0.0 || again["unmatched"] != 0.0 {
		t.Errorf("the same file again = %v", again)
	}

	list, _ := c.json("ach", "unmatched")["answers"].([]any)
	if len(list) != 1 {
		t.Fatalf("unmatched answers = %v", list)
	}
	answer := list[0].(map[string]any)
	if answer["original_trace"] != "121042889999999" || answer["account_last4"] != "2333" || answer["code"] != "R01" ||
		answer["reason"] != "unmatched" || answer["status"] != "open" || answer["amount_cents"] != 100.0 {
		t.Errorf("unmatched answer = %v", answer)
	}
	if text, _, err := c.run("ach", "unmatched"); err != nil || !strings.Contains(text, answer["id"].(string)) || strings.Contains(text, "000111222333") {
		t.Errorf("ach unmatched = %q, %v", text, err)
	}
	id := answer["id"].(string)
	if _, _, err := c.run("ach", "dismiss", id); !errors.Is(err, app.ErrUsage) {
		t.Errorf("dismiss without --note = %v, want a usage error", err)
	}
	if _, _, err := c.run("ach", "match", id, "pay_unknown", "--note", "x"); err == nil {
		t.Error("match to a payment in no file succeeded")
	}
	c.json("ach", "dismiss", id, "--note", "not ours: the bank's misrouted file")
	if list, _ := c.json("ach", "unmatched")["answers"].([]any); len(list) != 0 {
		t.Errorf("open answers after the dismissal = %v", list)
	}
	all, _ := c.json("ach", "unmatched", "--all")["answers"].([]any)
	if len(all) != 1 || all[0].(map[string]any)["status"] != "dismissed" || all[0].(map[string]any)["note"] != "not ours: the bank's misrouted file" {
		t.Errorf("every answer after the dismissal = %v", all)
	}
	if _, _, err := c.run("ach", "dismiss", id, "--note", "again"); err == nil {
		t.Error("dismissing a dismissed answer succeeded")
	}
	if u, ok := out["unsupported"].([]any); !ok || len(u) != 0 {
		t.Errorf("unsupported = %v, want []", out["unsupported"])
	}
}
