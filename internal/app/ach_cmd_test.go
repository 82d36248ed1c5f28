package app_test

import (
	"os"
	"path/filepath"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
)

// TestImportReturnsCountsAsJSON imports a bank's return file naming an
// entry never originated here: the JSON answer carries every count, the
// return among the unknown.
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
	e.DFIAccountNumber, e.Amount, e.IndividualName = "1", 100, "RETURN"
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
	if u, _ := out["unknown"].([]any); len(u) != 1 || u[0] != "121042889999999" {
		t.Errorf("unknown = %v", out["unknown"])
	}
	if u, ok := out["unsupported"].([]any); !ok || len(u) != 0 {
		t.Errorf("unsupported = %v, want []", out["unsupported"])
	}
}
