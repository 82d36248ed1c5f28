package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestCustomerPartialUpdate: only the fields given change, under the
// creation's rules; customer.updated is recorded when something changed.
func TestCustomerPartialUpdate(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Customer(key)
	before := th.WantOK(t, h.Get("/v2/customers/"+id, key))
	c := th.WantOK(t, h.Post("/v2/customers/"+id, key, `{"email":"new@example.com","business_name":"Ada Ltd"}`))
	if c["email"] != "new@example.com" || c["business_name"] != "Ada Ltd" || c["first_name"] != before["first_name"] ||
		c["created_at"] != before["created_at"] {
		t.Errorf("updated: %s", th.MustJSON(c))
	}
	if got := th.WantOK(t, h.Get("/v2/customers/"+id, key)); got["email"] != "new@example.com" {
		t.Errorf("read back: %s", th.MustJSON(got))
	}
	if ev := h.Events("customer.updated"); len(ev) != 1 || ev[0]["email"] != "new@example.com" {
		t.Errorf("customer.updated events: %v", ev)
	}
	th.WantOK(t, h.Post("/v2/customers/"+id, key, `{"email":"new@example.com"}`)) // no change
	if ev := h.Events("customer.updated"); len(ev) != 1 {
		t.Errorf("an update that changed nothing recorded an event (%d)", len(ev))
	}
	if c := th.WantOK(t, h.Post("/v2/customers/"+id, key, `{"business_name":""}`)); c["business_name"] != nil {
		t.Errorf("empty business_name: %s", th.MustJSON(c))
	}
	th.WantError(t, h.Post("/v2/customers/"+id, key, `{"email":"not an email"}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/customers/"+id, key, `{"first_name":""}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/customers/"+id, key, `{}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/customers/"+id, key, `{"user_id":"x"}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/customers/cus_unknown", key, `{"email":"a@example.com"}`), http.StatusNotFound, "customer_not_found")
	other := h.Merchant("Other").Sandbox.SecretKey
	th.WantError(t, h.Post("/v2/customers/"+id, other, `{"email":"a@example.com"}`), http.StatusNotFound, "customer_not_found")
}

// TestFundingSourceNicknameAndRepeatedRemove: the nickname changes with an
// event; removing a removed source answers 200 with it, changing nothing.
func TestFundingSourceNicknameAndRepeatedRemove(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := h.Source(key, h.Customer(key), "31313131")
	if s := th.WantOK(t, h.Post("/v2/funding-source/"+id, key, `{"nickname":"  Rent account "}`)); s["nickname"] != "Rent account" {
		t.Errorf("nickname: %s", th.MustJSON(s))
	}
	if ev := h.Events("funding_source.updated"); len(ev) != 1 || ev[0]["nickname"] != "Rent account" {
		t.Errorf("funding_source.updated: %v", ev)
	}
	if s := th.WantOK(t, h.Post("/v2/funding-source/"+id, key, `{"nickname":null}`)); s["nickname"] != nil {
		t.Errorf("nickname removed: %s", th.MustJSON(s))
	}
	th.WantError(t, h.Post("/v2/funding-source/"+id, key, `{}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/funding-source/"+id, key, `{"nickname":"`+string(make([]byte, 0))+`x\u0001"}`), http.StatusBadRequest, "invalid_request")

	first := th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+id+`"}`))
	again := th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+id+`"}`))
	if again["removed"] != true || again["funding_source_id"] != id || first["removed"] != true {
		t.Errorf("repeated remove: %s", th.MustJSON(again))
	}
	if ev := h.Events("funding_source.removed"); len(ev) != 1 {
		t.Errorf("funding_source.removed events: %d, want 1", len(ev))
	}
	th.WantError(t, h.Post("/v2/funding-source/"+id, key, `{"nickname":"x"}`), http.StatusNotFound, "funding_source_not_found")
}

// TestPaymentCancel: a pending sandbox payment cancels (payment.canceled)
// and never settles; a settled one cannot; a production payment cannot
// once it is in an ACH file.
func TestPaymentCancel(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	src := h.Source(key, h.Customer(key), "42424242")
	p := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "credit")))
	id := p["payment_id"].(string)
	c := th.WantOK(t, h.Do(th.Req{Method: http.MethodPost, Path: "/v2/payments/" + id + "/cancel", Key: key, NoContentType: true}))
	if c["status"] != "canceled" {
		t.Fatalf("cancel: %s", th.MustJSON(c))
	}
	th.WantOK(t, h.Post("/v2/payments/"+id+"/cancel", key, "")) // again: the same answer
	h.Clock.Advance(time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key)); got["status"] != "canceled" {
		t.Errorf("a canceled payment settled: %s", th.MustJSON(got))
	}
	if ev := h.Events("payment.canceled"); len(ev) != 1 || len(h.Events("payment.success")) != 0 {
		t.Errorf("events: %d payment.canceled, %d payment.success", len(ev), len(h.Events("payment.success")))
	}

	settled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"6.00"`, "credit")))["payment_id"].(string)
	h.Clock.Advance(time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	th.WantError(t, h.Post("/v2/payments/"+settled+"/cancel", key, ""), http.StatusConflict, "conflict")
	th.WantError(t, h.Post("/v2/payments/pay_unknown/cancel", key, ""), http.StatusNotFound, "payment_not_found")
}

// TestSubscriptionsEndProperly: removing a source cancels its
// subscriptions at once, in the same transaction, with
// funding_source_removed; an API cancel says requested; each cancel fires
// subscription.canceled.
func TestSubscriptionsEndProperly(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "64646464")
	a := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "9.99", "monthly", "2026-12-01")))["subscription_id"].(string)
	b := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(src, "4.99", "weekly", "2026-12-01")))["subscription_id"].(string)

	c := th.WantOK(t, h.Post("/v2/subscriptions/"+a+"/cancel", key, ""))
	if c["status"] != "canceled" || c["cancel_reason"] != "requested" {
		t.Errorf("API cancel: %s", th.MustJSON(c))
	}
	th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+src+`"}`))
	if got := th.WantOK(t, h.Get("/v2/subscriptions/"+b, key)); got["status"] != "canceled" || got["cancel_reason"] != "funding_source_removed" ||
		got["next_payment_date"] != nil {
		t.Errorf("after the source's removal: %s", th.MustJSON(got))
	}
	reasons := map[any]any{}
	for _, e := range h.Events("subscription.canceled") {
		reasons[e["subscription_id"]] = e["cancel_reason"]
	}
	if len(reasons) != 2 || reasons[a] != "requested" || reasons[b] != "funding_source_removed" {
		t.Errorf("subscription.canceled events: %v", reasons)
	}
	th.WantOK(t, h.Post("/v2/subscriptions/"+a+"/cancel", key, "")) // again: no second event
	if n := len(h.Events("subscription.canceled")); n != 2 {
		t.Errorf("%d subscription.canceled events after a repeated cancel", n)
	}
}
