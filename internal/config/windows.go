package config

import (
	"fmt"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// ACHSchedule is when ACH files are built, from ACH_WINDOWS (HH:MM US
// Eastern, comma-separated; default 09:45,13:45,15:45,20:00) and
// ACH_SAME_DAY_CUTOFF (default 15:45): a Same Day ACH entry in a file
// built at or before the cut-off is effective that banking day.
// ACHSameDayMicro (ACH_SAME_DAY_MICRO, default on) sends micro-deposits
// same-day.
type ACHSchedule struct {
	Schedule     calendar.Schedule
	SameDayMicro bool
}

// loadACHSchedule reads the ACH windows; a bad value is an error naming
// the variable.
func loadACHSchedule(getenv Getenv) (ACHSchedule, error) {
	s := ACHSchedule{Schedule: calendar.DefaultSchedule()}
	if raw := getenv("ACH_WINDOWS"); raw != "" {
		w, err := calendar.ParseWindows(raw)
		if err != nil {
			return ACHSchedule{}, fmt.Errorf("ACH_WINDOWS must be comma-separated HH:MM US Eastern times like 09:45,13:45,15:45,20:00: %v", err)
		}
		s.Schedule.Windows = w
	}
	if raw := getenv("ACH_SAME_DAY_CUTOFF"); raw != "" {
		c, err := calendar.ParseClock(raw)
		if err != nil {
			return ACHSchedule{}, fmt.Errorf("ACH_SAME_DAY_CUTOFF must be an HH:MM US Eastern time like 15:45: %v", err)
		}
		s.Schedule.Cutoff = c
	}
	var err error
	if s.SameDayMicro, err = boolVar(getenv, "ACH_SAME_DAY_MICRO", true); err != nil {
		return ACHSchedule{}, err
	}
	return s, nil
}
