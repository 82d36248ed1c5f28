// Package camttest writes bank statements as banks do: ISO 20022
// camt.053 BankToCustomerStatement documents in the published layout of
// each version from .001.02 to .001.08, for tests of what reads them.
// It writes the text itself (no ISO 20022 library), element by element in
// the schemas' order, so a test controls every character a bank could
// put there: an amount's spelling, a status in another version's layout,
// an account in IBAN groups.
package camttest

import (
	"fmt"
	"html"
	"strings"
)

// Versions are the camt.053 versions, oldest first.
var Versions = []string{
	"camt.053.001.02", "camt.053.001.03", "camt.053.001.04", "camt.053.001.05",
	"camt.053.001.06", "camt.053.001.07", "camt.053.001.08",
}

// Namespace is the XML namespace of version v.
func Namespace(v string) string { return "urn:iso:std:iso:20022:tech:xsd:" + v }

// Statement is one <Stmt>: its id and account (IBAN, else Other: the
// account number in <Othr><Id>) and its entries.
type Statement struct {
	ID      string
	IBAN    string
	Other   string
	Entries []Entry
}

// Status layouts a test may force on an entry.
const (
	LayoutCode   = "code"   // <Sts>BOOK</Sts> (EntryStatus2Code, .02 to .06)
	LayoutChoice = "choice" // <Sts><Cd>BOOK</Cd></Sts> (EntryStatus1Choice, .07 and later)
	LayoutPrtry  = "prtry"  // <Sts><Prtry>…</Prtry></Sts>
)

// Entry is one <Ntry>. Zero values take the common case: currency USD,
// CRDT, status BOOK in the version's own layout, booked 2026-11-05.
type Entry struct {
	Ref      string // NtryRef; empty writes none
	Amount   string // the amount's text, written as is
	Currency string
	CdtDbt   string
	Status   string
	// Layout forces a status layout (LayoutCode, LayoutChoice,
	// LayoutPrtry); empty is the version's.
	Layout   string
	Reversal bool
	Booked   string // YYYY-MM-DD; "-" writes no booking date
	// DateTime writes the booking date as a date and time of the bank's
	// zone (<DtTm>) rather than a date.
	DateTime bool
	Info     string
}

// Choice reports whether version v writes an entry's status as a choice
// (<Sts><Cd>): from .07 on.
func Choice(v string) bool { return v >= "camt.053.001.07" }

// Document writes a camt.053 file of version v holding stmts.
func Document(v string, stmts ...Statement) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<Document xmlns="%s" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`+"\n", Namespace(v))
	b.WriteString("<BkToCstmrStmt>\n")
	b.WriteString("<GrpHdr><MsgId>MSG-20261105-1</MsgId><CreDtTm>2026-11-05T22:00:00</CreDtTm>")
	b.WriteString("<MsgPgntn><PgNb>1</PgNb><LastPgInd>true</LastPgInd></MsgPgntn></GrpHdr>\n")
	for i, s := range stmts {
		writeStatement(&b, v, i+1, s)
	}
	b.WriteString("</BkToCstmrStmt>\n</Document>\n")
	return []byte(b.String())
}

func writeStatement(b *strings.Builder, v string, seq int, s Statement) {
	b.WriteString("<Stmt>")
	fmt.Fprintf(b, "<Id>%s</Id><ElctrncSeqNb>%d</ElctrncSeqNb><CreDtTm>2026-11-05T22:00:00</CreDtTm>", esc(s.ID), seq)
	b.WriteString("<Acct><Id>")
	if s.IBAN != "" {
		fmt.Fprintf(b, "<IBAN>%s</IBAN>", esc(s.IBAN))
	} else if s.Other != "" {
		fmt.Fprintf(b, "<Othr><Id>%s</Id></Othr>", esc(s.Other))
	}
	b.WriteString("</Id><Ccy>USD</Ccy><Svcr><FinInstnId><BIC>BOFAUS3NXXX</BIC></FinInstnId></Svcr></Acct>\n")
	// An opening booked balance: every statement of every version has
	// one.
	b.WriteString("<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"USD\">1000.00</Amt>" +
		"<CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-05</Dt></Dt></Bal>\n")
	for _, e := range s.Entries {
		writeEntry(b, v, e)
	}
	b.WriteString("</Stmt>\n")
}

func writeEntry(b *strings.Builder, v string, e Entry) {
	b.WriteString("<Ntry>")
	if e.Ref != "" {
		fmt.Fprintf(b, "<NtryRef>%s</NtryRef>", esc(e.Ref))
	}
	fmt.Fprintf(b, `<Amt Ccy="%s">%s</Amt>`, or(e.Currency, "USD"), esc(e.Amount))
	fmt.Fprintf(b, "<CdtDbtInd>%s</CdtDbtInd>", or(e.CdtDbt, "CRDT"))
	if e.Reversal {
		b.WriteString("<RvslInd>true</RvslInd>")
	}
	status := or(e.Status, "BOOK")
	layout := e.Layout
	if layout == "" {
		layout = LayoutCode
		if Choice(v) {
			layout = LayoutChoice
		}
	}
	switch layout {
	case LayoutCode:
		fmt.Fprintf(b, "<Sts>%s</Sts>", esc(status))
	case LayoutChoice:
		fmt.Fprintf(b, "<Sts><Cd>%s</Cd></Sts>", esc(status))
	case LayoutPrtry:
		fmt.Fprintf(b, "<Sts><Prtry>%s</Prtry></Sts>", esc(status))
	}
	booked := or(e.Booked, "2026-11-05")
	if booked != "-" {
		if e.DateTime {
			fmt.Fprintf(b, "<BookgDt><DtTm>%sT18:30:00-05:00</DtTm></BookgDt>", booked)
		} else {
			fmt.Fprintf(b, "<BookgDt><Dt>%s</Dt></BookgDt>", booked)
		}
		fmt.Fprintf(b, "<ValDt><Dt>%s</Dt></ValDt>", booked)
	}
	b.WriteString("<AcctSvcrRef>BANKREF-" + esc(or(e.Ref, "X")) + "</AcctSvcrRef>")
	family := "RCDT"
	if e.CdtDbt == "DBIT" {
		family = "ICDT"
	}
	fmt.Fprintf(b, "<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>%s</Cd><SubFmlyCd>ACDT</SubFmlyCd></Fmly></Domn>"+
		"<Prtry><Cd>165</Cd><Issr>BAI</Issr></Prtry></BkTxCd>", family)
	if e.Info != "" {
		fmt.Fprintf(b, "<AddtlNtryInf>%s</AddtlNtryInf>", esc(e.Info))
	}
	b.WriteString("</Ntry>\n")
}

func esc(s string) string { return html.EscapeString(s) }

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
