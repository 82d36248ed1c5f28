package calendar

import (
	"testing"
	"time"
)

func day(s string) Date {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestHolidays(t *testing.T) {
	for _, c := range []struct {
		date string
		want bool
	}{
		{"2026-01-01", true},  // New Year's Day (Thursday)
		{"2026-01-19", true},  // MLK Day, 3rd Monday
		{"2026-01-12", false}, // 2nd Monday
		{"2026-02-16", true},  // Washington's Birthday
		{"2026-05-25", true},  // Memorial Day, last Monday
		{"2026-05-18", false},
		{"2026-06-19", true},  // Juneteenth (Friday)
		{"2026-07-04", true},  // Independence Day on a Saturday: the date itself
		{"2026-07-03", false}, // …and the Fed is open the Friday before
		{"2026-09-07", true},  // Labor Day
		{"2026-10-12", true},  // Columbus Day
		{"2026-11-11", true},  // Veterans Day (Wednesday)
		{"2026-11-26", true},  // Thanksgiving, 4th Thursday
		{"2026-11-27", false}, // day after Thanksgiving: open
		{"2026-12-25", true},
		{"2022-12-26", true}, // Christmas 2022 fell on Sunday: observed Monday
		{"2023-01-02", true}, // New Year 2023 on Sunday: observed Monday
		{"2027-07-05", true}, // Independence Day 2027 on Sunday: observed Monday
	} {
		if got := IsHoliday(day(c.date)); got != c.want {
			t.Errorf("IsHoliday(%s) = %v, want %v", c.date, got, c.want)
		}
	}
}

func TestAddBusinessDays(t *testing.T) {
	for _, c := range []struct{ from, want string }{
		{"2026-11-16", "2026-11-18"}, // Monday → Wednesday
		{"2026-11-19", "2026-11-23"}, // Thursday → Monday (weekend)
		{"2026-11-20", "2026-11-24"}, // Friday → Tuesday
		{"2026-11-21", "2026-11-24"}, // Saturday → Tuesday
		{"2026-11-24", "2026-11-27"}, // Tuesday → Friday (Thanksgiving skipped)
		{"2026-12-23", "2026-12-28"}, // Wednesday → Monday (Christmas Friday, weekend)
		{"2026-11-09", "2026-11-12"}, // Monday → Thursday (Veterans Day Wednesday)
	} {
		if got := AddBusinessDays(day(c.from), 2); !got.Equal(day(c.want)) {
			t.Errorf("AddBusinessDays(%s, 2) = %s, want %s", c.from, got.Format("2006-01-02"), c.want)
		}
	}
}

func TestDateOfUsesEasternTime(t *testing.T) {
	// 02:00 UTC on the 21st is still the 20th in New York.
	got := DateOf(time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC))
	if !got.Equal(day("2026-11-20")) {
		t.Errorf("DateOf = %s, want 2026-11-20", got)
	}
}
