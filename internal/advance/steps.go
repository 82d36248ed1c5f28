package advance

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Step is one instant of an advance and what happens at it.
type Step struct {
	At      time.Time
	Morning bool // the start of a day, US Eastern
	Window  bool // an ACH window opens
	Settle  bool // noon UTC, or the target: settlement runs
}

// run does s's jobs on w, in the order a day has them: the bank's
// overnight answers before anything else of the day, settlement after a
// window's file has left.
func (s Step) run(ctx context.Context, w World) error {
	if s.Morning {
		if err := w.Morning(ctx); err != nil {
			return err
		}
	}
	if s.Window {
		if err := w.Window(ctx); err != nil {
			return err
		}
	}
	if s.Settle {
		return w.Settle(ctx)
	}
	return nil
}

// Steps is the instants of an advance from from (excluded: it is done)
// to to (included), in order: each midnight US Eastern, each window of
// schedule, each noon UTC, and to, where everything runs.
func Steps(schedule calendar.Schedule, from, to time.Time) []Step {
	var out []Step
	t := from
	for t.Before(to) {
		next, s := to, Step{}
		if m := nextMidnight(t); m.Before(next) {
			next, s = m, Step{Morning: true}
		} else if m.Equal(next) {
			s.Morning = true
		}
		if w := schedule.Next(t).Time(); w.Before(next) {
			next, s = w, Step{Window: true}
		} else if w.Equal(next) {
			s.Window = true
		}
		if n := nextNoon(t); n.Before(next) {
			next, s = n, Step{Settle: true}
		} else if n.Equal(next) {
			s.Settle = true
		}
		if next.Equal(to) {
			s = Step{Morning: true, Window: true, Settle: true}
		}
		s.At = next.UTC()
		out = append(out, s)
		t = next
	}
	return out
}

// nextMidnight is the first midnight US Eastern after t.
func nextMidnight(t time.Time) time.Time {
	e := t.In(calendar.Eastern)
	return time.Date(e.Year(), e.Month(), e.Day()+1, 0, 0, 0, 0, calendar.Eastern)
}

// nextNoon is the first noon UTC after t, when the sandbox's settlement
// times fall (ach: SettleDays banking days after the effective date).
func nextNoon(t time.Time) time.Time {
	u := t.UTC()
	n := time.Date(u.Year(), u.Month(), u.Day(), 12, 0, 0, 0, time.UTC)
	if !n.After(u) {
		n = n.AddDate(0, 0, 1)
	}
	return n
}
