// Package calendar counts US banking business days: Monday to Friday except
// the Federal Reserve's holidays, as the ACH network observes them.
package calendar

import (
	"time"
	_ "time/tzdata" // America/New_York on machines without a zoneinfo database
)

// Eastern is the time zone of the ACH operators; a day's date is taken there.
var Eastern = mustLoad("America/New_York")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// Date is a calendar day at midnight UTC (a date without a zone).
type Date = time.Time

// DateOf returns the Eastern calendar date of t, as midnight UTC.
func DateOf(t time.Time) Date {
	y, m, d := t.In(Eastern).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// IsBusinessDay reports whether d is a weekday that is not a Federal Reserve holiday.
func IsBusinessDay(d Date) bool {
	switch d.Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	return !IsHoliday(d)
}

// AddBusinessDays returns the n-th business day after d (n ≥ 1). Starting
// on a weekend or holiday counts from the next business day.
func AddBusinessDays(d Date, n int) Date {
	for n > 0 {
		d = d.AddDate(0, 0, 1)
		if IsBusinessDay(d) {
			n--
		}
	}
	return d
}

// IsHoliday reports whether the Federal Reserve is closed for a holiday on d.
// Fixed-date holidays falling on a Sunday are observed the next Monday; on a
// Saturday the Federal Reserve stays open the day before, so no weekday is lost.
func IsHoliday(d Date) bool {
	_, m, day := d.Date()
	wd := d.Weekday()
	for _, f := range []struct {
		m   time.Month
		day int
	}{{time.January, 1}, {time.June, 19}, {time.July, 4}, {time.November, 11}, {time.December, 25}} {
		if m == f.m && day == f.day {
			return true
		}
		// Observed on Monday when it falls on Sunday.
		if wd == time.Monday && m == f.m && day == f.day+1 {
			return true
		}
	}
	switch {
	case m == time.January && wd == time.Monday && nth(day) == 3: // Martin Luther King Jr. Day
		return true
	case m == time.February && wd == time.Monday && nth(day) == 3: // Washington's Birthday
		return true
	case m == time.May && wd == time.Monday && day+7 > 31: // Memorial Day (last Monday)
		return true
	case m == time.September && wd == time.Monday && nth(day) == 1: // Labor Day
		return true
	case m == time.October && wd == time.Monday && nth(day) == 2: // Columbus Day
		return true
	case m == time.November && wd == time.Thursday && nth(day) == 4: // Thanksgiving
		return true
	}
	return false
}

// nth is which occurrence of its weekday day-of-month day is (1 for days 1–7).
func nth(day int) int { return (day-1)/7 + 1 }
