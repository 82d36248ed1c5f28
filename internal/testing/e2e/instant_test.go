package e2e_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// instantRig is a harness whose instant rail is the simulator over HTTP,
// with a merchant's sandbox key and a webhook receiver registered for it
// (and its signing secret).
func instantRig(t *testing.T) (*harness, *railsim.Sim, string, *th.Receiver, string) {
	sim := railsim.New()
	rail := httptest.NewServer(sim.Handler())
	t.Cleanup(rail.Close)
	h := newHarness(t, th.WithRail(rail.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	rc := th.NewReceiver(t, nil)
	return h, sim, key, rc, h.RegisterWebhook(key, rc.URL())["secret"].(string)
}

// Instant verification end to end: the API, the rail simulator over HTTP,
// PostgreSQL and signed webhooks checked against the OpenAPI document.
func TestInstantVerificationDeliversSignedEvents(t *testing.T) {
	t.Parallel()
	h, sim, key, rc, secret := instantRig(t)

	user := h.Customer(key)
	ok := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	refused := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "222222226", railsim.AccountBlocked)))["funding_source_id"].(string)
	th.WantOK(t, h.InitiateBy(key, ok, "instant"))
	th.WantOK(t, h.InitiateBy(key, refused, "auto"))
	code := h.Code(key, ok)
	if credits := sim.Credits(); len(credits) != 2 || credits[0].Remittance != code || credits[1].Status != "RJCT" || credits[1].Reason != "AC06" {
		t.Errorf("the rail got %+v, want the code's credit and one refused with AC06", credits)
	}
	th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.CodeBody(ok, code)))

	h.Deliver()
	byType := map[string]map[string]any{}
	for i, r := range rc.Requests() {
		if err := th.VerifyStandardWebhook(secret, r.Header, r.Body, h.Clock.Now()); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		if strings.Contains(string(r.Body), "123456789") || strings.Contains(string(r.Body), code) {
			t.Errorf("request %d carries the account number or the code: %s", i, r.Body)
		}
		p := r.Payload(t)
		d := p["data"].(map[string]any)
		fs, _ := d["funding_source_id"].(string)
		byType[p["type"].(string)+" "+fs] = d
	}
	pending := byType["funding_source.verification_pending "+ok]
	if pending == nil || pending["verification_method"] != "instant" || pending["status"] != "PendingVerified" ||
		pending["verification"].(map[string]any)["rail"] != "rtp" {
		t.Errorf("verification_pending data = %v", pending)
	}
	if byType["funding_source.verified "+ok] == nil {
		t.Error("no funding_source.verified for the instant source")
	}
	failed := byType["funding_source.verification_failed "+refused]
	if failed == nil || failed["verification"].(map[string]any)["failure_code"] != "AC06" {
		t.Errorf("verification_failed data = %v", failed)
	}
	if byType["funding_source.verification_pending "+refused] != nil {
		t.Error("a refused instant deposit fired verification_pending")
	}
}

// Instant payouts end to end: credits over RTP and FedNow through the API
// and the rail simulator over HTTP, each answered by a signed
// payment.success or payment.failed (with the ISO reason) that the
// document's Event schema accepts, as for any payment.
func TestInstantPayoutsDeliverSignedEvents(t *testing.T) {
	t.Parallel()
	h, sim, key, rc, secret := instantRig(t)

	user := h.Customer(key)
	paid := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	closed := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "222222226", railsim.AccountClosed)))["funding_source_id"].(string)
	payout := func(src, method string) string {
		body := `{"funding_source_id":"` + src + `","amount":"12.50","direction":"credit","method":"` + method + `"}`
		return th.WantOK(t, h.Post("/v2/payments", key, body))["payment_id"].(string)
	}
	ok, rejected := payout(paid, "instant"), payout(closed, "auto")
	if credits := sim.Credits(); len(credits) != 2 || credits[0].Remittance != ok || credits[1].Reason != "AC04" {
		t.Errorf("the rail got %+v, want the two credits, the second refused with AC04", credits)
	}

	h.Deliver()
	byType := map[string]map[string]any{}
	for i, r := range rc.Requests() {
		if err := th.VerifyStandardWebhook(secret, r.Header, r.Body, h.Clock.Now()); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		if strings.Contains(string(r.Body), "123456789") || strings.Contains(string(r.Body), railsim.AccountClosed) {
			t.Errorf("request %d carries an account number: %s", i, r.Body)
		}
		p := r.Payload(t)
		d := p["data"].(map[string]any)
		id, _ := d["payment_id"].(string)
		byType[p["type"].(string)+" "+id] = d
	}
	if d := byType["payment.success "+ok]; d == nil || d["status"] != "processed" || d["rail"] != "rtp" || d["rail_status"] != "accepted" {
		t.Errorf("payment.success of the RTP credit = %v", d)
	}
	if d := byType["payment.failed "+rejected]; d == nil || d["status"] != "failed" || d["rail"] != "fednow" || d["failure_code"] != "AC04" || d["method"] != "auto" {
		t.Errorf("payment.failed of the FedNow credit = %v", d)
	}
	if byType["payment.failed "+ok] != nil || byType["payment.success "+rejected] != nil {
		t.Error("a credit fired the other outcome's event too")
	}
}
