package hosted_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	sh := sim.Handler()
	var unreadable atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sh.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if unreadable.Load() {
			body = bytes.Replace(body, []byte("pacs.002.001.10"), []byte("pacs.002.001.13"), 1)
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	s := webtest.NewHostedSetup(t, th.WithRail(srv.URL))
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
