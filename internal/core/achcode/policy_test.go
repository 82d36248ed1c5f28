package achcode_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/core/achcode"
)

func TestReturnPolicy(t *testing.T) {
	for _, c := range []struct {
		code string
		want achcode.Action
	}{
		{"R02", achcode.Remove}, {"R03", achcode.Remove}, {"R04", achcode.Remove}, {"R20", achcode.Remove},
		{"R05", achcode.Block}, {"R07", achcode.Block}, {"R10", achcode.Block}, {"R11", achcode.Block},
		{"R29", achcode.Block}, {"R16", achcode.Block}, {"R17", achcode.Block},
		{"R01", achcode.Keep}, {"R08", achcode.Keep}, {"R09", achcode.Keep}, {"R99", achcode.Keep}, {"", achcode.Keep},
	} {
		if got := achcode.SourceAction(c.code); got != c.want {
			t.Errorf("SourceAction(%q) = %q, want %q", c.code, got, c.want)
		}
	}
	// R17 acts on the source like R10.
	if achcode.SourceAction("R17") != achcode.SourceAction("R10") {
		t.Errorf("R17 does %q, R10 %q", achcode.SourceAction("R17"), achcode.SourceAction("R10"))
	}
	// Every code the policy acts on has a reason of its own.
	for _, code := range []string{"R02", "R03", "R04", "R20", "R05", "R07", "R10", "R11", "R29", "R16", "R17"} {
		if achcode.Reason(code) == achcode.Reason("R99") {
			t.Errorf("%s has no reason of its own", code)
		}
	}
}
