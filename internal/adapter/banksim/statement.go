package banksim

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"slices"
	"time"

	nacha "github.com/moov-io/ach"
	"github.com/moov-io/iso20022/pkg/camt_v08"
	"github.com/moov-io/iso20022/pkg/common"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/money"
)

// # Statements
//
// On every banking day it books money, the network writes the ODFI's
// statement of the originator's account in ISO 20022 camt.053
// (BankToCustomerStatement, version 08, built with
// github.com/moov-io/iso20022) into the inbox, beside the returns:
// achnet-stmt-YYYYMMDD-NNN.xml. Each outbox file is booked on the
// banking day it settles, one entry per effective date and direction
// (its debits' total a credit to the account, its credits' total a
// debit; the ODFI's own offsetting debit is on us and not booked); each
// file of returns the network writes is booked the day it is written
// (a returned debit a debit, a returned credit a credit). The rule is
// ach.SettlementsOf, the same the originator expects by. The state
// remembers what was booked, so nothing is booked twice.

// booking is one statement entry to write.
type booking struct {
	odfi string // the originator's bank (9 digits): one statement each
	key  string // bookingKey
	ach.Settlement
	ref string // the file it books
}

const camt053 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"

type statementDocument struct {
	XMLName xml.Name               `xml:"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08 Document"`
	GrpHdr  camt_v08.GroupHeader81 `xml:"BkToCstmrStmt>GrpHdr"`
	Stmt    []statementOfAccount   `xml:"BkToCstmrStmt>Stmt"`
}

// statementOfAccount and statementEntry are moov-io/iso20022's, with the
// amounts written as ISO 20022 decimals (its float64 writes 1e+06).
type statementOfAccount struct {
	camt_v08.AccountStatement9
	Ntry []statementEntry `xml:"Ntry"`
}

type statementEntry struct {
	camt_v08.ReportEntry10
	Amt struct {
		Value string `xml:",chardata"`
		Ccy   string `xml:"Ccy,attr"`
	} `xml:"Amt"`
}

// Account is the name the statements give the originator's account at
// odfi: ACH_SETTLEMENT_ACCOUNT of a service the network answers.
func Account(odfi string) string { return "ODFI-" + odfi }

// bookOutbox is what outbox file name books by date and has not booked
// before: each effective date's totals on the banking day it settles
// (the effective date, or the day the network first read the file when
// that is later).
func (n *Network) bookOutbox(st *state, name string, fst fileState, f *nacha.File, date calendar.Date) []booking {
	read, _ := time.Parse(dateLayout, fst.Read)
	odfi := f.Header.ImmediateOrigin
	var out []booking
	for _, s := range ach.SettlementsOf(f, true, trim(odfi)) {
		effective, _ := time.Parse(time.DateOnly, s.Date)
		settles := BankingDayOnOrAfter(latest(effective, read))
		key := name + "@" + fst.SHA256[:16] + "/" + s.Date + "/" + s.Direction
		if settles.After(date) || st.Booked[key] != "" {
			continue
		}
		out = append(out, booking{odfi: trim(odfi), key: key, Settlement: s, ref: name})
	}
	return out
}

// bookAnswers is what an inbox file of returns the network wrote books.
func (n *Network) bookAnswers(name, odfi string, data []byte, date calendar.Date) []booking {
	f, err := nacha.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		return nil // built and checked by the network a moment ago
	}
	var out []booking
	for _, s := range ach.SettlementsOf(&f, false, odfi) {
		out = append(out, booking{odfi: odfi, key: name + "/" + s.Date + "/" + s.Direction, Settlement: s, ref: name})
	}
	return out
}

// statements writes, on a banking day, one statement per ODFI of what
// books, and records it booked.
func (n *Network) statements(ctx context.Context, st *state, date calendar.Date, books []booking, sum *Summary) error {
	if !sum.BankingDay || len(books) == 0 {
		return nil
	}
	if st.Booked == nil {
		st.Booked = map[string]string{}
	}
	byODFI := map[string][]booking{}
	var odfis []string
	for _, b := range books {
		if byODFI[b.odfi] == nil {
			odfis = append(odfis, b.odfi)
		}
		byODFI[b.odfi] = append(byODFI[b.odfi], b)
	}
	slices.Sort(odfis)
	for _, odfi := range odfis {
		st.Statements++
		name := fmt.Sprintf("achnet-stmt-%s-%03d.xml", date.Format("20060102"), st.Statements)
		data, err := statement(odfi, fmt.Sprintf("STMT-%s-%03d", date.Format("20060102"), st.Statements), date, byODFI[odfi])
		if err != nil {
			return fmt.Errorf("build %s: %w", name, err)
		}
		// The statement must read back as the originator reads it.
		if _, err := ach.ParseStatement(data, Account(odfi)); err != nil {
			return fmt.Errorf("build %s: %w", name, err)
		}
		where, err := n.Exchange.Deliver(ctx, name, data)
		if err != nil {
			return err
		}
		sum.Statements = append(sum.Statements, where)
		for _, b := range byODFI[odfi] {
			st.Booked[b.key] = date.Format(dateLayout)
		}
	}
	return nil
}

// statement renders one camt.053 statement of the originator's account
// at odfi, booked on date.
func statement(odfi, id string, date calendar.Date, books []booking) ([]byte, error) {
	created := common.ISODateTime(time.Date(date.Year(), date.Month(), date.Day(), 22, 0, 0, 0, time.UTC))
	day := common.ISODate(date)
	account := common.Max34Text(Account(odfi))
	s := statementOfAccount{AccountStatement9: camt_v08.AccountStatement9{
		Id: common.Max35Text(id), CreDtTm: &created,
		Acct: &camt_v08.CashAccount39{Id: camt_v08.AccountIdentification4Choice{Othr: camt_v08.GenericAccountIdentification1{Id: account}}},
	}}
	for i, b := range books {
		ref := common.Max35Text(fmt.Sprintf("%s-%d", id, i+1))
		info := common.Max500Text(fmt.Sprintf("ACH %s %s %d entries", b.ref, b.Settlement.Date, b.Entries))
		cd := common.CreditDebitCode("CRDT")
		if b.Direction == ach.DirectionDebit {
			cd = "DBIT"
		}
		e := statementEntry{ReportEntry10: camt_v08.ReportEntry10{
			NtryRef: &ref, CdtDbtInd: cd, Sts: camt_v08.EntryStatus1Choice{Cd: "BOOK"},
			BookgDt: &camt_v08.DateAndDateTime2Choice{Dt: day}, ValDt: &camt_v08.DateAndDateTime2Choice{Dt: day},
			AddtlNtryInf: &info,
		}}
		e.Amt.Value, e.Amt.Ccy = money.Format(b.Cents), "USD"
		s.Ntry = append(s.Ntry, e)
	}
	doc := statementDocument{GrpHdr: camt_v08.GroupHeader81{MsgId: common.Max35Text(id), CreDtTm: created},
		Stmt: []statementOfAccount{s}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func trim(s string) string { return string(bytes.TrimSpace([]byte(s))) }
