package ach

import (
	"testing"

	nacha "github.com/moov-io/ach"
)

// TestSettlementsOf: an outbound file's debits are money in, its credits
// money out, per effective date; the ODFI's own offset and zero-dollar
// entries book nothing; a return file books the other way.
func TestSettlementsOf(t *testing.T) {
	file := nacha.NewFile()
	add := func(effective string, eds ...*nacha.EntryDetail) {
		bh := nacha.NewBatchHeader()
		bh.CompanyName, bh.CompanyIdentification, bh.StandardEntryClassCode = "ACME", "1234567890", "PPD"
		bh.CompanyEntryDescription, bh.EffectiveEntryDate, bh.ODFIIdentification = "PAYMENT", effective, "12104288"
		if err := AddBatch(file, bh, eds); err != nil {
			t.Fatal(err)
		}
	}
	ed := func(code int, rdfi string, cents int, trace string) *nacha.EntryDetail {
		e := nacha.NewEntryDetail()
		e.TransactionCode, e.DFIAccountNumber, e.Amount, e.IndividualName, e.TraceNumber = code, "123", cents, "X", trace
		e.SetRDFI(rdfi)
		return e
	}
	add("261103", ed(27, "021000021", 1000, "121042880000001"), ed(27, "021000021", 250, "121042880000002"),
		ed(22, "021000021", 99, "121042880000003"), ed(27, "121042882", 99, "121042880000004"))
	add("261104", ed(27, "021000021", 500, "121042880000005"))
	got := SettlementsOf(file, true, "121042882")
	want := []Settlement{
		{Date: "2026-11-03", Direction: DirectionCredit, Cents: 1250, Entries: 2},
		{Date: "2026-11-03", Direction: DirectionDebit, Cents: 99, Entries: 1},
		{Date: "2026-11-04", Direction: DirectionCredit, Cents: 500, Entries: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("settlements = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("settlement %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Read as a file of returns, the same entries book the other way
	// (and the ODFI's routing number is no offset there).
	if r := SettlementsOf(file, false, "121042882"); r[0].Direction != DirectionDebit || r[0].Cents != 1349 {
		t.Errorf("as returns = %+v", r)
	}
}

func TestKindOf(t *testing.T) {
	for in, want := range map[string]string{"101 1210": KindReturns, "\xef\xbb\xbf<?xml": KindStatement, "  <Document": KindStatement, "hello": KindUnknown, "": KindUnknown} {
		if got := kindOf([]byte(in)); got != want {
			t.Errorf("kindOf(%q) = %q, want %q", in, got, want)
		}
	}
}
