package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
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
	railURL, unreadable := th.UnreadableRail(t, railsim.New())
	unreadable.Store(true)
	h := webtest.NewHarness(t, th.WithRail(railURL))
	d, key := webtest.SignedIn(t, h, "Acme Books")
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", "123456789")))["funding_source_id"].(string)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+src+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"the rail&#39;s answer could not be read", `id="rail-unknown"`, "rail status unknown")
}

// TestDashboardOffersWhatTheServiceDoesForInstantCredits: a processed
// instant credit is final, so its page offers neither Reverse nor the
// sandbox return; a pending one whose rail answer could not be read was
// sent, so it offers no Cancel; a pending ACH credit beside them still
// offers Cancel and the sandbox return. Each absent form is one the API
// refuses. The pages say where each credit stands on its rail, and the
// evidence pages name the rail and an auto credit's fallback reason.
func TestDashboardOffersWhatTheServiceDoesForInstantCredits(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	railURL, unreadable := th.UnreadableRail(t, sim)
	h := webtest.NewHarness(t, th.WithRail(railURL))
	d, key := webtest.SignedIn(t, h, "Acme Books")
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	ach := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456780")))["funding_source_id"].(string)
	credit := func(src, method string) map[string]any {
		t.Helper()
		return th.WantOK(t, h.Post("/v2/payments", key, `{"funding_source_id":"`+src+`","amount":"12.00","direction":"credit","method":"`+method+`"}`))
	}
	var body string // the last payment page forms read
	forms := func(id string) (cancel, reverse, ret bool) {
		t.Helper()
		body = webtest.WantPage(t, d.Get("/dashboard/payments/"+id), http.StatusOK)
		return strings.Contains(body, `id="cancel-action"`), strings.Contains(body, `id="reverse-action"`), strings.Contains(body, `id="return-action"`)
	}

	done := credit(src, "instant")
	if done["status"] != "processed" || done["rail_status"] != "accepted" {
		t.Fatalf("instant credit = %v", done)
	}
	if cancel, reverse, ret := forms(done["payment_id"].(string)); cancel || reverse || ret {
		t.Errorf("a processed instant credit offers cancel %t, reverse %t, return %t; want none", cancel, reverse, ret)
	}
	if !strings.Contains(body, `<dd id="payment-rail-status">Accepted by the rail</dd>`) {
		t.Errorf("a processed instant credit's page does not say the rail accepted it:\n%s", body)
	}
	th.WantError(t, h.Post("/v2/payments/"+done["payment_id"].(string)+"/reverse", key, `{"reason":"duplicate"}`), http.StatusConflict, "not_reversible")

	unreadable.Store(true)
	sent := credit(src, "instant")
	unreadable.Store(false)
	if sent["status"] != "pending" || sent["rail_status"] != "unknown" {
		t.Fatalf("instant credit with an unreadable answer = %v", sent)
	}
	if cancel, reverse, ret := forms(sent["payment_id"].(string)); cancel || reverse || ret {
		t.Errorf("a sent instant credit without an answer offers cancel %t, reverse %t, return %t; want none", cancel, reverse, ret)
	}
	if !strings.Contains(body, `id="payment-rail-status">Sent, waiting for the rail&#39;s status answer (rail status unknown)`) {
		t.Errorf("an instant credit without an answer's page does not say it waits for the rail:\n%s", body)
	}
	th.WantError(t, h.Post("/v2/payments/"+sent["payment_id"].(string)+"/cancel", key, ""), http.StatusConflict, "conflict")

	slow := credit(ach, "auto")
	if slow["rail"] != "ach" || slow["status"] != "pending" {
		t.Fatalf("auto credit to a bank on no rail = %v", slow)
	}
	if cancel, reverse, ret := forms(slow["payment_id"].(string)); !cancel || reverse || !ret {
		t.Errorf("a pending sandbox ACH credit offers cancel %t, reverse %t, return %t; want cancel and return", cancel, reverse, ret)
	}
	if strings.Contains(body, `id="payment-rail-status"`) {
		t.Error("an ACH credit's page shows a rail status")
	}

	// The evidence page names the rail, and why an auto credit did not
	// go instant.
	webtest.WantPage(t, d.Get("/dashboard/payments/"+slow["payment_id"].(string)+"/evidence"), http.StatusOK,
		`id="evidence-rail"`, "ACH", "not instant: instant unavailable")
	webtest.WantPage(t, d.Get("/dashboard/payments/"+done["payment_id"].(string)+"/evidence"), http.StatusOK,
		`id="evidence-rail"`, "Instant (RTP)")
}
