package hosted_test

import (
	"net/http"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestMicroDepositsArriveSameDayBeforeTheCutoff: initiated at 15:44 ET
// the deposits leave in the 15:45 window, same-day, and arrive today; at
// 15:46 they wait for the 20:00 window and arrive the next banking day.
// The API and the hosted page say so.
func TestMicroDepositsArriveSameDayBeforeTheCutoff(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	h.Clock.Set(webtest.Eastern(2026, 11, 2, 15, 44))
	v := th.WantOK(t, h.Initiate(s.Key, s.Src))["verification"].(map[string]any)
	if v["expected_arrival_date"] != "2026-11-02" {
		t.Errorf("at 15:44 ET: expected_arrival_date = %v, want 2026-11-02 (today)", v["expected_arrival_date"])
	}
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), http.StatusOK, "should arrive <strong>today, Monday, November 2, 2026</strong>")

	late := h.Source(s.Key, s.User, "223456789")
	h.Clock.Set(webtest.Eastern(2026, 11, 2, 15, 46))
	v = th.WantOK(t, h.Initiate(s.Key, late))["verification"].(map[string]any)
	if v["expected_arrival_date"] != "2026-11-03" {
		t.Errorf("at 15:46 ET: expected_arrival_date = %v, want 2026-11-03 (the next banking day)", v["expected_arrival_date"])
	}
	p := "/bank-account/" + s.PK + "/" + s.User + "/" + late + "?" + webtest.OkQuery()
	webtest.WantPage(t, h.Page(p), http.StatusOK, "should arrive by <strong>Tuesday, November 3, 2026</strong>")
}
