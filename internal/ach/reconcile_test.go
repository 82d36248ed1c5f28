package ach

import (
	"errors"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"
)

func statementXML(ns, entries string) string {
	return `<?xml version="1.0"?><Document xmlns="` + ns + `"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-11-05T22:00:00</CreDtTm></GrpHdr>` +
		`<Stmt><Id>S1</Id>` + entries + `</Stmt></BkToCstmrStmt></Document>`
}

func entry(amount, ccy, cd, status, extra string) string {
	return `<Ntry><Amt Ccy="` + ccy + `">` + amount + `</Amt><CdtDbtInd>` + cd + `</CdtDbtInd><Sts><Cd>` + status + `</Cd></Sts>` +
		`<BookgDt><Dt>2026-11-05</Dt></BookgDt><BkTxCd></BkTxCd>` + extra + `</Ntry>`
}

const ns08 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"

func TestParseStatement(t *testing.T) {
	lines, err := ParseStatement([]byte(statementXML(ns08,
		entry("1234.56", "USD", "CRDT", "BOOK", "<AddtlNtryInf>ACH</AddtlNtryInf>")+
			entry("0.01", "USD", "DBIT", "BOOK", "")+
			entry("5.00", "USD", "CRDT", "PDNG", "")+
			entry("7.00", "USD", "CRDT", "BOOK", "<RvslInd>true</RvslInd>"))))
	if err != nil {
		t.Fatal(err)
	}
	want := []StatementLine{
		{StatementID: "S1", Ref: "1", Date: "2026-11-05", Direction: DirectionCredit, Cents: 123456, Info: "ACH"},
		{StatementID: "S1", Ref: "2", Date: "2026-11-05", Direction: DirectionDebit, Cents: 1},
		{StatementID: "S1", Ref: "4", Date: "2026-11-05", Direction: DirectionDebit, Cents: 700}, // a reversed credit
	}
	if len(lines) != len(want) {
		t.Fatalf("lines = %+v, want %+v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, lines[i], want[i])
		}
	}
}

func TestParseStatementRefusesWhatIsNoStatement(t *testing.T) {
	for name, doc := range map[string]string{
		"not XML":           "101 121042882",
		"a pacs.008":        statementXML("urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08", entry("1.00", "USD", "CRDT", "BOOK", "")),
		"another currency":  statementXML(ns08, entry("1.00", "EUR", "CRDT", "BOOK", "")),
		"no direction":      statementXML(ns08, entry("1.00", "USD", "BOTH", "BOOK", "")),
		"a negative amount": statementXML(ns08, entry("-1.00", "USD", "CRDT", "BOOK", "")),
		"no date":           strings.Replace(statementXML(ns08, entry("1.00", "USD", "CRDT", "BOOK", "")), "<BookgDt><Dt>2026-11-05</Dt></BookgDt>", "", 1),
	} {
		if _, err := ParseStatement([]byte(doc)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

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

func FuzzParseStatement(f *testing.F) {
	f.Add(statementXML(ns08, entry("1.00", "USD", "CRDT", "BOOK", "")))
	f.Add("<Document/>")
	f.Fuzz(func(t *testing.T, doc string) {
		lines, err := ParseStatement([]byte(doc))
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("an error that is not ErrMalformed: %v", err)
		}
		for _, l := range lines {
			if l.Direction != DirectionCredit && l.Direction != DirectionDebit || l.Date == "" {
				t.Fatalf("line %+v", l)
			}
		}
	})
}
