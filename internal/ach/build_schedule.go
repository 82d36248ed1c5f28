package ach

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/payment"
)

// Windows. Files are built at the schedule's windows of each banking day
// (calendar.Schedule), not whenever an entry waits: the ODFI takes files
// at set times, and a window is what an effective date and an expected
// arrival can be promised against. Every serve process ticks each minute
// and asks which window is due (the latest of the day at or before now);
// the run that builds it first claims it, a row per window date and time
// inserted with ON CONFLICT DO NOTHING in the transaction that assigns the
// entries. A second process's insert waits for the first's transaction
// and then finds the row, so a window is built once however many
// processes tick; a run that fails rolls its claim back with its
// assignment, and the next tick tries again. A process that was down
// across a window claims it when it starts, if that is the same banking
// day: the latest due window takes everything that waited, so several
// missed windows are caught up by one file, and none is caught up on a
// later day (that day's first window takes what waited). The operator's
// `fundsource ach originate` builds at once, claiming no window.
//
// Dates. An entry's effective date is decided at assignment from the time
// the file is built (calendar.Schedule.Effective): the next banking day,
// or for a Same Day ACH entry built at or before the cut-off, the same
// day. It is stored on the entry, so a file rebuilt after a crash carries
// the same dates, and same-day entries go in batches of their own (a
// batch has one effective date). The payment stores the same facts when
// it is assigned (payment.Sent): sent_at is the file's creation, its
// settlement date is its effective date.

// errWindowTaken is the refusal of a window another run built.
var errWindowTaken = errors.New("the window was built by another run")

// RunWindow builds window w when no run has: it assigns everything
// waiting to one new file, then delivers it with the files left built or
// failed (by a crash, or a transport that was down: a failed upload is
// retried at the next window). claimed is false when another run built w
// (or builds it now); that run delivers.
func (o *Originator) RunWindow(ctx context.Context, w calendar.Window) (files []string, claimed bool, err error) {
	f, found, err := o.assign(ctx, &w)
	if errors.Is(err, errWindowTaken) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if found {
		o.logger().Info("ACH file built", slog.String("file_id", f.ID), slog.String("name", f.Name),
			slog.String("status", StatusBuilt), slog.String("window", w.String()))
	}
	// Delivered after the claim, so two processes do not race for the
	// window's files (the row lock lets one of them deliver each).
	pending, err := o.store.UndeliveredACHFiles(ctx)
	if err != nil {
		return nil, true, err
	}
	files, err = o.deliverAll(ctx, pending)
	return files, true, err
}

// Tick builds the window due at the originator's now, if any and not
// built yet: what serve runs every minute.
func (o *Originator) Tick(ctx context.Context) ([]string, error) {
	w, ok := o.cfg.Schedule.Due(o.now(ctx))
	if !ok {
		return nil, nil
	}
	files, _, err := o.RunWindow(ctx, w)
	return files, err
}

// sent is what a payment assigned at now with effective date effective
// carries: its settlement date is the effective date, it becomes processed
// SettleDays banking days later (noon UTC), and an individual's debit may
// be returned as unauthorized for 60 calendar days.
func sent(now time.Time, effective calendar.Date, individualDebit bool) payment.Sent {
	return payment.Sent{At: now, Effective: effective, Settlement: effective,
		SettleAt:   calendar.AddBusinessDays(effective, SettleDays).Add(12 * time.Hour),
		Individual: individualDebit}
}

// Redate is the effective date entry e of a file still to deliver must
// move to when it leaves at now: a standard entry dated the next banking
// day or later, and a Same Day ACH entry (effective on its file's date)
// before that day's cut-off, keep theirs (false); any other gets the date
// an entry of its kind built at now would get.
func Redate(s calendar.Schedule, e Entry, now time.Time) (calendar.Date, bool) {
	effective, err := time.Parse(time.DateOnly, e.EffectiveDate)
	if err != nil {
		return calendar.Date{}, false // an entry of an earlier release: its file's own date
	}
	sameDay := e.EffectiveDate == e.FileDate
	want := s.Effective(now, sameDay)
	if !effective.Before(want) {
		return calendar.Date{}, false
	}
	return want, true
}
