package hosted_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestHostedInstantWithUnknownRailStatus: when the rail's answer on the
// instant deposit could not be read, the page asks for the code without
// saying the deposit has arrived; an accepted one says it has.
func TestHostedInstantWithUnknownRailStatus(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	railURL, unreadable := th.UnreadableRail(t, sim)
	s := webtest.NewHostedSetup(t, th.WithRail(railURL))
	h := s.H

	th.WantOK(t, h.InitiateBy(s.Key, s.Src, "instant"))
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "over RTP. It has arrived")

	unreadable.Store(true)
	other := h.Source(s.Key, s.User, "223456789")
	th.WantOK(t, h.InitiateBy(s.Key, other, "instant"))
	body := webtest.WantPage(t, h.Page("/bank-account/"+s.PK+"/"+s.User+"/"+other+"?"+webtest.OkQuery()), 200,
		"over RTP. It may take a few minutes to show")
	if strings.Contains(body, "It has arrived") {
		t.Error("the page says a deposit whose rail status is unknown has arrived")
	}
}
