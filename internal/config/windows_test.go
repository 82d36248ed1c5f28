package config

import (
	"strings"
	"testing"
)

func TestACHWindows(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(env(map[string]string{"DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ACHWindows; len(got.Schedule.Windows) != 4 || got.Schedule.Windows[0].String() != "09:45" ||
		got.Schedule.Windows[3].String() != "20:00" || got.Schedule.Cutoff.String() != "15:45" || !got.SameDayMicro {
		t.Errorf("defaults: %+v", got)
	}
	c, err = Load(env(map[string]string{"DATA_DIR": dir, "ACH_WINDOWS": "16:00,08:30", "ACH_SAME_DAY_CUTOFF": "14:00", "ACH_SAME_DAY_MICRO": "false"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ACHWindows; len(got.Schedule.Windows) != 2 || got.Schedule.Windows[0].String() != "08:30" ||
		got.Schedule.Cutoff.String() != "14:00" || got.SameDayMicro {
		t.Errorf("set: %+v", got)
	}
	for _, bad := range []struct{ name, value, says string }{
		{"ACH_WINDOWS", "9:45", "ACH_WINDOWS"},
		{"ACH_WINDOWS", "09:45,25:00", "ACH_WINDOWS"},
		{"ACH_WINDOWS", "09:45,09:45", "named twice"},
		{"ACH_WINDOWS", ",", "ACH_WINDOWS"},
		{"ACH_SAME_DAY_CUTOFF", "3pm", "ACH_SAME_DAY_CUTOFF"},
		{"ACH_SAME_DAY_MICRO", "sometimes", "ACH_SAME_DAY_MICRO"},
	} {
		_, err := Load(env(map[string]string{"DATA_DIR": dir, bad.name: bad.value}))
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s=%q: err = %v, want one saying %s", bad.name, bad.value, err, bad.says)
		}
	}
}
