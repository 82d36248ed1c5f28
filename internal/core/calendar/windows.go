package calendar

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ACH files leave at fixed times of a banking day (windows), as the
// Federal Reserve's ACH operator takes them: between two windows nothing
// is built, so an entry created after one window waits for the next. An
// entry's effective date follows from when its file is built: the next
// banking day, or, for a Same Day ACH entry in a file built at or before
// the same-day cut-off of a banking day, that same day.
//
// The clock of a window and of the cut-off is read in minutes, US
// Eastern: a file built during the cut-off's own minute (15:45:40 for a
// 15:45 cut-off, when the minute's tick comes late) is still same-day.

// Clock is a time of day in minutes after midnight, US Eastern.
type Clock int

// ParseClock reads "HH:MM" (00:00 to 23:59).
func ParseClock(s string) (Clock, error) {
	hh, mm, ok := strings.Cut(strings.TrimSpace(s), ":")
	h, herr := strconv.Atoi(hh)
	m, merr := strconv.Atoi(mm)
	if !ok || herr != nil || merr != nil || len(hh) != 2 || len(mm) != 2 || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM (00:00 to 23:59)", s)
	}
	return Clock(h*60 + m), nil
}

// String is c as "HH:MM".
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// ClockOf is the Eastern time of day of t, in whole minutes.
func ClockOf(t time.Time) Clock {
	e := t.In(Eastern)
	return Clock(e.Hour()*60 + e.Minute())
}

// ParseWindows reads a comma-separated list of "HH:MM" times: at least
// one, no time twice. They come back in order.
func ParseWindows(s string) ([]Clock, error) {
	var out []Clock
	for part := range strings.SplitSeq(s, ",") {
		c, err := ParseClock(part)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("%s is named twice", c)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no window is named")
	}
	slices.Sort(out)
	return out, nil
}

// Window is one origination window: a banking day and a time of it.
type Window struct {
	Date Date
	At   Clock
}

// Time is the instant the window opens.
func (w Window) Time() time.Time {
	return time.Date(w.Date.Year(), w.Date.Month(), w.Date.Day(), int(w.At)/60, int(w.At)%60, 0, 0, Eastern)
}

// String is "YYYY-MM-DD HH:MM".
func (w Window) String() string { return w.Date.Format(time.DateOnly) + " " + w.At.String() }

// Schedule is when files are built (Windows, in order) and until when a
// Same Day ACH entry is effective the day its file is built (Cutoff). The
// zero Schedule is DefaultSchedule.
type Schedule struct {
	Windows []Clock
	Cutoff  Clock
}

func (s Schedule) orDefault() Schedule {
	if len(s.Windows) == 0 {
		return DefaultSchedule()
	}
	return s
}

// DefaultSchedule is the Federal Reserve's rhythm: three same-day windows
// and the evening one, with the cut-off at the third.
func DefaultSchedule() Schedule {
	return Schedule{Windows: []Clock{9*60 + 45, 13*60 + 45, 15*60 + 45, 20 * 60}, Cutoff: 15*60 + 45}
}

// Due is the latest window of now's day at or before now: the one a run
// at now builds. ok is false on a day that is no banking day and before
// the day's first window, so a window missed while nothing ran is built
// once later that day, never on another.
func (s Schedule) Due(now time.Time) (w Window, ok bool) {
	s = s.orDefault()
	d := DateOf(now)
	if !IsBusinessDay(d) {
		return Window{}, false
	}
	c := ClockOf(now)
	for i := len(s.Windows) - 1; i >= 0; i-- {
		if s.Windows[i] <= c {
			return Window{Date: d, At: s.Windows[i]}, true
		}
	}
	return Window{}, false
}

// Next is the first window that opens after t.
func (s Schedule) Next(t time.Time) Window {
	s = s.orDefault()
	d := DateOf(t)
	for {
		if IsBusinessDay(d) {
			for _, c := range s.Windows {
				if w := (Window{Date: d, At: c}); w.Time().After(t) {
					return w
				}
			}
		}
		d = d.AddDate(0, 0, 1)
	}
}

// Effective is the effective entry date of an entry in a file built at
// built: the same day for a same-day entry (sameDay) built on a banking
// day at or before the cut-off, else the next banking day.
func (s Schedule) Effective(built time.Time, sameDay bool) Date {
	s = s.orDefault()
	d := DateOf(built)
	if sameDay && IsBusinessDay(d) && ClockOf(built) <= s.Cutoff {
		return d
	}
	return AddBusinessDays(d, 1)
}

// Arrival is the effective date of an entry created at created that
// leaves in the next window: when it is expected at the receiving bank.
// A window's tick may run a little after the window opens and take an
// entry created meanwhile; Arrival does not count on that.
func (s Schedule) Arrival(created time.Time, sameDay bool) Date {
	return s.Effective(s.Next(created).Time(), sameDay)
}

// EndOfDay is the last second of the Eastern day d, in UTC.
func EndOfDay(d Date) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 23, 59, 59, 0, Eastern).UTC()
}
