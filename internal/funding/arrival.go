package funding

import (
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Arrival. A micro-deposit pair leaves in the next ACH window after its
// initiation and arrives on its entries' effective date: the same banking
// day when micro-deposits go Same Day ACH and that window is at or before
// the same-day cut-off, else the next banking day
// (calendar.Schedule.Arrival). Sandbox deposits arrive on the same
// promise, so a test flow sees the dates production would.

// WithSchedule sets the ACH windows micro-deposits leave in and whether
// they go same-day; without it, calendar.DefaultSchedule, same-day.
func (s *Service) WithSchedule(sched calendar.Schedule, sameDay bool) *Service {
	s.arrival = func(t time.Time) calendar.Date { return sched.Arrival(t, sameDay) }
	return s
}

// depositArrival is when micro-deposits initiated at t are expected.
func (s *Service) depositArrival(t time.Time) calendar.Date {
	if s.arrival == nil {
		return calendar.DefaultSchedule().Arrival(t, true)
	}
	return s.arrival(t)
}
