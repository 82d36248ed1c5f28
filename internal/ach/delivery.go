package ach

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"
)

// File statuses. A file is built when its entries are assigned, delivered
// once the transport has it, failed while its delivery failed (it is
// delivered again at the next run), settled once the bank's statement
// shows its settlement (reconcile.go).
const (
	StatusBuilt     = "built"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	StatusSettled   = "settled"
	// statusBuilding and statusWritten are what releases before files had
	// a life wrote (and still write during an upgrade): building reads
	// as built, written as delivered to the outbox folder.
	statusBuilding = "building"
	statusWritten  = "written"
)

// Totals are what a built file carries: its entry detail records and the
// file control record's debit and credit totals (offsetting debits
// included), in cents.
type Totals struct {
	Entries int
	Debit   int64
	Credit  int64
	SHA256  string
}

// Settlement is one line the service expects on its account's statement:
// a delivered file's, or a return file's, total of one settlement date
// in one direction, as the bank books it on the originator's account.
type Settlement struct {
	ID            int64  `json:"-"`
	FileID        string `json:"file_id,omitempty"`        // an outbound file's, or
	InboundSHA256 string `json:"inbound_sha256,omitempty"` // a return file's
	Name          string `json:"name"`                     // the file's name (read back only)
	Date          string `json:"settle_date"`              // YYYY-MM-DD
	Direction     string `json:"direction"`                // DirectionCredit (money in) or DirectionDebit
	Cents         int64  `json:"amount_cents"`
	Entries       int    `json:"entries"`
	Matched       bool   `json:"matched"` // a statement line matched it (read back only)
}

// Statement directions, as camt.053 books them on the originator's
// account.
const (
	DirectionCredit = "credit"
	DirectionDebit  = "debit"
)

// WithTransport sets where files go and answers come from; without it,
// the outbox folder of Config and no inbox.
func (o *Originator) WithTransport(t Transport) *Originator {
	o.transport = t
	return o
}

// WithLog sets the logger of file transitions (one line each).
func (o *Originator) WithLog(l *slog.Logger) *Originator {
	o.log = l
	return o
}

// DeliveryFailures counts failed deliveries since the process started.
func (o *Originator) DeliveryFailures() int64 { return o.failures.Load() }

// deliverAll delivers the files left built or failed, then the ones just
// assigned; a delivery that fails leaves its file failed for the next run
// and does not stop the others.
func (o *Originator) deliverAll(ctx context.Context, files []File) ([]string, error) {
	var delivered []string
	var failed []error
	for _, f := range files {
		ok, err := o.deliver(ctx, f)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if ok {
			delivered = append(delivered, f.Name)
		}
	}
	return delivered, errors.Join(failed...)
}

// deliver hands one file to the transport under its row's lock, taken
// with SKIP LOCKED: however many processes run, one delivers a file, and
// a file delivered meanwhile is skipped (false). The lock is held while
// the file is uploaded, so the status change commits with the knowledge
// that the transport has it; a crash between the two delivers the same
// bytes under the same name again, which the transport replaces.
func (o *Originator) deliver(ctx context.Context, f File) (bool, error) {
	var delivered bool
	var failure error
	var totals Totals
	err := o.store.WithTx(ctx, func(tx Store) error {
		locked, err := tx.LockUndeliveredACHFile(ctx, f.ID)
		if err != nil || !locked {
			return err
		}
		data, err := o.render(ctx, f)
		if err != nil {
			return fmt.Errorf("build ACH file %s: %w", f.Name, err)
		}
		file, err := nacha.NewReader(strings.NewReader(string(data))).Read()
		if err != nil {
			return fmt.Errorf("read back ACH file %s: %w", f.Name, err)
		}
		totals = fileTotals(&file, data)
		if err := o.transport.Deliver(ctx, f.Name, data); err != nil {
			failure = err
			return tx.MarkACHFileFailed(ctx, f.ID, err.Error(), totals)
		}
		if err := tx.MarkACHFileDelivered(ctx, f.ID, o.transport.Kind(), o.now().UTC(), totals); err != nil {
			return err
		}
		for _, s := range SettlementsOf(&file, true, o.cfg.ODFIRouting) {
			s.FileID = f.ID
			if err := tx.InsertSettlement(ctx, s); err != nil {
				return err
			}
		}
		delivered = true
		return nil
	})
	switch {
	case err != nil:
		return false, err
	case failure != nil:
		o.failures.Add(1)
		o.logger().Warn("ACH file delivery failed; it is delivered again at the next run",
			slog.String("file_id", f.ID), slog.String("name", f.Name), slog.String("status", StatusFailed),
			slog.String("transport", o.transport.Kind()), slog.Any("error", failure))
		return false, fmt.Errorf("deliver ACH file %s: %w", f.Name, failure)
	case delivered:
		o.logger().Info("ACH file delivered", slog.String("file_id", f.ID), slog.String("name", f.Name),
			slog.String("status", StatusDelivered), slog.String("transport", o.transport.Kind()),
			slog.Int("entries", totals.Entries), slog.Int64("debit_cents", totals.Debit), slog.Int64("credit_cents", totals.Credit))
	}
	return delivered, nil
}

// render builds f's bytes from its stored rows.
func (o *Originator) render(ctx context.Context, f File) ([]byte, error) {
	entries, err := o.store.ACHEntries(ctx, f.ID)
	if err != nil {
		return nil, err
	}
	dishonors, err := o.store.ACHDishonors(ctx, f.ID)
	if err != nil {
		return nil, err
	}
	return o.build(ctx, f, entries, dishonors)
}

func fileTotals(f *nacha.File, data []byte) Totals {
	sum := sha256.Sum256(data)
	t := Totals{Debit: int64(f.Control.TotalDebitEntryDollarAmountInFile), Credit: int64(f.Control.TotalCreditEntryDollarAmountInFile),
		SHA256: hex.EncodeToString(sum[:])}
	for _, b := range f.Batches {
		t.Entries += len(b.GetEntries())
	}
	return t
}

// SettlementsOf is what file f moves on the originator's account at its
// ODFI (odfi, 9 digits), per settlement date and direction, as the bank
// books it: for a file the originator sent (outbound), its debits come
// in (credit) and its credits go out (debit) on the batches' effective
// dates; for a file of returns the bank sent, a returned debit goes out
// again and a returned credit comes back. Entries to the ODFI's own
// routing number (a micro-deposit batch's offsetting debit, posted on
// us) and zero-dollar entries (notifications of change) move nothing.
// achnet books its statements by the same rule.
func SettlementsOf(f *nacha.File, outbound bool, odfi string) []Settlement {
	type key struct{ date, dir string }
	sums := map[key]*Settlement{}
	var order []key
	for _, b := range f.Batches {
		date, err := time.Parse("060102", b.GetHeader().EffectiveEntryDate)
		if err != nil {
			continue
		}
		for _, ed := range b.GetEntries() {
			if ed.Amount <= 0 || (outbound && ed.RDFIIdentification+ed.CheckDigit == odfi) {
				continue
			}
			debit := ed.CreditOrDebit() == "D"
			dir := DirectionDebit
			if debit == outbound {
				dir = DirectionCredit
			}
			k := key{date.Format(time.DateOnly), dir}
			s := sums[k]
			if s == nil {
				s = &Settlement{Date: k.date, Direction: dir}
				sums[k] = s
				order = append(order, k)
			}
			s.Cents += int64(ed.Amount)
			s.Entries++
		}
	}
	out := make([]Settlement, len(order))
	for i, k := range order {
		out[i] = *sums[k]
	}
	return out
}

func (o *Originator) logger() *slog.Logger {
	if o.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.log
}
