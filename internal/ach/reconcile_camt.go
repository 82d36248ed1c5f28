package ach

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moov-io/iso20022/pkg/camt_v08"

	"github.com/fundsource/fundsource/internal/core/money"
)

// Reading camt.053. A bank writes its statements in the version of
// BankToCustomerStatement it implements, .001.02 to .001.08 in practice,
// and the versions differ where it matters: up to .06 an entry's status
// is a code (<Sts>BOOK</Sts>), from .07 a choice of a code or a
// proprietary value (<Sts><Cd>BOOK</Cd></Sts>). A document is read in the
// layout of the version its namespace names, so a status written in the
// other layout reads as missing and refuses the file instead of passing
// as booked. Version .08 is read with github.com/moov-io/iso20022's
// camt_v08 (the only version of the message it has); the earlier ones
// with structs of their own, which hold just the elements reconciliation
// reads and are the same in those versions except for the status.
//
// Amounts are read as text, never through a float: an ISO 20022 amount
// in US dollars is digits, an optional point and at most two decimals,
// and anything else (a sign, an exponent, a hex float, a digit separator,
// a third decimal) refuses the file with the entry named, as does an
// entry whose status is neither booked (BOOK), pending (PDNG, and FUTR,
// a future booking) nor information (INFO). Only booked entries are
// money on the account; pending and information entries are counted and
// never matched.
//
// A file may hold statements of several accounts. Only the statements
// of the settlement account (Config.SettlementAccount, compared with the
// account's IBAN or other identification without spaces, case-folded)
// are read; the others are counted and not looked into. A file with no
// statement, or with none of the settlement account, is refused.

// camtNamespace is the namespace of camt.053 documents without the
// version.
const camtNamespace = "urn:iso:std:iso:20022:tech:xsd:"

// camtVersions are the versions read, each with its decoder.
var camtVersions = map[string]func([]byte) ([]camtStatement, error){
	"camt.053.001.02": decodeCamt[codeStatus],
	"camt.053.001.03": decodeCamt[codeStatus],
	"camt.053.001.04": decodeCamt[codeStatus],
	"camt.053.001.05": decodeCamt[codeStatus],
	"camt.053.001.06": decodeCamt[codeStatus],
	"camt.053.001.07": decodeCamt[choiceStatus],
	"camt.053.001.08": decodeCamt08,
}

// Entry statuses as reconciliation counts them.
const (
	statusBooked      = "BOOK"
	statusPending     = "PDNG"
	statusFuture      = "FUTR"
	statusInformation = "INFO"
)

// camtStatement is one <Stmt> as read, whatever the version.
type camtStatement struct {
	ID      string
	Account string // the IBAN, else the other identification, as written
	Entries []camtEntry
}

// camtEntry is one <Ntry> as read; Amount is the amount's text.
type camtEntry struct {
	Ref, ServicerRef, Info   string
	Amount, Currency, CdtDbt string
	Reversal                 bool
	Status                   string // "" when missing or not in the version's layout; "Prtry:…" when proprietary
	Booked, Value            time.Time
}

// StatementFile is what a camt.053 file holds for the settlement account.
type StatementFile struct {
	Version string // like "camt.053.001.08"
	// Statements are the settlement account's statements, in file order.
	Statements []Statement
	// OtherAccounts counts the statements of other accounts, not read.
	OtherAccounts int
}

// Statement is one account statement of the settlement account.
type Statement struct {
	ID string // <Stmt><Id>
	// Lines are its booked entries.
	Lines []StatementLine
	// Pending and Information count its pending (and future) and its
	// information-only entries: read and checked, never matched.
	Pending, Information int
}

// ParseStatement reads a camt.053 file's statements of the settlement
// account (an account number or IBAN as the statement names it);
// ErrMalformed when the file is no camt.053 of a version read, holds no
// statement or none of that account, or has an entry it cannot read.
func ParseStatement(data []byte, account string) (StatementFile, error) {
	var out StatementFile
	version, err := camtVersion(data)
	if err != nil {
		return out, malformed{fmt.Errorf("read camt.053 statement: %w", err)}
	}
	out.Version = version
	stmts, err := camtVersions[version](data)
	if err != nil {
		return out, malformed{fmt.Errorf("read %s statement: %w", version, err)}
	}
	if len(stmts) == 0 {
		return out, malformed{fmt.Errorf("read %s statement: the file holds no statement (<Stmt>)", version)}
	}
	want := accountKey(account)
	if want == "" {
		return out, malformed{errors.New("read camt.053 statement: ACH_SETTLEMENT_ACCOUNT is not set, so no statement can be matched to the settlement account")}
	}
	var others []string
	for _, st := range stmts {
		if accountKey(st.Account) != want {
			out.OtherAccounts++
			others = append(others, fmt.Sprintf("%q (account %s)", st.ID, maskAccount(st.Account)))
			continue
		}
		s, err := st.read()
		if err != nil {
			return out, malformed{fmt.Errorf("read %s statement: %w", version, err)}
		}
		out.Statements = append(out.Statements, s)
	}
	if len(out.Statements) == 0 {
		return out, malformed{fmt.Errorf("read %s statement: no statement of the settlement account (%s): %s",
			version, maskAccount(account), strings.Join(others, ", "))}
	}
	return out, nil
}

// camtVersion is the camt.053 version the document's namespace names.
func camtVersion(data []byte) (string, error) {
	d := camtDecoder(data)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", errors.New("no document element")
		}
		if err != nil {
			return "", err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		version, isISO := strings.CutPrefix(se.Name.Space, camtNamespace)
		switch {
		case se.Name.Local != "Document" || !isISO || !strings.HasPrefix(version, "camt.053."):
			return "", fmt.Errorf("the document is %q %q, not an ISO 20022 camt.053 Document", se.Name.Space, se.Name.Local)
		case camtVersions[version] == nil:
			return "", fmt.Errorf("%s is not a version read (camt.053.001.02 to camt.053.001.08)", version)
		}
		return version, nil
	}
}

// camtDecoder reads data as UTF-8, as ISO 20022 has it, or as ISO-8859-1
// (or its subset US-ASCII) when the XML declaration says so, as some
// banks' systems write.
func camtDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "iso-8859-1", "iso_8859-1", "latin1", "us-ascii", "ascii":
			raw, err := io.ReadAll(r)
			if err != nil {
				return nil, err
			}
			runes := make([]rune, len(raw))
			for i, c := range raw {
				runes[i] = rune(c)
			}
			return strings.NewReader(string(runes)), nil
		}
		return nil, fmt.Errorf("encoding %q is neither UTF-8 nor ISO-8859-1", label)
	}
	return d
}

// read checks st's entries and returns its statement.
func (st camtStatement) read() (Statement, error) {
	s := Statement{ID: st.ID}
	if strings.TrimSpace(st.ID) == "" {
		return s, errors.New("a statement of the settlement account has no <Id>")
	}
	for i, e := range st.Entries {
		name := fmt.Sprintf("statement %s entry %d", st.ID, i+1)
		if e.Ref != "" {
			name += fmt.Sprintf(" (NtryRef %s)", e.Ref)
		}
		cents, err := e.cents(name)
		if err != nil {
			return s, err
		}
		status, err := e.status(name)
		switch {
		case err != nil:
			return s, err
		case status == statusPending || status == statusFuture:
			s.Pending++
			continue
		case status == statusInformation:
			s.Information++
			continue
		}
		l, err := e.line(st.ID, name, i, cents)
		if err != nil {
			return s, err
		}
		s.Lines = append(s.Lines, l)
	}
	return s, nil
}

// cents is the entry's amount in cents; an error, naming the entry as
// name, unless it is an amount in US dollars.
func (e camtEntry) cents(name string) (int64, error) {
	cents, err := statementAmount(e.Amount)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if e.Currency != "USD" {
		return 0, fmt.Errorf("%s: currency %q; the account is in USD", name, e.Currency)
	}
	return cents, nil
}

// status is the entry's status: BOOK, PDNG, FUTR or INFO, else an error.
func (e camtEntry) status(name string) (string, error) {
	switch e.Status {
	case statusBooked, statusPending, statusFuture, statusInformation:
		return e.Status, nil
	case "":
		return "", fmt.Errorf("%s has no status in this version's layout (<Sts>BOOK</Sts> up to .06, <Sts><Cd>BOOK</Cd></Sts> from .07)", name)
	}
	return "", fmt.Errorf("%s: status %q is neither BOOK, PDNG, FUTR nor INFO", name, e.Status)
}

// line is the booked entry, the i-th of statement id, as a statement
// line of cents: its direction on the account (a reversal books the
// opposite way), its booking date (else its value date) and its
// reference (else the servicer's, else its position).
func (e camtEntry) line(id, name string, i int, cents int64) (StatementLine, error) {
	l := StatementLine{StatementID: id, Cents: cents, Info: e.Info}
	switch e.CdtDbt {
	case "CRDT":
		l.Direction = DirectionCredit
	case "DBIT":
		l.Direction = DirectionDebit
	default:
		return l, fmt.Errorf("%s: CdtDbtInd %q is neither CRDT nor DBIT", name, e.CdtDbt)
	}
	if e.Reversal {
		l.Direction = map[string]string{DirectionCredit: DirectionDebit, DirectionDebit: DirectionCredit}[l.Direction]
	}
	d := e.Booked
	if d.IsZero() {
		d = e.Value
	}
	if d.IsZero() {
		return l, fmt.Errorf("%s has no booking date", name)
	}
	l.Date = d.Format(time.DateOnly)
	l.Ref = cmp.Or(e.Ref, e.ServicerRef, fmt.Sprintf("%d", i+1))
	return l, nil
}

// statementAmount reads an ISO 20022 amount in US dollars into cents:
// digits, and optionally a point and one or two decimals (XML's
// surrounding white space aside). Its cents are money.ParseCents', the
// service's one strict amount parser.
func statementAmount(text string) (int64, error) {
	s := strings.Trim(text, " \t\r\n")
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(v string) bool { return v != "" && strings.Trim(v, "0123456789") == "" }
	if !digits(whole) || dot && (!digits(frac) || len(frac) > 2) {
		return 0, fmt.Errorf("amount %q is not an ISO 20022 amount in USD (digits, an optional point and at most two decimals)", text)
	}
	c, ok := money.ParseCents(s)
	if !ok {
		return 0, fmt.Errorf("amount %q is beyond what one line can book", text)
	}
	return c, nil
}

// accountKey is an account identification as compared: without spaces,
// upper-cased (an IBAN is often written in groups of four).
func accountKey(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// maskAccount shows the last four characters of an account only.
func maskAccount(s string) string {
	k := accountKey(s)
	switch {
	case k == "":
		return "none named"
	case len(k) <= 4:
		return "…"
	}
	return "…" + k[len(k)-4:]
}

// The layout of versions .02 to .07, as far as reconciliation reads it.
// S is the entry status: codeStatus (.02 to .06) or choiceStatus (.07).
type camtDocument[S interface{ code() string }] struct {
	Stmt []struct {
		ID   string `xml:"Id"`
		Acct struct {
			IBAN string `xml:"Id>IBAN"`
			Othr string `xml:"Id>Othr>Id"`
		} `xml:"Acct"`
		Ntry []struct {
			NtryRef      string     `xml:"NtryRef"`
			Amt          camtAmount `xml:"Amt"`
			CdtDbtInd    string     `xml:"CdtDbtInd"`
			RvslInd      bool       `xml:"RvslInd"`
			Sts          S          `xml:"Sts"`
			BookgDt      camtDate   `xml:"BookgDt"`
			ValDt        camtDate   `xml:"ValDt"`
			AcctSvcrRef  string     `xml:"AcctSvcrRef"`
			AddtlNtryInf string     `xml:"AddtlNtryInf"`
		} `xml:"Ntry"`
	} `xml:"BkToCstmrStmt>Stmt"`
}

// camtAmount is an amount as written: its text and currency.
type camtAmount struct {
	Value string `xml:",chardata"`
	Ccy   string `xml:"Ccy,attr"`
}

// codeStatus is EntryStatus2Code: <Sts>BOOK</Sts> (.02 to .06). An
// element inside it leaves no text of its own, so it reads as missing.
type codeStatus struct {
	Text string `xml:",chardata"`
}

func (s codeStatus) code() string { return strings.TrimSpace(s.Text) }

// choiceStatus is EntryStatus1Choice: <Sts><Cd>BOOK</Cd></Sts> (.07).
type choiceStatus struct {
	Cd    string `xml:"Cd"`
	Prtry string `xml:"Prtry"`
}

func (s choiceStatus) code() string { return choiceCode(s.Cd, s.Prtry) }

func choiceCode(cd, prtry string) string {
	if c := strings.TrimSpace(cd); c != "" {
		return c
	}
	if p := strings.TrimSpace(prtry); p != "" {
		return "Prtry:" + p
	}
	return ""
}

// camtDate is DateAndDateTimeChoice: a date, or a date and time whose
// date (as the bank wrote it, in its zone) is the day.
type camtDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

func (c camtDate) date() (time.Time, error) {
	for _, v := range []string{c.Dt, c.DtTm} {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if len(v) < 10 {
			return time.Time{}, fmt.Errorf("date %q is not YYYY-MM-DD", v)
		}
		d, err := time.Parse(time.DateOnly, v[:10])
		if err != nil || len(v) > 10 && !strings.ContainsAny(v[10:11], "T+-Z") {
			return time.Time{}, fmt.Errorf("date %q is not YYYY-MM-DD", v)
		}
		return d, nil
	}
	return time.Time{}, nil
}

func decodeCamt[S interface{ code() string }](data []byte) ([]camtStatement, error) {
	var doc camtDocument[S]
	if err := camtDecoder(data).Decode(&doc); err != nil {
		return nil, err
	}
	var out []camtStatement
	for _, st := range doc.Stmt {
		s := camtStatement{ID: strings.TrimSpace(st.ID), Account: cmpOr(st.Acct.IBAN, st.Acct.Othr)}
		for i, e := range st.Ntry {
			booked, err := e.BookgDt.date()
			if err != nil {
				return nil, fmt.Errorf("statement %s entry %d: booking %w", s.ID, i+1, err)
			}
			value, err := e.ValDt.date()
			if err != nil {
				return nil, fmt.Errorf("statement %s entry %d: value %w", s.ID, i+1, err)
			}
			s.Entries = append(s.Entries, camtEntry{Ref: strings.TrimSpace(e.NtryRef), ServicerRef: strings.TrimSpace(e.AcctSvcrRef),
				Info: e.AddtlNtryInf, Amount: e.Amt.Value, Currency: e.Amt.Ccy, CdtDbt: strings.TrimSpace(e.CdtDbtInd),
				Reversal: e.RvslInd, Status: e.Sts.code(), Booked: booked, Value: value})
		}
		out = append(out, s)
	}
	return out, nil
}

// The layout of version .08: moov-io/iso20022's, with the entries'
// amounts read as text (the shallower field wins over the embedded one).
type camt08Document struct {
	Stmt []camt08Statement `xml:"BkToCstmrStmt>Stmt"`
}

type camt08Statement struct {
	camt_v08.AccountStatement9
	Ntry []camt08Entry `xml:"Ntry"`
}

type camt08Entry struct {
	camt_v08.ReportEntry10
	Amt camtAmount `xml:"Amt"`
}

func decodeCamt08(data []byte) ([]camtStatement, error) {
	var doc camt08Document
	if err := camtDecoder(data).Decode(&doc); err != nil {
		return nil, err
	}
	var out []camtStatement
	for _, st := range doc.Stmt {
		s := camtStatement{ID: strings.TrimSpace(string(st.Id))}
		if st.Acct != nil {
			s.Account = cmpOr(string(st.Acct.Id.IBAN), string(st.Acct.Id.Othr.Id))
		}
		for _, e := range st.Ntry {
			ce := camtEntry{Amount: e.Amt.Value, Currency: e.Amt.Ccy, CdtDbt: strings.TrimSpace(string(e.CdtDbtInd)),
				Reversal: e.RvslInd, Status: choiceCode(string(e.Sts.Cd), string(e.Sts.Prtry)),
				Booked: dateOf(e.BookgDt), Value: dateOf(e.ValDt)}
			if e.NtryRef != nil {
				ce.Ref = strings.TrimSpace(string(*e.NtryRef))
			}
			if e.AcctSvcrRef != nil {
				ce.ServicerRef = strings.TrimSpace(string(*e.AcctSvcrRef))
			}
			if e.AddtlNtryInf != nil {
				ce.Info = string(*e.AddtlNtryInf)
			}
			s.Entries = append(s.Entries, ce)
		}
		out = append(out, s)
	}
	return out, nil
}

func dateOf(c *camt_v08.DateAndDateTime2Choice) time.Time {
	if c == nil {
		return time.Time{}
	}
	if d := time.Time(c.Dt); !d.IsZero() {
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	if d := time.Time(c.DtTm); !d.IsZero() {
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return strings.TrimSpace(a)
	}
	return strings.TrimSpace(b)
}
