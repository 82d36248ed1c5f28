package ach

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
)

// Dishonored returns. A return that is not applied is answered: an
// untimely one (ReturnDeadline) with a dishonored return R68, a second
// return of an entry already returned with R67. The dishonor is stored at
// import, in the transaction that judged the return, and goes into the
// next file the originator writes, in a batch of its own under the
// original entry's SEC code and description, exactly once: like an entry,
// it is assigned to a file record before the file is written. The
// receiving bank may contest it (R71–R77) within its own deadline; a
// contested dishonor applies the original return as if it had been
// timely, since the bank certifies that it was (or that it was not a
// duplicate).
//
// A return is applied (Entry.ReturnCode set) only when it is timely or its
// dishonor was contested: a re-presentment may rely on that.
//
// A dishonor must leave within DishonorDays banking days after the
// return's settlement date. One that cannot (a return file imported late,
// or a dishonor stored but not assigned to a file in time) is kept with
// the time it was found late (LateForDishonorAt) and never sent: the
// return stands, not applied, for an operator to settle with the bank.
// It is judged at import and again at assignment.

// Dishonor codes.
const (
	DishonorDuplicate = "R67" // a second return of the same entry
	DishonorUntimely  = "R68" // a return past its deadline
)

const dishonorPrefix = "achd_"

// Dishonor is a dishonored return the originator owes the network.
type Dishonor struct {
	ID   string
	Code string // DishonorDuplicate or DishonorUntimely
	// Entry is the original entry (the return names it by its trace
	// number, Entry.Trace, in file Entry.FileID).
	Entry Entry
	// ReturnTrace is the return entry's own trace number, ReturnCode its
	// code, ReturnSettlement the Julian day its batch settled (the day of
	// its file's date when the batch header had none).
	ReturnTrace      string
	ReturnCode       string
	ReturnSettlement string
	RDFI             string // the original entry's receiving bank, 8 digits
	CreatedAt        time.Time
	FileID           string // "" until assigned to a file
	Trace            string // the dishonored return's own trace number, with FileID
	ContestedCode    string // R71–R77 once the receiving bank contested it
	// ReturnSettledOn is the return's settlement date; zero on a dishonor
	// stored before it was kept (returnSettled reads it then).
	ReturnSettledOn calendar.Date
	// LateForDishonorAt is when the dishonor was found past its limit
	// (UTC); nil while it may still be sent.
	LateForDishonorAt *time.Time
}

// returnSettled is the date the dishonored return settled.
func (d Dishonor) returnSettled() calendar.Date {
	if !d.ReturnSettledOn.IsZero() {
		return d.ReturnSettledOn
	}
	return ReturnSettledOn(d.ReturnSettlement, calendar.DateOf(d.CreatedAt))
}

// returned is what a return says of itself: its code, its own trace
// number, the Julian day its batch settled, the bank that returned it and
// the day its file was created.
type returned struct {
	code, trace, settlement, rdfi string
	arrived                       calendar.Date
}

// importReturn finds the entry one return answers (find) and judges it
// there (judgeReturn), counting it in res; arrived is the day the return's
// file was created. A return that matches no single entry is kept for an
// operator instead.
func (o *Originator) importReturn(ctx context.Context, ed *nacha.EntryDetail, bh *nacha.BatchHeader, digest string, arrived calendar.Date, res *ReturnResult) error {
	a := ed.Addenda99
	res.Returns++
	r := returned{code: strings.TrimSpace(a.ReturnCode), trace: ed.TraceNumber, settlement: julian(bh.SettlementDate, arrived),
		rdfi: rdfiOf(a, ed), arrived: arrived}
	in := answered{answer: o.answerOf(AnswerReturn, ed, bh, a.OriginalTrace, r.code, arrived), ed: ed, settlement: bh.SettlementDate, fileSHA256: digest}
	err := o.store.WithTx(ctx, func(tx Store) error {
		e, ok, err := o.find(ctx, tx, in, res)
		if err != nil || !ok {
			return err
		}
		return o.judgeReturn(ctx, tx, e, r, res)
	})
	if err != nil {
		return fmt.Errorf("import return %s of trace %s: %w", r.code, a.OriginalTrace, err)
	}
	return nil
}

// judgeReturn applies return r to entry e, dishonors it or finds it
// applied before, in tx, counting it in res.
func (o *Originator) judgeReturn(ctx context.Context, tx Store, e Entry, r returned, res *ReturnResult) error {
	if e.ReturnCode != "" && (e.ReturnTrace == "" || e.ReturnTrace == r.trace) {
		res.Duplicate++ // this very return, applied before
		return nil
	}
	d := Dishonor{ID: ids.New(dishonorPrefix), Entry: e, ReturnTrace: r.trace, ReturnCode: r.code,
		ReturnSettlement: r.settlement, RDFI: r.rdfi, CreatedAt: o.now(ctx).UTC()}
	dishonored, err := tx.EntryDishonored(ctx, e.FileID, e.Trace)
	if err != nil {
		return err
	}
	var outcome *int
	switch {
	case e.ReturnCode != "" || dishonored:
		d.Code, outcome = DishonorDuplicate, &res.Duplicates
	case !o.timely(ctx, tx, e, r.code, r.arrived):
		d.Code, outcome = DishonorUntimely, &res.Dishonored
	default:
		if err := o.apply(ctx, tx, e, r.code, r.trace); err != nil {
			return err
		}
		res.Applied++
		return nil
	}
	d.ReturnSettledOn = ReturnSettledOn(d.ReturnSettlement, r.arrived)
	if !DishonorInTime(d.ReturnSettledOn, calendar.DateOf(d.CreatedAt)) {
		d.LateForDishonorAt, outcome = &d.CreatedAt, &res.LateForDishonor
	}
	inserted, err := tx.InsertDishonor(ctx, d)
	if err != nil {
		return err
	}
	if !inserted {
		outcome = &res.Duplicate // dishonored at an earlier import
	}
	*outcome++
	return nil
}

// timely reports whether a return with code that arrived on arrived is
// within entry e's deadline. An entry whose file is unknown is judged
// timely: the return is applied as before deadlines were checked.
func (o *Originator) timely(ctx context.Context, tx Store, e Entry, code string, arrived calendar.Date) bool {
	f, err := tx.ACHFile(ctx, e.FileID)
	if err != nil {
		return true
	}
	sec := e.Class.SEC
	settled := SettlementDate(f.CreatedAt)
	if d, err := time.Parse(time.DateOnly, e.EffectiveDate); err == nil {
		settled = d // a same-day entry settles the day its file was built
	}
	return Timely(code, sec, settled, arrived)
}

// apply applies return code (its own trace number returnTrace) to entry e
// in tx: a micro-deposit fails its verification, a payment fails.
func (o *Originator) apply(ctx context.Context, tx Store, e Entry, code, returnTrace string) error {
	var err error
	if e.Kind == KindMicroDeposit {
		err = o.consequences.ReturnMicroDepositTx(ctx, tx, e.Scope, e.SourceID, e.DepositSeq, code)
	} else {
		err = o.consequences.ReturnTx(ctx, tx, e.Scope, e.PaymentID, code)
	}
	if err != nil {
		return err
	}
	return tx.MarkACHEntryReturned(ctx, e.FileID, e.Trace, code, returnTrace, o.now(ctx).UTC())
}

// importContested applies a contested dishonored return: the dishonor it
// names is marked contested and its original return applied, unless the
// entry was returned already. A contest of a dishonor not sent from here
// is unknown.
func (o *Originator) importContested(ctx context.Context, c *nacha.Addenda99Contested, res *ReturnResult) error {
	res.Contested++
	applied, seen := false, false
	err := o.store.WithTx(ctx, func(tx Store) error {
		d, err := tx.SentDishonor(ctx, c.OriginalEntryTraceNumber, c.DishonoredReturnTraceNumber)
		if err != nil {
			return err
		}
		if d.ContestedCode != "" {
			seen = true
			return nil
		}
		if err := tx.MarkDishonorContested(ctx, d.ID, strings.TrimSpace(c.ContestedReturnCode), o.now(ctx).UTC()); err != nil {
			return err
		}
		e, err := tx.ACHEntryIn(ctx, d.Entry.FileID, d.Entry.Trace)
		if err != nil || e.ReturnCode != "" {
			return err
		}
		applied = true
		return o.apply(ctx, tx, e, d.ReturnCode, d.ReturnTrace)
	})
	switch {
	case errs.Is(err, errs.NotFound):
		res.Unknown = append(res.Unknown, c.OriginalEntryTraceNumber)
	case err != nil:
		return err
	case seen:
		res.Duplicate++
	case applied:
		res.Applied++
	}
	return nil
}

// rdfiOf is the receiving bank of a returned entry: the return's
// Addenda99 names it; the return entry's own batch is from it otherwise.
func rdfiOf(a *nacha.Addenda99, ed *nacha.EntryDetail) string {
	if r := strings.TrimSpace(a.OriginalDFI); len(r) >= 8 {
		return r[:8]
	}
	return ed.TraceNumber[:8]
}

// julian is s when it is a Julian day (3 digits, as the ACH operator
// writes a batch's settlement day), else the day of year of arrived.
func julian(s string, arrived calendar.Date) string {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err != nil || len(s) != 3 || n < 1 || n > 366 {
		return fmt.Sprintf("%03d", arrived.YearDay())
	}
	return s
}
