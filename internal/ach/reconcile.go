package ach

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/moov-io/iso20022/pkg/camt_v08"
)

// Reconciliation compares what the bank says it booked on the
// originator's account with what the service expects (settlements): the
// bank's end-of-day statement is an ISO 20022 camt.053
// (BankToCustomerStatement), read with github.com/moov-io/iso20022. Each
// booked statement entry is matched to one expected settlement of the same
// direction and amount, dated on the entry's booking date or up to
// MatchDays before (the bank books a file it read after its effective
// date on the day it settles it). The totals of one file's batches of one
// effective date are one line, as banks post an ACH file's settlement;
// the money of a return file is one line per direction. A delivered file
// whose every line is matched is settled. What stays unmatched on either
// side is for a person: a line the service did not expect, or money the
// service expects that the bank has not booked.

// MatchDays is how many calendar days before a statement line's booking
// date an expected settlement may be dated.
const MatchDays = 7

// StatementLine is one booked entry of a statement.
type StatementLine struct {
	ID           int64  `json:"-"`
	StatementSHA string `json:"statement_sha256"`
	StatementID  string `json:"statement_id"`
	Ref          string `json:"entry_ref"`
	Date         string `json:"booking_date"` // YYYY-MM-DD
	Direction    string `json:"direction"`    // DirectionCredit or DirectionDebit
	Cents        int64  `json:"amount_cents"`
	Info         string `json:"info"`
	SettlementID int64  `json:"-"` // 0 while unmatched
}

// ReconcileResult is what one statement did.
type ReconcileResult struct {
	Lines     int `json:"lines"`
	Matched   int `json:"matched"`
	Unmatched int `json:"unmatched"`
	// Settled names the files settled by this statement.
	Settled []string `json:"settled"`
}

type camtDocument struct {
	XMLName xml.Name
	Stmt    *camt_v08.BankToCustomerStatementV08 `xml:"BkToCstmrStmt"`
}

// ParseStatement reads a camt.053 statement's booked entries (USD only);
// ErrMalformed when it is not one.
func ParseStatement(data []byte) ([]StatementLine, error) {
	var doc camtDocument
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, malformed{fmt.Errorf("read camt.053 statement: %w", err)}
	}
	if doc.XMLName.Local != "Document" || !strings.Contains(doc.XMLName.Space, "camt.053.") || doc.Stmt == nil {
		return nil, malformed{fmt.Errorf("read camt.053 statement: the document is %q %q, not a BkToCstmrStmt", doc.XMLName.Space, doc.XMLName.Local)}
	}
	var lines []StatementLine
	for _, st := range doc.Stmt.Stmt {
		for i, e := range st.Ntry {
			status := strings.TrimSpace(string(e.Sts.Cd) + string(e.Sts.Prtry))
			if status != "" && status != "BOOK" {
				continue // pending or information only: not money yet
			}
			if c := string(e.Amt.Ccy); c != "USD" {
				return nil, malformed{fmt.Errorf("statement %s entry %d: currency %q; the account is in USD", st.Id, i+1, c)}
			}
			if v := e.Amt.Value; math.IsNaN(v) || v < 0 || v > 1e13 {
				return nil, malformed{fmt.Errorf("statement %s entry %d: amount %v is not a booked amount", st.Id, i+1, v)}
			}
			l := StatementLine{StatementID: string(st.Id), Cents: int64(math.Round(e.Amt.Value * 100))}
			switch e.CdtDbtInd {
			case "CRDT":
				l.Direction = DirectionCredit
			case "DBIT":
				l.Direction = DirectionDebit
			default:
				return nil, malformed{fmt.Errorf("statement %s entry %d: CdtDbtInd %q is neither CRDT nor DBIT", st.Id, i+1, e.CdtDbtInd)}
			}
			if e.RvslInd {
				// A reversal books the opposite way.
				l.Direction = map[string]string{DirectionCredit: DirectionDebit, DirectionDebit: DirectionCredit}[l.Direction]
			}
			d := dateOf(e.BookgDt)
			if d.IsZero() {
				d = dateOf(e.ValDt)
			}
			if d.IsZero() {
				return nil, malformed{fmt.Errorf("statement %s entry %d has no booking date", st.Id, i+1)}
			}
			l.Date = d.Format(time.DateOnly)
			if e.NtryRef != nil {
				l.Ref = string(*e.NtryRef)
			} else if e.AcctSvcrRef != nil {
				l.Ref = string(*e.AcctSvcrRef)
			} else {
				l.Ref = fmt.Sprintf("%d", i+1)
			}
			if e.AddtlNtryInf != nil {
				l.Info = string(*e.AddtlNtryInf)
			}
			lines = append(lines, l)
		}
	}
	return lines, nil
}

func dateOf(c *camt_v08.DateAndDateTime2Choice) time.Time {
	if c == nil {
		return time.Time{}
	}
	if d := time.Time(c.Dt); !d.IsZero() {
		return d
	}
	if d := time.Time(c.DtTm); !d.IsZero() {
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	return time.Time{}
}

// reconcileTx records a statement's lines in tx and matches them.
func (o *Originator) reconcileTx(ctx context.Context, tx Store, digest string, data []byte) (ReconcileResult, error) {
	lines, err := ParseStatement(data)
	if err != nil {
		return ReconcileResult{}, err
	}
	res := ReconcileResult{Lines: len(lines), Settled: []string{}}
	for _, l := range lines {
		l.StatementSHA = digest
		if _, err := tx.InsertStatementLine(ctx, l); err != nil {
			return res, err
		}
	}
	matched, settled, err := o.match(ctx, tx)
	if err != nil {
		return res, err
	}
	res.Matched = matched
	res.Unmatched = len(lines) - matched
	for _, f := range settled {
		res.Settled = append(res.Settled, f.Name)
	}
	return res, nil
}

// matchOpen matches what is open on both sides after new settlements
// arrived (a return file listed after the statement that books it).
func (o *Originator) matchOpen(ctx context.Context, tx Store) error {
	_, _, err := o.match(ctx, tx)
	return err
}

// match pairs every unmatched recent statement line it can, then settles
// the files whose lines are all matched, logging each.
func (o *Originator) match(ctx context.Context, tx Store) (int, []File, error) {
	now := o.now().UTC()
	open, err := tx.UnmatchedLines(ctx, now.AddDate(0, 0, -90).Format(time.DateOnly))
	if err != nil {
		return 0, nil, err
	}
	matched := 0
	for _, l := range open {
		ok, err := tx.MatchSettlement(ctx, l, now)
		if err != nil {
			return matched, nil, err
		}
		if ok {
			matched++
		}
	}
	settled, err := tx.SettleMatchedFiles(ctx, now)
	if err != nil {
		return matched, nil, err
	}
	for _, f := range settled {
		o.logger().Info("ACH file settled: the bank's statement shows its settlement",
			slog.String("file_id", f.ID), slog.String("name", f.Name), slog.String("status", StatusSettled))
	}
	return matched, settled, nil
}

// Reconcile applies a statement handed over by an operator, once by its
// SHA-256 like a listed one.
func (o *Originator) Reconcile(ctx context.Context, name string, data []byte) (Inbound, error) {
	if kindOf(data) != KindStatement {
		return Inbound{}, malformed{errors.New("not an ISO 20022 camt.053 statement (XML)")}
	}
	in, err := o.Receive(ctx, name, data)
	if err == nil && in.Status == InboundRejected {
		err = malformed{errors.New(in.Error)}
	}
	return in, err
}

// Match is a matched pair of the reconciliation report.
type Match struct {
	Statement StatementLine `json:"statement"`
	Service   Settlement    `json:"service"`
}

// Report is a date's reconciliation: statement lines booked that day and
// settlements expected that day, matched or not.
type Report struct {
	Date      string  `json:"date"`
	Matched   []Match `json:"matched"`
	Unmatched struct {
		Statement []StatementLine `json:"statement"`
		Service   []Settlement    `json:"service"`
	} `json:"unmatched"`
}

// Reconciliation reports date (YYYY-MM-DD).
func (o *Originator) Reconciliation(ctx context.Context, date string) (Report, error) {
	r := Report{Date: date, Matched: []Match{}}
	r.Unmatched.Statement, r.Unmatched.Service = []StatementLine{}, []Settlement{}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return r, fmt.Errorf("--date is YYYY-MM-DD: %w", err)
	}
	lines, settlements, err := o.store.Reconciliation(ctx, date)
	if err != nil {
		return r, err
	}
	byID := map[int64]Settlement{}
	for _, s := range settlements {
		byID[s.ID] = s
	}
	for _, l := range lines {
		if s, ok := byID[l.SettlementID]; ok && l.SettlementID != 0 {
			r.Matched = append(r.Matched, Match{Statement: l, Service: s})
		} else {
			r.Unmatched.Statement = append(r.Unmatched.Statement, l)
		}
	}
	for _, s := range settlements {
		if s.Date == date && !s.Matched {
			r.Unmatched.Service = append(r.Unmatched.Service, s)
		}
	}
	return r, nil
}

// unmatched gauges, refreshed after each poll.
type unmatchedGauges struct{ statement, service atomic.Int64 }

// refreshUnmatched reads the unmatched counts for /metrics.
func (o *Originator) refreshUnmatched(ctx context.Context) {
	st, svc, err := o.store.UnmatchedCounts(ctx)
	if err != nil {
		return
	}
	o.unmatched.statement.Store(st)
	o.unmatched.service.Store(svc)
}

// Unmatched returns the unmatched statement lines and the expected
// settlements the statements have not shown, as of the last poll.
func (o *Originator) Unmatched() (statement, service int64) {
	return o.unmatched.statement.Load(), o.unmatched.service.Load()
}
