// Package nachatest writes NACHA files as the service's originator writes
// them, for tests of what reads them (the simulated bank, its command
// line): built and checked with github.com/moov-io/ach.
package nachatest

import (
	"bytes"
	"testing"

	nacha "github.com/moov-io/ach"
)

// OutboxFile builds a file as the originator writes one, created on
// created with the entries effective the next banking day: a micro-deposit
// batch (two credits and the on-us offset), a WEB debit batch and a CCD
// debit batch.
func OutboxFile(t testing.TB, effective string, deposits, web, ccd []string) []byte {
	t.Helper()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "231380104", "121042882"
	fh.FileCreationDate, fh.FileCreationTime = "261102", "1004"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FEDERAL RESERVE BANK", "FUNDSOURCE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	seq := 0
	batch := func(sec, description string, class int, accounts []string, code int, offset bool) {
		if len(accounts) == 0 {
			return
		}
		bh := nacha.NewBatchHeader()
		bh.ServiceClassCode, bh.StandardEntryClassCode, bh.CompanyEntryDescription = class, sec, description
		bh.CompanyName, bh.CompanyIdentification = "FUNDSOURCE", "1234567890"
		bh.EffectiveEntryDate, bh.ODFIIdentification = effective, "12104288"
		b, err := nacha.NewBatch(bh)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, a := range accounts {
			e := nacha.NewEntryDetail()
			e.TransactionCode = code
			e.SetRDFI("026009593")
			e.DFIAccountNumber, e.Amount, e.IndividualName, e.IdentificationNumber = a, 1200, "ADA LOVELACE", "PAY"+a
			if sec == "WEB" {
				e.SetPaymentType("S")
			}
			seq++
			e.SetTraceNumber("12104288", seq)
			total += e.Amount
			b.AddEntry(e)
		}
		if offset {
			e := nacha.NewEntryDetail()
			e.TransactionCode = nacha.CheckingDebit
			e.SetRDFI("121042882")
			e.DFIAccountNumber, e.Amount, e.IndividualName, e.IdentificationNumber = "0001", total, "FUNDSOURCE", "OFFSET"
			seq++
			e.SetTraceNumber("12104288", seq)
			b.AddEntry(e)
		}
		if err := b.Create(); err != nil {
			t.Fatal(err)
		}
		file.AddBatch(b)
	}
	batch("PPD", "ACCTVERIFY", nacha.MixedDebitsAndCredits, deposits, nacha.SavingsCredit, true)
	batch("WEB", "PURCHASE", nacha.DebitsOnly, web, nacha.CheckingDebit, false)
	batch("CCD", "PAYMENT", nacha.DebitsOnly, ccd, nacha.CheckingDebit, false)
	if err := file.Create(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nacha.NewWriter(&buf).Write(file); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
