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
		if err := tx.LockACHAssignment(ctx); err != nil {
			return err
		}
		if w != nil {
			claimed, err := tx.ClaimACHWindow(ctx, *w, o.now().UTC())
			if err != nil {
				return err
			}
			if !claimed {
				return errWindowTaken
			}
		}
		wt, err := o.claim(ctx, tx)
		if err != nil {
			return err
		}
		deposits, payments, dishonors, receivers := wt.deposits, wt.payments, wt.dishonors, wt.receivers
		if len(deposits)+len(payments)+len(dishonors) == 0 {
			return nil
		}
		found = true
		now := o.now().UTC()
		f = File{ID: ids.New("achf_"), Status: StatusBuilt, CreatedAt: now}
		date := calendar.DateOf(now)
		f.Name = fmt.Sprintf("fundsource-%s-%s.ach", date.Format("20060102"), f.ID[len("achf_"):])
		traces := o.traces(date.Format(time.DateOnly))
		microEffective := o.cfg.Schedule.Effective(now, o.cfg.SameDayMicro).Format(time.DateOnly)
		// Micro-deposits go out under the merchant's originator, as its
		// later entries will (Nacha's micro-entry rule): the name the
		// receiver sees is the one they will see again.
		companies := map[tenant.Scope][2]string{}
		depositClasses := make([]Class, len(deposits))
		depositKeys := make([]batchKey, len(deposits))
		depositReceivers := make([]funding.Receiver, len(deposits))
		depositCompanies := make([][2]string, len(deposits))
		for i, d := range deposits {
			r, err := o.receiver(ctx, d.Scope, d.SourceID, receivers)
			if err != nil {
				return err
			}
			if depositCompanies[i], err = o.company(ctx, tx, d.Scope, companies); err != nil {
				return err
			}
			depositClasses[i], depositReceivers[i] = Classify(Payer{Business: r.Company, MicroDeposit: true}), r
			depositKeys[i] = keyOf(depositClasses[i], Entry{EffectiveDate: microEffective,
				CompanyName: depositCompanies[i][0], CompanyID: depositCompanies[i][1]})
		}
		if o.cfg.MicroOffset {
			// One offsetting debit per micro-deposit batch, in batch order.
			for range batchOrder(depositKeys) {
				trace, err := traces.next(ctx, tx)
				if err != nil {
					return err
				}
				f.OffsetTraces = append(f.OffsetTraces, trace)
			}
		}
		if f.Serial, err = tx.InsertACHFile(ctx, f); err != nil {
			return err
		}
		if w != nil {
			if err := tx.SetACHWindowFile(ctx, *w, f.ID); err != nil {
				return err
			}
		}
		for di, d := range deposits {
			// The amounts stay sealed with the verification; build reads them.
			for i := range 2 {
				e := Entry{FileID: f.ID, FileDate: traces.date, Scope: d.Scope, Kind: KindMicroDeposit, SourceID: d.SourceID,
					CustomerID: d.CustomerID, DepositSeq: d.Seq, DepositIndex: i + 1, Class: depositClasses[di],
					ReceiverName: receiverName(depositReceivers[di]), IndividualID: depositReceivers[di].IndividualID,
					EffectiveDate: microEffective, AccountFP: depositReceivers[di].AccountFP,
					CompanyName: depositCompanies[di][0], CompanyID: depositCompanies[di][1]}
				if err := o.insertEntry(ctx, tx, &e); err != nil {
					return err
				}
			}
		}
		for _, p := range payments {
			r, err := o.receiver(ctx, p.Scope, p.SourceID, receivers)
			if err != nil {
				return err
			}
			company, err := o.company(ctx, tx, p.Scope, companies)
			if err != nil {
				return err
			}
			debit := p.Direction == payment.Debit
			class, company, err := o.classOf(ctx, tx, p, Payer{Business: r.Company, Debit: debit, Subscription: p.SubscriptionID != nil,
				Retry: p.Attempt != nil && *p.Attempt > 1, EntryDescription: deref(p.EntryDescription), MandateSEC: p.Standing.MandateSEC,
				Purpose: p.Purpose}, company)
			if err != nil {
				return err
			}
			e := Entry{FileID: f.ID, FileDate: traces.date, Scope: p.Scope, Kind: KindPayment, SourceID: p.SourceID, CustomerID: p.CustomerID,
				PaymentID: p.ID, Debit: debit, Cents: p.Cents, Class: class,
				ReceiverName: receiverName(r), IndividualID: r.IndividualID, CompanyName: company[0], CompanyID: company[1],
				AccountFP: r.AccountFP}
			effective := o.cfg.Schedule.Effective(now, p.SameDay)
			e.EffectiveDate = effective.Format(time.DateOnly)
			if p.Description != nil && r.Addenda {
				e.Addenda = addendaText(*p.Description)
			}
			if err := o.sameReceiver(ctx, tx, p, &e); err != nil {
				return err
			}
			if err := o.insertEntry(ctx, tx, &e); err != nil {
				return err
			}
			// sent_at waits for the bank's server to take the file (deliver).
			if err := o.payments.OriginatedTx(ctx, tx.Payments(), p.Scope, p.ID, sent(time.Time{}, effective, debit && class.SEC != SecCCD)); err != nil {
				return err
			}
		}
		for _, d := range dishonors {
			trace, err := traces.next(ctx, tx)
			if err != nil {
				return err
			}
			if err := tx.AssignDishonor(ctx, d.ID, f.ID, trace); err != nil {
				return err
			}
		}
		return nil
	})
	return f, found, err
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
		e.FileDate = calendar.DateOf(o.now()).Format(time.DateOnly)
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
