package dashboard_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestDashboardShowsAnUnknownRailStatus: an instant deposit whose rail
// answer could not be read is shown sent with its rail status unknown, not
// arrived and not "nothing was sent".
func TestDashboardShowsAnUnknownRailStatus(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	sh := sim.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sh.ServeHTTP(rec, r)
		_, _ = w.Write(bytes.Replace(rec.Body.Bytes(), []byte("pacs.002.001.10"), []byte("pacs.002.001.13"), 1))
	}))
	defer srv.Close()
	h := webtest.NewHarness(t, th.WithRail(srv.URL))
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", "123456789")))["funding_source_id"].(string)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+src+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"the rail&#39;s answer could not be read", `id="rail-unknown"`, "rail status unknown")
}
