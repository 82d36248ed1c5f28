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

	"github.com/fundsource/fundsource/internal/core/errs"
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

// DeliveryLease is how long a claim on a file's delivery lasts: the
// upload is given that long, and a claim left by a crash lets another
// process deliver the file once it has passed.
const DeliveryLease = 10 * time.Minute

// deliver hands one file to the transport without holding a transaction
// or a lock while it talks to the bank: it claims the file's delivery
// lease (false when another process holds it, or the file was delivered
// meanwhile), prepares its bytes (prepare), uploads them, then records
// the result under the lease. A crash between the upload and the record
// leaves the lease to expire; the file is then delivered again as the
// same bytes under the same name, which the transport replaces.
func (o *Originator) deliver(ctx context.Context, f File) (bool, error) {
	now := o.now(ctx).UTC()
	claimed, err := o.store.ClaimACHFile(ctx, f.ID, o.lease, now, now.Add(DeliveryLease))
	if err != nil || !claimed {
		return false, err
	}
	data, err := o.prepare(ctx, f)
	if err != nil {
		return false, err
	}
	file, err := nacha.NewReader(strings.NewReader(string(data))).Read()
	if err != nil {
		return false, fmt.Errorf("read back ACH file %s: %w", f.Name, err)
	}
	totals := fileTotals(&file, data)
	upload, cancel := context.WithTimeout(ctx, DeliveryLease)
	failure := o.transport.Deliver(upload, f.Name, data)
	cancel()
	if failure != nil {
		if err := o.store.MarkACHFileFailed(ctx, f.ID, o.lease, failure.Error(), totals); err != nil {
			return false, fmt.Errorf("record the failed delivery of ACH file %s: %w", f.Name, err)
		}
		o.failures.Add(1)
		o.logger().Warn("ACH file delivery failed; it is delivered again at the next run",
			slog.String("file_id", f.ID), slog.String("name", f.Name), slog.String("status", StatusFailed),
			slog.String("transport", o.transport.Kind()), slog.Any("error", failure))
		return false, fmt.Errorf("deliver ACH file %s: %w", f.Name, failure)
	}
	delivered := false
	err = o.store.WithTx(ctx, func(tx Store) error {
		at := o.now(ctx).UTC()
		ok, err := tx.MarkACHFileDelivered(ctx, f.ID, o.lease, o.transport.Kind(), at, totals)
		if err != nil || !ok {
			return err
		}
		if err := tx.MarkFilePaymentsSent(ctx, f.ID, at); err != nil {
			return err
		}
		for _, s := range o.expected(&file, true) {
			s.FileID = f.ID
			if err := tx.InsertSettlement(ctx, s); err != nil {
				return err
			}
		}
		delivered = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record the delivery of ACH file %s: %w", f.Name, err)
	}
	if delivered {
		o.logger().Info("ACH file delivered", slog.String("file_id", f.ID), slog.String("name", f.Name),
			slog.String("status", StatusDelivered), slog.String("transport", o.transport.Kind()),
			slog.Int("entries", totals.Entries), slog.Int64("debit_cents", totals.Debit), slog.Int64("credit_cents", totals.Credit))
	}
	return delivered, nil
}

// prepare returns the bytes a claimed file is delivered as. Entries
// whose effective date can no longer be met are re-dated first (Redate),
// their payments' dates with them, and the file is rebuilt; otherwise the
// bytes kept from an earlier attempt are sent again, so a retried
// delivery sends what the first one did. The bytes are kept sealed.
func (o *Originator) prepare(ctx context.Context, f File) ([]byte, error) {
	var data []byte
	err := o.store.WithTx(ctx, func(tx Store) error {
		now := o.now(ctx).UTC()
		entries, redated, err := o.redate(ctx, tx, f, now)
		if err != nil {
			return err
		}
		keyID, sealed, err := tx.ACHFileBytes(ctx, f.ID)
		if err != nil {
			return err
		}
		if len(sealed) > 0 && !redated {
			data, err = o.funding.OpenRecord(keyID, sealed, fileAAD(f))
			return err
		}
		dishonors, err := tx.ACHDishonors(ctx, f.ID)
		if err != nil {
			return err
		}
		if data, err = o.build(ctx, f, entries, dishonors); err != nil {
			return err
		}
		keyID, sealed = o.funding.SealRecord(data, fileAAD(f))
		var at *time.Time
		if redated {
			at = &now
		}
		return tx.KeepACHFileBytes(ctx, f.ID, keyID, sealed, at)
	})
	if err != nil {
		return nil, fmt.Errorf("build ACH file %s: %w", f.Name, err)
	}
	return data, nil
}

// redate moves the entries of f whose effective date can no longer be met
// at now to the next date the network can settle (Redate), with their
// payments' dates; it returns f's entries as they now are and whether any
// moved.
func (o *Originator) redate(ctx context.Context, tx Store, f File, now time.Time) ([]Entry, bool, error) {
	entries, err := tx.ACHEntries(ctx, f.ID)
	if err != nil {
		return nil, false, err
	}
	moved := false
	for i, e := range entries {
		effective, ok := Redate(o.cfg.Schedule, e, now)
		if !ok {
			continue
		}
		moved = true
		entries[i].EffectiveDate = effective.Format(time.DateOnly)
		if err := tx.RedateACHEntry(ctx, f.ID, e.Trace, entries[i].EffectiveDate); err != nil {
			return nil, false, err
		}
		if e.Kind != KindPayment {
			continue
		}
		if err := o.payments.OriginatedTx(ctx, tx.Payments(), e.Scope, e.PaymentID, sent(time.Time{}, effective, e.Debit && e.Class.SEC != nacha.CCD)); err != nil {
			return nil, false, err
		}
		o.logger().Warn("ACH entry re-dated: its effective date could no longer be met", slog.String("file_id", f.ID),
			slog.String("trace", e.Trace), slog.String("was", e.EffectiveDate), slog.String("now", effective.Format(time.DateOnly)))
	}
	return entries, moved, nil
}

// fileAAD binds a file's sealed bytes to the file.
func fileAAD(f File) string { return "ach-file:" + f.ID }

// FileBytes returns the bytes a file was delivered as (or will be, when
// not delivered yet), by the file's name; errs.NotFound for a file this
// release never built to bytes.
func (o *Originator) FileBytes(ctx context.Context, name string) ([]byte, error) {
	f, err := o.store.ACHFileByName(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("find ACH file %s: %w", name, err)
	}
	keyID, sealed, err := o.store.ACHFileBytes(ctx, f.ID)
	if err != nil {
		return nil, fmt.Errorf("read ACH file %s: %w", name, err)
	}
	if len(sealed) == 0 {
		return nil, errs.Newf(errs.NotFound, "ACH file %s was delivered before its bytes were kept.", name)
	}
	return o.funding.OpenRecord(keyID, sealed, fileAAD(f))
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

// expected is the settlements the bank's statements should show of f
// (SettlementsOf), none from a bank that sends no statements.
func (o *Originator) expected(f *nacha.File, outbound bool) []Settlement {
	if o.cfg.NoStatements {
		return nil
	}
	return SettlementsOf(f, outbound, o.cfg.ODFIRouting)
}

// SettlementsOf is what file f moves on the originator's account at its
// ODFI (odfi, 9 digits), per settlement date and direction, as the bank
// books it: for a file the originator sent (outbound), its debits come
// in (credit) and its credits go out (debit) on the batches' effective
// dates; for a file of returns the bank sent, a returned debit goes out
// again and a returned credit comes back. Entries to the ODFI's own
// routing number (a micro-deposit batch's offsetting debit, posted on
// us) and zero-dollar entries (notifications of change) move nothing.
// The simulated bank (internal/adapter/banksim) books its statements by
// the same rule.
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
