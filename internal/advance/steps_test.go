package advance

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

func easternAt(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, calendar.Eastern)
	if err != nil {
		panic(err)
	}
	return t
}

// TestStepsStopAtEveryInstantProductionActsAt: an advance over a weekend
// stops at each midnight, each noon UTC and each window of the banking
// days only, in order, and ends at its target with everything run.
func TestStepsStopAtEveryInstantProductionActsAt(t *testing.T) {
	sch := calendar.DefaultSchedule()
	// Friday 2026-12-04 18:00 to Monday 2026-12-07 09:00.
	from, to := easternAt("2026-12-04 18:00"), easternAt("2026-12-07 09:00")
	steps := Steps(sch, from, to)
	var windows, mornings, noons int
	last := from
	for _, s := range steps {
		if !s.At.After(last) {
			t.Fatalf("step %s not after %s", s.At, last)
		}
		last = s.At
		if s.Window {
			windows++
			if d := calendar.DateOf(s.At); !calendar.IsBusinessDay(d) {
				t.Errorf("a window on %s, no banking day", d)
			}
		}
		if s.Morning {
			mornings++
		}
		if s.Settle {
			noons++
		}
	}
	end := steps[len(steps)-1]
	if !end.At.Equal(to.UTC()) || !end.Morning || !end.Window || !end.Settle {
		t.Errorf("last step %+v, want everything at %s", end, to.UTC())
	}
	// Friday's evening window (if after 18:00), Monday's windows at or
	// before 09:00, and the target.
	wantWindows := 1
	for _, w := range sch.Windows {
		at := time.Date(2026, 12, 4, 0, 0, 0, 0, calendar.Eastern).Add(time.Duration(w) * time.Minute)
		if at.After(from) {
			wantWindows++
		}
		at = time.Date(2026, 12, 7, 0, 0, 0, 0, calendar.Eastern).Add(time.Duration(w) * time.Minute)
		if !at.After(to) && at.Before(to) {
			wantWindows++
		}
	}
	if windows != wantWindows {
		t.Errorf("%d window steps, want %d", windows, wantWindows)
	}
	if mornings != 4 { // Sat, Sun, Mon midnights and the target
		t.Errorf("%d morning steps, want 4", mornings)
	}
	if noons != 4 { // Sat, Sun, Mon noon UTC... Mon noon UTC is 07:00 Eastern
		t.Errorf("%d settle steps, want 4", noons)
	}
	if len(Steps(sch, to, to)) != 0 || len(Steps(sch, to, from)) != 0 {
		t.Error("an empty or backwards advance has steps")
	}
}
