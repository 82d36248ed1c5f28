package ach

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// assign creates a file record with every waiting entry, in one
// transaction; for window w (nil: a run forced by the operator) only once
// it claimed the window in that transaction (errWindowTaken when another
// run has). Assignments take turns: rows are locked as the scan reaches
// them, so two at once would each skip the other's and split what waits
// between two files; the second, once the first commits, finds nothing
// left.
func (o *Originator) assign(ctx context.Context, w *calendar.Window) (File, bool, error) {
	var f File
	found := false
	err := o.store.WithTx(ctx, func(tx Store) error {
		if err := o.takeTurn(ctx, tx, w); err != nil {
			return err
		}
		wt, err := o.claim(ctx, tx)
		if err != nil {
			return err
		}
		if len(wt.deposits)+len(wt.payments)+len(wt.dishonors) == 0 {
			return nil
		}
		found = true
		a := o.newAssignment(ctx, tx, wt)
		if err := a.write(ctx, w); err != nil {
			return err
		}
		f = a.file
		return nil
	})
	return f, found, err
}

// takeTurn waits for the assignments before this one to end and, for
// window w, claims it: errWindowTaken when another run has.
func (o *Originator) takeTurn(ctx context.Context, tx Store, w *calendar.Window) error {
	if err := tx.LockACHAssignment(ctx); err != nil {
		return err
	}
	if w == nil {
		return nil
	}
	claimed, err := tx.ClaimACHWindow(ctx, *w, o.now(ctx).UTC())
	if err != nil {
		return err
	}
	if !claimed {
		return errWindowTaken
	}
	return nil
}

// assignment is one new file being filled in tx with what was claimed.
// Trace numbers are taken in a fixed order (the offsets, the deposits,
// the payments, the dishonors), so a batch's numbers ascend.
type assignment struct {
	o         *Originator
	tx        Store
	wt        waiting
	now       time.Time // UTC
	file      File
	traces    traceCounter
	companies map[tenant.Scope][2]string // by scope, for this file
}

// newAssignment names the new file after its id and creation date (US
// Eastern).
func (o *Originator) newAssignment(ctx context.Context, tx Store, wt waiting) *assignment {
	now := o.now(ctx).UTC()
	f := File{ID: ids.New("achf_"), Status: StatusBuilt, CreatedAt: now}
	date := calendar.DateOf(now)
	f.Name = fmt.Sprintf("fundsource-%s-%s.ach", date.Format("20060102"), f.ID[len("achf_"):])
	return &assignment{o: o, tx: tx, wt: wt, now: now, file: f,
		traces: o.traces(date.Format(time.DateOnly)), companies: map[tenant.Scope][2]string{}}
}

// write stores the file record (named as window w's file) and its
// entries: the micro-deposits with their offsets, the payments, the
// dishonors.
func (a *assignment) write(ctx context.Context, w *calendar.Window) error {
	deposits, err := a.depositEntries(ctx)
	if err != nil {
		return err
	}
	if err := a.offsets(ctx, deposits); err != nil {
		return err
	}
	if a.file.Serial, err = a.tx.InsertACHFile(ctx, a.file); err != nil {
		return err
	}
	if w != nil {
		if err := a.tx.SetACHWindowFile(ctx, *w, a.file.ID); err != nil {
			return err
		}
	}
	for i := range deposits {
		// The amounts stay sealed with the verification; build reads them.
		if err := a.o.insertEntry(ctx, a.tx, &deposits[i]); err != nil {
			return err
		}
	}
	for _, p := range a.wt.payments {
		if err := a.payment(ctx, p); err != nil {
			return err
		}
	}
	return a.dishonors(ctx)
}

// depositEntries are the two credits of each claimed verification, not
// yet numbered. Micro-deposits go out under the merchant's originator, as
// its later entries will (Nacha's micro-entry rule): the name the
// receiver sees is the one they will see again.
func (a *assignment) depositEntries(ctx context.Context) ([]Entry, error) {
	effective := a.o.cfg.Schedule.Effective(a.now, a.o.cfg.SameDayMicro).Format(time.DateOnly)
	var out []Entry
	for _, d := range a.wt.deposits {
		r, err := a.o.receiver(ctx, d.Scope, d.SourceID, a.wt.receivers)
		if err != nil {
			return nil, err
		}
		company, err := a.o.company(ctx, a.tx, d.Scope, a.companies)
		if err != nil {
			return nil, err
		}
		class := Classify(Payer{Business: r.Company, MicroDeposit: true})
		for i := range 2 {
			out = append(out, Entry{FileID: a.file.ID, FileDate: a.traces.date, Scope: d.Scope, Kind: KindMicroDeposit,
				SourceID: d.SourceID, CustomerID: d.CustomerID, DepositSeq: d.Seq, DepositIndex: i + 1, Class: class,
				ReceiverName: receiverName(r), IndividualID: r.IndividualID, EffectiveDate: effective, AccountFP: r.AccountFP,
				CompanyName: company[0], CompanyID: company[1]})
		}
	}
	return out, nil
}

// offsets numbers the file's offsetting debits, one per micro-deposit
// batch in batch order, when micro-deposits go with an offset.
func (a *assignment) offsets(ctx context.Context, deposits []Entry) error {
	if !a.o.cfg.MicroOffset {
		return nil
	}
	keys := make([]batchKey, len(deposits))
	for i, e := range deposits {
		keys[i] = keyOf(e.Class, e)
	}
	for range batchOrder(keys) {
		trace, err := a.traces.next(ctx, a.tx)
		if err != nil {
			return err
		}
		a.file.OffsetTraces = append(a.file.OffsetTraces, trace)
	}
	return nil
}

// payment assigns p's entry to the file, under its class and company
// (classOf) and its receiver (sameReceiver for a reversal), and records
// that it originated; its sent_at waits for the bank's server to take the
// file (deliver).
func (a *assignment) payment(ctx context.Context, p payment.Payment) error {
	r, err := a.o.receiver(ctx, p.Scope, p.SourceID, a.wt.receivers)
	if err != nil {
		return err
	}
	company, err := a.o.company(ctx, a.tx, p.Scope, a.companies)
	if err != nil {
		return err
	}
	debit := p.Direction == payment.Debit
	class, company, err := a.o.classOf(ctx, a.tx, p, Payer{Business: r.Company, Debit: debit, Subscription: p.SubscriptionID != nil,
		Retry: p.Attempt != nil && *p.Attempt > 1, EntryDescription: deref(p.EntryDescription), MandateSEC: p.Standing.MandateSEC,
		Purpose: p.Purpose}, company)
	if err != nil {
		return err
	}
	effective := a.o.cfg.Schedule.Effective(a.now, p.SameDay)
	e := Entry{FileID: a.file.ID, FileDate: a.traces.date, Scope: p.Scope, Kind: KindPayment, SourceID: p.SourceID, CustomerID: p.CustomerID,
		PaymentID: p.ID, Debit: debit, Cents: p.Cents, Class: class,
		ReceiverName: receiverName(r), IndividualID: r.IndividualID, CompanyName: company[0], CompanyID: company[1],
		AccountFP: r.AccountFP, EffectiveDate: effective.Format(time.DateOnly)}
	if p.Description != nil && r.Addenda {
		e.Addenda = addendaText(*p.Description)
	}
	if err := a.o.sameReceiver(ctx, a.tx, p, &e); err != nil {
		return err
	}
	if err := a.o.insertEntry(ctx, a.tx, &e); err != nil {
		return err
	}
	return a.o.payments.OriginatedTx(ctx, a.tx.Payments(), p.Scope, p.ID, sent(time.Time{}, effective, debit && class.SEC != SecCCD))
}

// dishonors puts the claimed dishonors into the file, each under a trace
// number of its own.
func (a *assignment) dishonors(ctx context.Context) error {
	for _, d := range a.wt.dishonors {
		trace, err := a.traces.next(ctx, a.tx)
		if err != nil {
			return err
		}
		if err := a.tx.AssignDishonor(ctx, d.ID, a.file.ID, trace); err != nil {
			return err
		}
	}
	return nil
}

// waiting is what an assignment claimed that may leave now: deposits
// and payments with their receivers (by merchant and source), and the
// dishonors still in time.
type waiting struct {
	deposits  []Deposit
	payments  []payment.Payment
	dishonors []Dishonor
	receivers map[string]funding.Receiver
}

// claim locks in tx what waits to leave and keeps what may: a
// verification whose source was removed or blocked is canceled, a payment
// that may no longer leave is canceled or held (payment.Service.ReleaseTx),
// and an entry whose receiver's name is a potential sanctions match stays
// behind (ScreenEntryTx: the payment held, the deposits waiting).
func (o *Originator) claim(ctx context.Context, tx Store) (waiting, error) {
	wt := waiting{receivers: map[string]funding.Receiver{}}
	deposits, err := tx.DepositsToOriginate(ctx, batchLimit)
	if err != nil {
		return wt, err
	}
	for _, d := range deposits {
		if d.SourceGone {
			if err := o.funding.CancelDepositsTx(ctx, tx.Funding(), d.Scope, d.SourceID, d.Seq); err != nil {
				return wt, err
			}
			continue
		}
		ok, err := o.screened(ctx, tx, d.Scope, d.SourceID, d.CustomerID, nil, wt.receivers)
		if err != nil {
			return wt, err
		}
		if ok {
			wt.deposits = append(wt.deposits, d)
		}
	}
	payments, err := tx.PaymentsToOriginate(ctx, batchLimit)
	if err != nil {
		return wt, err
	}
	for _, p := range payments {
		ok, err := o.payments.ReleaseTx(ctx, tx.Payments(), p)
		if err == nil && ok {
			ok, err = o.screened(ctx, tx, p.Scope, p.SourceID, p.CustomerID, &p, wt.receivers)
		}
		if err != nil {
			return wt, err
		}
		if ok {
			wt.payments = append(wt.payments, p)
		}
	}
	wt.dishonors, err = o.dishonorsInTime(ctx, tx)
	return wt, err
}

// screened reports whether the receiver's name an entry of a source will
// carry passes sanctions screening (ScreenEntryTx).
func (o *Originator) screened(ctx context.Context, tx Store, scope tenant.Scope, sourceID, customerID string, p *payment.Payment, seen map[string]funding.Receiver) (bool, error) {
	r, err := o.receiver(ctx, scope, sourceID, seen)
	if err != nil {
		return false, err
	}
	return o.payments.ScreenEntryTx(ctx, tx.Payments(), scope, customerID, p, r.Name, r.Company)
}

// insertEntry stores e with the next trace number; an entry without a
// file date takes the US Eastern date of the originator's clock.
func (o *Originator) insertEntry(ctx context.Context, tx Store, e *Entry) error {
	if e.FileDate == "" {
		e.FileDate = calendar.DateOf(o.now(ctx)).Format(time.DateOnly)
	}
	trace, err := o.traces(e.FileDate).next(ctx, tx)
	if err != nil {
		return err
	}
	e.Trace = trace
	return tx.InsertACHEntry(ctx, *e)
}

// traceCounter hands out an ODFI's trace numbers; date is the file date
// the entries it numbers carry.
type traceCounter struct {
	odfi string // the ODFI's routing number without its check digit
	date string // YYYY-MM-DD
}

func (o *Originator) traces(date string) traceCounter {
	return traceCounter{odfi: o.cfg.ODFIRouting[:8], date: date}
}

// next is the next trace number: the ODFI's 8 digits, then its next
// sequence number in 7 digits.
func (c traceCounter) next(ctx context.Context, tx Store) (string, error) {
	seq, err := tx.NextTraceSequence(ctx, c.odfi)
	if err != nil {
		return "", fmt.Errorf("take a trace number of ODFI %s: %w", c.odfi, err)
	}
	return fmt.Sprintf("%s%07d", c.odfi, seq), nil
}

// receiver returns what the entries of a source say about its holder,
// remembering the answers of one file in seen.
func (o *Originator) receiver(ctx context.Context, scope tenant.Scope, sourceID string, seen map[string]funding.Receiver) (funding.Receiver, error) {
	key := scope.MerchantID + "/" + sourceID
	if r, ok := seen[key]; ok {
		return r, nil
	}
	r, err := o.funding.Receiver(ctx, scope, sourceID)
	if err != nil {
		return funding.Receiver{}, err
	}
	seen[key] = r
	return r, nil
}

// company is the company name and id scope's payments go out under,
// remembering the answers of one file in seen. A scope without an
// originator goes out under the platform's.
func (o *Originator) company(ctx context.Context, tx Store, scope tenant.Scope, seen map[tenant.Scope][2]string) ([2]string, error) {
	if c, ok := seen[scope]; ok {
		return c, nil
	}
	name, id, err := tx.OriginatorCompany(ctx, scope)
	switch {
	case errs.Is(err, errs.NotFound):
		name, id = "", ""
	case err != nil:
		return [2]string{}, err
	}
	c := [2]string{upper(name, 16), id}
	seen[scope] = c
	return c, nil
}

// receiverName is r's name as an entry carries it; a name with nothing
// NACHA can write (no Latin letter or digit at all) is a placeholder, as
// the field may not be blank.
func receiverName(r funding.Receiver) string {
	if n := upper(r.Name, 22); n != "" {
		return n
	}
	return "ACCOUNT HOLDER"
}
