package hosted_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserHostedSameDayArrival: micro-deposits initiated before the
// same-day cut-off are promised for today on the hosted page, at desktop
// and phone widths, and the page passes axe-core.
func TestBrowserHostedSameDayArrival(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := webtest.NewHostedSetup(t).LocalOnly()
			h := s.H
			h.Clock.Set(webtest.Eastern(2026, 11, 2, 15, 44))
			th.WantOK(t, h.Initiate(s.Key, s.Src))
			srv, shop := h.Live(), webtest.NewShopSite(t)
			tb := webtest.NewTab(t, webtest.WithViewport(width, 800))
			tb.Open(s.FragmentLink(srv.URL, shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart"))
			tb.WaitURL(`/bank-account/`)
			tb.WantText("Confirm your bank account", "should arrive today, Monday, November 2, 2026, by the end of the day")
			tb.Accessible()
			tb.Axe()
			if w := tb.Eval(`document.documentElement.scrollWidth`).(int); w > width {
				tb.Errorf("the page is %d px wide at %d px", w, width)
			}
		})
	}
}
