package ach

import (
	"errors"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/testing/camttest"
)

// settlementAccount is the settlement account of these tests, an account
// number as the bank's statements name it in <Othr><Id>.
const settlementAccount = "000123456782882"

func ours(entries ...camttest.Entry) camttest.Statement {
	return camttest.Statement{ID: "STMT-1", Other: settlementAccount, Entries: entries}
}

func parse(t *testing.T, data []byte) StatementFile {
	t.Helper()
	f, err := ParseStatement(data, settlementAccount)
	if err != nil {
		t.Fatalf("ParseStatement: %v\n%s", err, data)
	}
	return f
}

func refused(t *testing.T, what string, data []byte, account string, mention ...string) {
	t.Helper()
	_, err := ParseStatement(data, account)
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("%s: err = %v, want ErrMalformed", what, err)
		return
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%s: error %q does not say %q", what, err, m)
		}
	}
}

// TestParseStatementEachVersion: every version from .02 to .08, in its own
// layout, reads its booked lines (a reversal the other way, a booking
// date and time by the date the bank wrote), counts its pending and
// information entries without lines, and names its version.
func TestParseStatementEachVersion(t *testing.T) {
	for _, v := range camttest.Versions {
		data := camttest.Document(v, ours(
			camttest.Entry{Ref: "R1", Amount: "1234.56", Info: "ACH FUNDSOURCE"},
			camttest.Entry{Ref: "R2", Amount: "0.01", CdtDbt: "DBIT"},
			camttest.Entry{Ref: "R3", Amount: "5.00", Status: "PDNG"},
			camttest.Entry{Ref: "R4", Amount: "6.00", Status: "INFO"},
			camttest.Entry{Ref: "R5", Amount: "7", Reversal: true},
			camttest.Entry{Amount: "8.5", Booked: "2026-11-06", DateTime: true},
			camttest.Entry{Ref: "R7", Amount: "9.00", Status: "FUTR"},
		))
		f := parse(t, data)
		if f.Version != v || len(f.Statements) != 1 || f.OtherAccounts != 0 {
			t.Fatalf("%s: file = %+v", v, f)
		}
		st := f.Statements[0]
		want := []StatementLine{
			{StatementID: "STMT-1", Ref: "R1", Date: "2026-11-05", Direction: DirectionCredit, Cents: 123456, Info: "ACH FUNDSOURCE"},
			{StatementID: "STMT-1", Ref: "R2", Date: "2026-11-05", Direction: DirectionDebit, Cents: 1},
			{StatementID: "STMT-1", Ref: "R5", Date: "2026-11-05", Direction: DirectionDebit, Cents: 700}, // a reversed credit
			{StatementID: "STMT-1", Ref: "BANKREF-X", Date: "2026-11-06", Direction: DirectionCredit, Cents: 850},
		}
		if st.ID != "STMT-1" || st.Pending != 2 || st.Information != 1 || len(st.Lines) != len(want) {
			t.Fatalf("%s: statement = %+v, want 4 lines, 2 pending, 1 information", v, st)
		}
		for i := range want {
			if st.Lines[i] != want[i] {
				t.Errorf("%s: line %d = %+v, want %+v", v, i, st.Lines[i], want[i])
			}
		}
	}
}

// TestParseStatementStatusInTheVersionsLayout: a status written in the
// other versions' layout (a plain code in .07/.08, a choice up to .06),
// a proprietary status and an unknown code refuse the file: never read
// as booked.
func TestParseStatementStatusInTheVersionsLayout(t *testing.T) {
	for _, v := range camttest.Versions {
		other := camttest.LayoutChoice
		if camttest.Choice(v) {
			other = camttest.LayoutCode
		}
		for name, e := range map[string]camttest.Entry{
			"the other layout":          {Ref: "R9", Amount: "1.00", Layout: other},
			"the other layout, pending": {Ref: "R9", Amount: "1.00", Status: "PDNG", Layout: other},
			"a proprietary status":      {Ref: "R9", Amount: "1.00", Status: "BOOKED", Layout: camttest.LayoutPrtry},
			"an unknown code":           {Ref: "R9", Amount: "1.00", Status: "DONE"},
			"an empty status":           {Ref: "R9", Amount: "1.00", Status: " "},
		} {
			refused(t, v+" "+name, camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: "2.00"}, e)), settlementAccount,
				"entry 2 (NtryRef R9)")
		}
	}
}

// TestParseStatementAccount: only the settlement account's statements
// are read, by its account number or its IBAN however it is grouped; a
// file of another account is refused without showing the account in
// full; in a file of several accounts the others are counted, unread (a
// bad amount there refuses nothing); a file without a statement and an
// unset settlement account are refused.
func TestParseStatementAccount(t *testing.T) {
	const dutch = "NL91ABNA0417164300"
	line := camttest.Entry{Ref: "R1", Amount: "65.00"}
	for _, v := range camttest.Versions {
		refused(t, v+" another account", camttest.Document(v, camttest.Statement{ID: "S-NL", IBAN: dutch, Entries: []camttest.Entry{line}}),
			settlementAccount, "no statement of the settlement account (…2882)", "S-NL", "…4300")
		if _, err := ParseStatement(camttest.Document(v, camttest.Statement{ID: "S-NL", IBAN: dutch}), settlementAccount); err != nil &&
			strings.Contains(err.Error(), dutch) {
			t.Errorf("%s: the refusal shows the whole account: %v", v, err)
		}
		refused(t, v+" no account named", camttest.Document(v, camttest.Statement{ID: "S0", Entries: []camttest.Entry{line}}), settlementAccount)
		refused(t, v+" no statement", camttest.Document(v), settlementAccount, "no statement")
		refused(t, v+" no settlement account set", camttest.Document(v, ours(line)), "", "ACH_SETTLEMENT_ACCOUNT")

		// By IBAN, written in groups or not, in either case.
		for _, written := range []string{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "de89370400440532013000"} {
			f, err := ParseStatement(camttest.Document(v, camttest.Statement{ID: "S-DE", IBAN: written, Entries: []camttest.Entry{line}}),
				"DE89 3704 0044 0532 0130 00")
			if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Lines) != 1 {
				t.Errorf("%s: IBAN written %q: %+v, %v", v, written, f, err)
			}
		}

		// Three accounts in one file: ours in the middle.
		multi := camttest.Document(v,
			camttest.Statement{ID: "S-NL", IBAN: dutch, Entries: []camttest.Entry{{Ref: "N1", Amount: "0x1.9p6"}}},
			camttest.Statement{ID: "S-OURS", Other: settlementAccount, Entries: []camttest.Entry{line, {Ref: "R2", Amount: "1.00", Status: "PDNG"}}},
			camttest.Statement{ID: "S-SAV", Other: "999000111", Entries: []camttest.Entry{{Ref: "V1", Amount: "3.00"}}},
		)
		f := parse(t, multi)
		if f.OtherAccounts != 2 || len(f.Statements) != 1 || f.Statements[0].ID != "S-OURS" ||
			len(f.Statements[0].Lines) != 1 || f.Statements[0].Lines[0].Cents != 6500 || f.Statements[0].Pending != 1 {
			t.Errorf("%s: several accounts = %+v", v, f)
		}
	}
}

// TestParseStatementAmounts: an amount is an ISO 20022 decimal in USD,
// to the edge (two decimals; one cent; the largest line), and anything
// else refuses the file naming the entry.
func TestParseStatementAmounts(t *testing.T) {
	for _, v := range camttest.Versions {
		for text, want := range map[string]int64{"100": 10000, "100.0": 10000, "100.00": 10000, "0.01": 1, "0": 0,
			"007.50": 750, "999999999.99": 99999999999, " 12.34\n": 1234} {
			f := parse(t, camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: text})))
			if got := f.Statements[0].Lines[0].Cents; got != want {
				t.Errorf("%s: amount %q = %d cents, want %d", v, text, got, want)
			}
		}
		for _, text := range []string{"1_00", "0x1.9p6", "100.005", "100.000", "", " ", "-1.00", "+1.00", "1e2", "1E2",
			".50", "5.", "1,00", "1 000.00", "NaN", "Inf", "１00", "1000000000.00"} {
			refused(t, v+" amount "+text, camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: "1.00"},
				camttest.Entry{Ref: "R2", Amount: text, Status: "PDNG"})), settlementAccount, "statement STMT-1 entry 2 (NtryRef R2)")
		}
		// A booked one just the same, and one without a reference is
		// named by its place.
		refused(t, v+" booked 1_00", camttest.Document(v, ours(camttest.Entry{Amount: "1_00"})), settlementAccount,
			"statement STMT-1 entry 1: amount \"1_00\"")
		refused(t, v+" EUR", camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: "1.00", Currency: "EUR"})), settlementAccount, "EUR")
		refused(t, v+" no direction", camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: "1.00", CdtDbt: "BOTH"})), settlementAccount, "CdtDbtInd")
		refused(t, v+" no date", camttest.Document(v, ours(camttest.Entry{Ref: "R1", Amount: "1.00", Booked: "-"})), settlementAccount, "booking date")
	}
}

// TestParseStatementRefusesWhatIsNoStatementRead: not XML, another
// message, and camt.053 versions not read.
func TestParseStatementRefusesWhatIsNoStatementRead(t *testing.T) {
	doc := string(camttest.Document("camt.053.001.08", ours(camttest.Entry{Ref: "R1", Amount: "1.00"})))
	for name, data := range map[string]string{
		"not XML":         "101 121042882",
		"a pacs.008":      strings.Replace(doc, "camt.053.001.08", "pacs.008.001.08", 1),
		"camt.053.001.01": strings.Replace(doc, "camt.053.001.08", "camt.053.001.01", 1),
		"camt.053.001.09": strings.Replace(doc, "camt.053.001.08", "camt.053.001.09", 1),
		"no namespace":    strings.Replace(doc, `xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"`, "", 1),
		"cut short":       doc[:len(doc)/2],
	} {
		refused(t, name, []byte(data), settlementAccount)
	}
	// A prefixed document reads as one without a prefix.
	prefixed := strings.NewReplacer("<Document xmlns=", "<c:Document xmlns:c=", "</Document>", "</c:Document>").Replace(doc)
	if f := parse(t, []byte(prefixed)); len(f.Statements) != 1 {
		t.Errorf("prefixed document = %+v", f)
	}
}

func FuzzStatementAmount(f *testing.F) {
	for _, s := range []string{"1.00", "1_00", "0x1.9p6", "100.005", "-1", "1e2", "", "0.1", "999999999.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := statementAmount(s)
		if err != nil {
			return
		}
		// Only digits with at most two decimals pass, and they say c.
		trimmed := strings.Trim(s, " \t\r\n")
		if strings.Trim(trimmed, "0123456789.") != "" || strings.Count(trimmed, ".") > 1 {
			t.Fatalf("statementAmount(%q) = %d: not a decimal", s, c)
		}
		if back, err := statementAmount(money.Format(c)); err != nil || back != c {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, c, money.Format(c), back, err)
		}
	})
}

func FuzzParseStatement(f *testing.F) {
	f.Add(string(camttest.Document("camt.053.001.08", ours(camttest.Entry{Ref: "R1", Amount: "1.00"}))))
	f.Add(string(camttest.Document("camt.053.001.02", ours(camttest.Entry{Ref: "R1", Amount: "1.00"}))))
	f.Add("<Document/>")
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := ParseStatement([]byte(doc), settlementAccount)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("an error that is not ErrMalformed: %v", err)
		}
		if err == nil && len(file.Statements) == 0 {
			t.Fatalf("read without a statement: %+v", file)
		}
		for _, st := range file.Statements {
			for _, l := range st.Lines {
				if l.Direction != DirectionCredit && l.Direction != DirectionDebit || l.Date == "" || l.Cents < 0 {
					t.Fatalf("line %+v", l)
				}
			}
		}
	})
}

// TestParseStatementEncodings: a statement declared ISO-8859-1 reads as
// the UTF-8 one does; another encoding is refused.
func TestParseStatementEncodings(t *testing.T) {
	utf8 := string(camttest.Document("camt.053.001.04", ours(camttest.Entry{Ref: "R1", Amount: "1.00", Info: "Café"})))
	latin1 := strings.Replace(strings.Replace(utf8, `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1), "Café", "Caf\xe9", 1)
	f := parse(t, []byte(latin1))
	if got := f.Statements[0].Lines[0].Info; got != "Café" {
		t.Errorf("ISO-8859-1 info = %q, want Café", got)
	}
	refused(t, "EBCDIC", []byte(strings.Replace(utf8, `encoding="UTF-8"`, `encoding="IBM037"`, 1)), settlementAccount, "IBM037")
}
