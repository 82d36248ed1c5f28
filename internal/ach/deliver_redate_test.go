package ach

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// TestRedateMovesOnlyWhatCanNoLongerSettle: a standard entry keeps its
// date while it is still ahead (a file built Friday 20:00 and delivered
// Saturday still settles Monday) and moves once it is today or past (the
// same file delivered Monday goes out for Tuesday; delivered on the
// Tuesday before Thanksgiving, for Wednesday); a same-day entry keeps its
// day through the cut-off minute and moves the minute after.
func TestRedateMovesOnlyWhatCanNoLongerSettle(t *testing.T) {
	et := func(y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 30, 0, calendar.Eastern)
	}
	for _, c := range []struct {
		name                string
		effective, fileDate string
		now                 time.Time
		want                string // "" keeps the date
	}{
		{"standard, delivered the evening it was built", "2026-11-09", "2026-11-06", et(2026, 11, 6, 20, 5), ""},
		{"standard, delivered on the weekend", "2026-11-09", "2026-11-06", et(2026, 11, 7, 10, 0), ""},
		{"standard, delivered on its effective day", "2026-11-09", "2026-11-06", et(2026, 11, 9, 9, 45), "2026-11-10"},
		{"standard, delivered a day late, past Veterans Day", "2026-11-09", "2026-11-06", et(2026, 11, 10, 9, 45), "2026-11-12"},
		{"standard, past a holiday", "2026-11-24", "2026-11-23", et(2026, 11, 25, 20, 0), "2026-11-27"},
		{"same-day, at the cut-off minute", "2026-11-02", "2026-11-02", et(2026, 11, 2, 15, 45), ""},
		{"same-day, the minute after the cut-off", "2026-11-02", "2026-11-02", et(2026, 11, 2, 15, 46), "2026-11-03"},
		{"same-day, the next morning", "2026-11-02", "2026-11-02", et(2026, 11, 3, 9, 45), "2026-11-03"},
		{"an entry of an earlier release, without a date", "", "2026-11-02", et(2026, 11, 9, 9, 45), ""},
	} {
		got, moved := Redate(calendar.DefaultSchedule(), Entry{EffectiveDate: c.effective, FileDate: c.fileDate}, c.now)
		switch {
		case c.want == "" && moved:
			t.Errorf("%s: Redate moved it to %s, want it kept", c.name, got.Format(time.DateOnly))
		case c.want != "" && (!moved || got.Format(time.DateOnly) != c.want):
			t.Errorf("%s: Redate = %s, %v; want %s", c.name, got.Format(time.DateOnly), moved, c.want)
		}
	}
}
