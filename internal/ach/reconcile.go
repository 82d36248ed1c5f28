package ach

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Reconciliation compares what the bank says it booked on the
// settlement account with what the service expects (settlements): the
// bank's end-of-day statement is an ISO 20022 camt.053
// (BankToCustomerStatement), read in its version's layout (reconcile_camt.go), the
// settlement account's statements only, each once by its <Stmt><Id>.
// Each booked statement entry is matched to one expected settlement of
// the same direction and amount, dated on the entry's booking date or up
// to MatchDays before (the bank books a file it read after its effective
// date on the day it settles it). The totals of one file's batches of one
// effective date are one line, as banks post an ACH file's settlement;
// the money of a return file is one line per direction. A delivered file
// whose every line is matched is settled, and with it its payments: the
// bank's booking date, not the date the file asked for, is when their
// money moved, so it becomes their settlement date, from which their
// return windows run, and they are processed through the payment
// service as at their settle time. What stays unmatched on either side
// is for a person: a line the service did not expect, or money the
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

// ReconcileResult is what one statement file did.
type ReconcileResult struct {
	Version string `json:"version"` // the camt.053 version read
	// Statements counts the settlement account's statements read now;
	// Duplicates those whose <Stmt><Id> was read before (nothing of them
	// is recorded); OtherAccounts the statements of other accounts, not
	// read.
	Statements    int `json:"statements"`
	Duplicates    int `json:"duplicates"`
	OtherAccounts int `json:"other_accounts"`
	// Lines counts the booked lines recorded; Pending and Information the
	// entries counted and never matched.
	Lines       int `json:"lines"`
	Pending     int `json:"pending"`
	Information int `json:"information"`
	Matched     int `json:"matched"`
	Unmatched   int `json:"unmatched"`
	// Settled names the files settled by this statement.
	Settled []string `json:"settled"`
	// PaymentsSettled counts the payments of those files that took the
	// booking date as their settlement date.
	PaymentsSettled int `json:"payments_settled"`
}

// reconcileTx records a statement file's new statements in tx and
// matches their lines.
func (o *Originator) reconcileTx(ctx context.Context, tx Store, digest string, data []byte) (ReconcileResult, error) {
	file, err := ParseStatement(data, o.cfg.SettlementAccount)
	if err != nil {
		return ReconcileResult{}, err
	}
	res := ReconcileResult{Version: file.Version, OtherAccounts: file.OtherAccounts, Settled: []string{}}
	if file.OtherAccounts > 0 {
		o.logger().Info("camt.053 statements of other accounts not read", slog.String("sha256", digest),
			slog.Int("other_accounts", file.OtherAccounts))
	}
	for _, st := range file.Statements {
		fresh, err := tx.ClaimStatement(ctx, st.ID, digest, o.now(ctx).UTC())
		if err != nil {
			return res, fmt.Errorf("claim statement %s: %w", st.ID, err)
		}
		if !fresh {
			res.Duplicates++
			continue
		}
		res.Statements++
		res.Pending += st.Pending
		res.Information += st.Information
		for _, l := range st.Lines {
			l.StatementSHA = digest
			if _, err := tx.InsertStatementLine(ctx, l); err != nil {
				return res, fmt.Errorf("record statement %s line %s: %w", st.ID, l.Ref, err)
			}
			res.Lines++
		}
	}
	matched, settled, err := o.match(ctx, tx)
	res.Matched, res.Unmatched = matched, res.Lines-matched
	for _, f := range settled.files {
		res.Settled = append(res.Settled, f.Name)
	}
	res.PaymentsSettled = settled.payments
	return res, err
}

// matchOpen matches what is open on both sides after new settlements
// arrived (a return file listed after the statement that books it).
func (o *Originator) matchOpen(ctx context.Context, tx Store) error {
	_, _, err := o.match(ctx, tx)
	return err
}

// settledNow is what one match settled: files, and their payments.
type settledNow struct {
	files    []File
	payments int
}

// match pairs every unmatched recent statement line it can, then settles
// the files whose lines are all matched, and their payments, logging
// each file.
func (o *Originator) match(ctx context.Context, tx Store) (int, settledNow, error) {
	var out settledNow
	now := o.now(ctx).UTC()
	open, err := tx.UnmatchedLines(ctx, now.AddDate(0, 0, -90).Format(time.DateOnly))
	if err != nil {
		return 0, out, err
	}
	matched := 0
	for _, l := range open {
		ok, err := tx.MatchSettlement(ctx, l, now)
		if err != nil {
			return matched, out, err
		}
		if ok {
			matched++
		}
	}
	if out.files, err = tx.SettleMatchedFiles(ctx, now); err != nil {
		return matched, out, err
	}
	for _, f := range out.files {
		n, err := o.settlePayments(ctx, tx, f)
		if err != nil {
			return matched, out, err
		}
		out.payments += n
		o.logger().Info("ACH file settled: the bank's statement shows its settlement",
			slog.String("file_id", f.ID), slog.String("name", f.Name), slog.String("status", StatusSettled),
			slog.Int("payments", n))
	}
	return matched, out, nil
}

// settlePayments settles, in tx, the payments of file f, which the
// statements just settled: each takes the booking date of the line that
// matched its entry's settlement as its settlement date and is processed
// through the payment service (payment.success, and from then its debit
// is at risk until its unauthorized-return window closes).
func (o *Originator) settlePayments(ctx context.Context, tx Store, f File) (int, error) {
	ps, err := tx.SettledFilePayments(ctx, f.ID)
	if err != nil {
		return 0, fmt.Errorf("list the payments of settled file %s: %w", f.Name, err)
	}
	for _, p := range ps {
		if err := o.consequences.SettledTx(ctx, tx, p.Scope, p.PaymentID, p.Date); err != nil {
			return 0, fmt.Errorf("settle payment %s of file %s: %w", p.PaymentID, f.Name, err)
		}
	}
	return len(ps), nil
}

// SettledPayment is a payment of a settled file and the booking date of
// the statement line that settled its entry.
type SettledPayment struct {
	Scope     tenant.Scope
	PaymentID string
	Date      calendar.Date // the booking date, midnight UTC
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
