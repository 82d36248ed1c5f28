package calendar

import (
	"testing"
	"time"
)

func et(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, Eastern)
}

func TestParseWindows(t *testing.T) {
	got, err := ParseWindows("20:00, 09:45,13:45,15:45")
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultSchedule().Windows; len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
		t.Errorf("ParseWindows = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "9:45", "24:00", "12:60", "09:45,09:45", "09:45,", "noon", "09:45:00"} {
		if _, err := ParseWindows(bad); err == nil {
			t.Errorf("ParseWindows(%q) accepted", bad)
		}
	}
}

// TestArrivalAtTheCutoff: an entry created a minute before the 15:45
// window goes in it and is same-day; a minute after, it waits for the
// 20:00 window and arrives the next banking day.
func TestArrivalAtTheCutoff(t *testing.T) {
	s := DefaultSchedule()
	for _, c := range []struct {
		name    string
		created time.Time
		sameDay bool
		want    string
	}{
		{"15:44 same-day", et(2026, 3, 4, 15, 44), true, "2026-03-04"},
		{"15:46 same-day", et(2026, 3, 4, 15, 46), true, "2026-03-05"},
		{"15:44 standard", et(2026, 3, 4, 15, 44), false, "2026-03-05"},
		{"Friday 19:59 same-day: the last window is past the cut-off", et(2026, 3, 6, 19, 59), true, "2026-03-09"},
		{"Friday 20:01: Monday's first window", et(2026, 3, 6, 20, 1), true, "2026-03-09"},
		{"Friday 20:01 standard: Monday's window, effective Tuesday", et(2026, 3, 6, 20, 1), false, "2026-03-10"},
		{"Saturday", et(2026, 3, 7, 11, 0), true, "2026-03-09"},
		{"Friday before Labor Day, after the last window", et(2026, 9, 4, 20, 30), true, "2026-09-08"},
		{"Labor Day", et(2026, 9, 7, 10, 0), true, "2026-09-08"},
		{"Labor Day standard", et(2026, 9, 7, 10, 0), false, "2026-09-09"},
	} {
		if got := s.Arrival(c.created, c.sameDay).Format(time.DateOnly); got != c.want {
			t.Errorf("%s: Arrival = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestEffective(t *testing.T) {
	s := DefaultSchedule()
	for _, c := range []struct {
		built   time.Time
		sameDay bool
		want    string
	}{
		{et(2026, 3, 4, 15, 45).Add(40 * time.Second), true, "2026-03-04"}, // the cut-off's own minute
		{et(2026, 3, 4, 15, 46), true, "2026-03-05"},
		{et(2026, 3, 6, 20, 0), true, "2026-03-09"},  // Friday's last window
		{et(2026, 3, 9, 9, 45), true, "2026-03-09"},  // Monday's first
		{et(2026, 3, 9, 9, 45), false, "2026-03-10"}, // standard: the next banking day
		{et(2026, 9, 7, 9, 45), true, "2026-09-08"},  // forced on a holiday
	} {
		if got := s.Effective(c.built, c.sameDay).Format(time.DateOnly); got != c.want {
			t.Errorf("Effective(%s, %v) = %s, want %s", c.built, c.sameDay, got, c.want)
		}
	}
}

func TestDue(t *testing.T) {
	s := DefaultSchedule()
	for _, c := range []struct {
		now  time.Time
		want string // "" for none
	}{
		{et(2026, 3, 4, 9, 44), ""},
		{et(2026, 3, 4, 9, 45), "2026-03-04 09:45"},
		{et(2026, 3, 4, 14, 30), "2026-03-04 13:45"}, // missed 13:45, caught up once
		{et(2026, 3, 4, 23, 59), "2026-03-04 20:00"},
		{et(2026, 3, 5, 0, 1), ""},  // yesterday's windows are not caught up today
		{et(2026, 3, 7, 10, 0), ""}, // Saturday
		{et(2026, 9, 7, 10, 0), ""}, // Labor Day
	} {
		w, ok := s.Due(c.now)
		got := ""
		if ok {
			got = w.String()
		}
		if got != c.want {
			t.Errorf("Due(%s) = %q, want %q", c.now, got, c.want)
		}
	}
}

func TestEndOfDay(t *testing.T) {
	// 2026-03-06 is in EST (UTC-5); 2026-07-06 in EDT (UTC-4).
	if got := EndOfDay(day("2026-03-06")).Format(time.RFC3339); got != "2026-03-07T04:59:59Z" {
		t.Errorf("EndOfDay(2026-03-06) = %s", got)
	}
	if got := EndOfDay(day("2026-07-06")).Format(time.RFC3339); got != "2026-07-07T03:59:59Z" {
		t.Errorf("EndOfDay(2026-07-06) = %s", got)
	}
}
