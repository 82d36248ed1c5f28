package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestSandboxMicroDepositSimulations: a return fails the open verification
// with its code and the source stays Unverified; an expiry ends it so that
// a verify answers verification_expired; each fires the real path's event.
func TestSandboxMicroDepositSimulations(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	id := h.Source(key, user, "123456789")
	base := "/v2/sandbox/funding-source/" + id + "/micro-deposits/"

	th.WantError(t, h.Post(base+"return", key, `{"code":"R01"}`), http.StatusConflict, "verification_not_initiated")
	th.WantOK(t, h.Initiate(key, id))
	for _, body := range []string{`{}`, `{"code":"X03"}`, `{"code":"R3"}`, `{"code":"R01","extra":1}`} {
		r := h.Post(base+"return", key, body)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if p := r.ErrParam(t); body != `{"code":"R01","extra":1}` && p != "code" {
			t.Errorf("%s: param %q, want code", body, p)
		}
	}
	src := th.WantOK(t, h.Post(base+"return", key, `{"code":"R01"}`))
	v, _ := src["verification"].(map[string]any)
	if src["status"] != "Unverified" || v["status"] != "failed" || v["return_code"] != "R01" {
		t.Errorf("after the return: %s", th.MustJSON(src))
	}
	ev := h.Events("funding_source.verification_failed")
	if len(ev) != 1 || ev[0]["verification"].(map[string]any)["return_code"] != "R01" {
		t.Errorf("verification_failed events: %v", ev)
	}
	th.WantError(t, h.Post(base+"return", key, `{"code":"R01"}`), http.StatusConflict, "conflict")
	th.WantError(t, h.Post(base+"expire", key, ``), http.StatusConflict, "conflict")

	// A new verification of the same source, then its expiry.
	th.WantOK(t, h.Initiate(key, id))
	amounts := h.Amounts(key, id)
	src = th.WantOK(t, h.Post(base+"expire", key, ``))
	v, _ = src["verification"].(map[string]any)
	if src["status"] != "Unverified" || v["status"] != "expired" {
		t.Errorf("after the expiry: %s", th.MustJSON(src))
	}
	if ev := h.Events("funding_source.verification_expired"); len(ev) != 1 {
		t.Errorf("verification_expired events: %d, want 1", len(ev))
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, "["+amounts[0]+","+amounts[1]+"]")),
		http.StatusConflict, "verification_expired")

	th.WantError(t, h.Post("/v2/sandbox/funding-source/fs_unknown/micro-deposits/expire", key, ``), http.StatusNotFound, "funding_source_not_found")
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Post(base+"expire", other, ``), http.StatusNotFound, "funding_source_not_found")
}

// TestSandboxSimulationsRefuseProductionKeys: every simulation answers a
// production key with 403 permission_denied and changes nothing.
func TestSandboxSimulationsRefuseProductionKeys(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	live := h.Production(m).SecretKey
	before := h.Count("events")
	for _, path := range []string{
		"/v2/sandbox/funding-source/fs_x/micro-deposits/return",
		"/v2/sandbox/funding-source/fs_x/micro-deposits/expire",
		"/v2/sandbox/payments/pay_x/return",
		"/v2/sandbox/subscriptions/sub_x/advance",
	} {
		th.WantError(t, h.Post(path, live, `{"code":"R01"}`), http.StatusForbidden, "permission_denied")
	}
	th.WantError(t, h.Get("/v2/sandbox/funding-source/fs_x/micro-deposits", live), http.StatusForbidden, "permission_denied")
	if after := h.Count("events"); after != before {
		t.Errorf("refused simulations recorded %d events", after-before)
	}
}

// TestSandboxPaymentReturn: a pending or a processed payment comes back
// failed with its code and payment.failed; a failed or canceled one cannot.
func TestSandboxPaymentReturn(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	pending := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	p := th.WantOK(t, h.Post("/v2/sandbox/payments/"+pending+"/return", key, `{"code":"R08"}`))
	if p["status"] != "failed" || p["failure_code"] != "R08" || p["failure_reason"] == nil || p["attempt"] != nil {
		t.Errorf("returned pending payment: %s", th.MustJSON(p))
	}
	if ev := h.Events("payment.failed"); len(ev) != 1 || ev[0]["failure_code"] != "R08" {
		t.Errorf("payment.failed events: %v", ev)
	}
	th.WantError(t, h.Post("/v2/sandbox/payments/"+pending+"/return", key, `{"code":"R08"}`), http.StatusConflict, "conflict")

	settled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"30.00"`, "credit")))["payment_id"].(string)
	h.Clock.Advance(time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := th.WantOK(t, h.Get("/v2/payments/"+settled, key)); got["status"] != "processed" {
		t.Fatalf("settled payment: %s", th.MustJSON(got))
	}
	if p := th.WantOK(t, h.Post("/v2/sandbox/payments/"+settled+"/return", key, `{"code":"R09"}`)); p["status"] != "failed" || p["failure_code"] != "R09" {
		t.Errorf("returned processed payment: %s", th.MustJSON(p))
	}

	canceled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/payments/"+canceled+"/cancel", key, ``))
	th.WantError(t, h.Post("/v2/sandbox/payments/"+canceled+"/return", key, `{"code":"R01"}`), http.StatusConflict, "conflict")
	th.WantError(t, h.Post("/v2/sandbox/payments/pay_unknown/return", key, `{"code":"R01"}`), http.StatusNotFound, "payment_not_found")
	th.WantError(t, h.Post("/v2/sandbox/payments/"+canceled+"/return", key, `{"code":"01"}`), http.StatusBadRequest, "invalid_request")
}

// TestSubscriptionReturnsRepresentAtMostTwice: R01 and R09 are presented
// again on the next business day, at most twice, then the subscription is
// canceled; every payment names its subscription and attempt.
func TestSubscriptionReturnsRepresentAtMostTwice(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // Monday 2026-11-02
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "weekly", "2026-11-09")))["subscription_id"].(string)
	advance := "/v2/sandbox/subscriptions/" + sub + "/advance"

	for attempt, code := range []string{"R01", "R09", "R01"} {
		p := th.WantOK(t, h.Post(advance, key, ``))
		if p["subscription_id"] != sub || p["attempt"] != float64(attempt+1) || p["direction"] != "debit" || p["amount"] != "9.99" {
			t.Fatalf("attempt %d: %s", attempt+1, th.MustJSON(p))
		}
		th.WantOK(t, h.Post("/v2/sandbox/payments/"+p["payment_id"].(string)+"/return", key, `{"code":"`+code+`"}`))
		s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub, key))
		if attempt < 2 && (s["status"] != "active" || s["retry_date"] != "2026-11-03" || s["payment_count"] != float64(1)) {
			t.Fatalf("after return %d: %s", attempt+1, th.MustJSON(s))
		}
		if attempt == 2 && (s["status"] != "canceled" || s["cancel_reason"] != "payment_returned" || s["retry_date"] != nil) {
			t.Fatalf("after the last return: %s", th.MustJSON(s))
		}
	}
	if ev := h.Events("subscription.canceled"); len(ev) != 1 || ev[0]["cancel_reason"] != "payment_returned" {
		t.Errorf("subscription.canceled events: %v", ev)
	}
	th.WantError(t, h.Post(advance, key, ``), http.StatusConflict, "conflict")

	// A final code cancels at once.
	final := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "4.00", "monthly", "2026-11-20")))["subscription_id"].(string)
	p := th.WantOK(t, h.Post("/v2/sandbox/subscriptions/"+final+"/advance", key, ``))
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+p["payment_id"].(string)+"/return", key, `{"code":"R08"}`))
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+final, key)); s["status"] != "canceled" || s["cancel_reason"] != "payment_returned" {
		t.Errorf("after R08: %s", th.MustJSON(s))
	}

	// A return that arrives by settlement (the sandbox's 13.02 comes back R02) follows the same rules.
	magic := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "13.02", "weekly", "2026-11-20")))["subscription_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/subscriptions/"+magic+"/advance", key, ``))
	h.Clock.Advance(time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+magic, key)); s["status"] != "canceled" || s["cancel_reason"] != "payment_returned" {
		t.Errorf("after a settled R02: %s", th.MustJSON(s))
	}
}

// TestSchedulerRepresentsOnTheNextBusinessDay: the scheduler creates the
// re-presentment on its day, not before, and only once.
func TestSchedulerRepresentsOnTheNextBusinessDay(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	h.Clock.Advance(4 * 24 * time.Hour) // Friday 2026-11-06
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "12.00", "weekly", "2026-11-06")))["subscription_id"].(string)
	run := func() int {
		t.Helper()
		n, err := h.Payments.RunDue(context.Background())
		if err != nil {
			t.Fatalf("RunDue: %v", err)
		}
		return n
	}
	if n := run(); n != 1 {
		t.Fatalf("first run created %d debits", n)
	}
	first := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+src, key))["data"].([]any)[0].(map[string]any)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+first["payment_id"].(string)+"/return", key, `{"code":"R01"}`))
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub, key)); s["retry_date"] != "2026-11-09" { // the Monday after
		t.Fatalf("retry_date: %s", th.MustJSON(s))
	}
	h.Clock.Advance(24 * time.Hour) // Saturday
	if n := run(); n != 0 {
		t.Errorf("a re-presentment before its business day: %d", n)
	}
	h.Clock.Advance(2 * 24 * time.Hour) // Monday 11-09: the re-presentment
	if n := run(); n != 1 {
		t.Errorf("Monday created %d debits, want 1", n)
	}
	if n := run(); n != 0 {
		t.Errorf("a second run created %d", n)
	}
	h.Clock.Advance(4 * 24 * time.Hour) // Friday 11-13: the next weekly debit
	if n := run(); n != 1 {
		t.Errorf("the next Friday created %d debits, want 1", n)
	}
	attempts := map[float64]int{}
	for _, it := range th.WantOK(t, h.Get("/v2/payments?funding_source_id="+src, key))["data"].([]any) {
		p := it.(map[string]any)
		if p["subscription_id"] != sub {
			t.Errorf("payment without its subscription: %s", th.MustJSON(p))
		}
		attempts[p["attempt"].(float64)]++
	}
	if attempts[1] != 2 || attempts[2] != 1 {
		t.Errorf("attempts = %v, want two first presentments and one second", attempts)
	}
}
