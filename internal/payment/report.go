package payment

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The settlements report lists the payments of a merchant environment
// whose settlement date is a given day, each with the line of the bank's
// statement it was reconciled with: its entry's file expects a settlement
// of that date and direction (ach_settlements), which reconciliation
// matched to a statement line. A sandbox payment, which is in no file, has
// no trace number and no statement line.

// MaxReportRows bounds the payments one day's report lists.
const MaxReportRows = 10000

// StatementLine is the bank statement line a settlement was matched to.
type StatementLine struct {
	StatementID string `json:"statement_id"`
	EntryRef    string `json:"entry_ref"`
	BookingDate string `json:"booking_date"` // YYYY-MM-DD
	Direction   string `json:"direction"`    // credit: money in; debit: money out
	Amount      string `json:"amount"`       // the line's total, decimal dollars
}

// SettledPayment is one payment of the report.
type SettledPayment struct {
	PaymentID      string            `json:"payment_id"`
	Direction      Direction         `json:"direction"`
	Amount         string            `json:"amount"`
	Currency       string            `json:"currency"`
	Status         Status            `json:"status"`
	SettlementDate string            `json:"settlement_date"`
	TraceNumber    *string           `json:"trace_number"`
	RefundOf       *string           `json:"refund_of"`
	ReversalOf     *string           `json:"reversal_of"`
	Metadata       metadata.Metadata `json:"metadata"`
	StatementLine  *StatementLine    `json:"statement_line"`
}

// SettlementReport is one day's report.
type SettlementReport struct {
	Date string           `json:"date"`
	Data []SettledPayment `json:"data"`
}

// SettlementReport reports the payments settled on date (YYYY-MM-DD); a
// date that is not one is invalid_request.
func (s *Service) SettlementReport(ctx context.Context, scope tenant.Scope, date string) (SettlementReport, error) {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil || d.Format(time.DateOnly) != date {
		return SettlementReport{}, errs.Invalid("date", "date must be a day as YYYY-MM-DD, like 2026-12-01")
	}
	rows, err := s.store.SettledPayments(ctx, scope, d, MaxReportRows)
	if err != nil {
		return SettlementReport{}, err
	}
	if rows == nil {
		rows = []SettledPayment{}
	}
	return SettlementReport{Date: date, Data: rows}, nil
}

// CSVHeader is the settlements report's CSV header row.
var CSVHeader = []string{"payment_id", "direction", "amount", "currency", "status", "settlement_date", "trace_number",
	"refund_of", "reversal_of", "metadata", "statement_id", "statement_entry_ref", "statement_booking_date",
	"statement_direction", "statement_amount"}

// WriteCSV writes r as CSV (RFC 4180): the header row, then one row per
// payment; metadata is its JSON object, an absent value an empty field.
func (r SettlementReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, p := range r.Data {
		meta, _ := json.Marshal(p.Metadata) // strings only: never fails
		row := []string{p.PaymentID, string(p.Direction), p.Amount, p.Currency, string(p.Status), p.SettlementDate,
			deref(p.TraceNumber), deref(p.RefundOf), deref(p.ReversalOf), string(meta), "", "", "", "", ""}
		if l := p.StatementLine; l != nil {
			copy(row[10:], []string{l.StatementID, l.EntryRef, l.BookingDate, l.Direction, l.Amount})
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
