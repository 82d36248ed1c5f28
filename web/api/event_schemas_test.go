package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestEveryEventTypeIsDeliveredMatchingItsSchema drives one merchant
// through every event a webhook can carry; the receiver validates each
// payload against the document's schema of its type, and the test checks
// that every type of the document (but webhook.disabled, which is listed,
// never sent) arrived.
func TestEveryEventTypeIsDeliveredMatchingItsSchema(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	rc := th.NewReceiver(t, nil)
	h.RegisterWebhook(key, rc.URL())

	th.WantOK(t, h.Post("/v2/webhooks/test", key, ``))
	user := h.Customer(key)
	th.WantOK(t, h.Post("/v2/customers/"+user, key, `{"email":"new@example.com"}`))
	a := h.Source(key, user, "123456789")
	th.WantOK(t, h.Post("/v2/funding-source/"+a, key, `{"nickname":"Rent"}`))
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+a+"/notification-of-change", key,
		`{"change_code":"C06","corrected_data":{"account_number":"123456780","account_type":"savings"}}`))
	th.WantOK(t, h.Initiate(key, a))
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+a+"/micro-deposits/return", key, `{"code":"R01"}`))
	th.WantOK(t, h.Initiate(key, a))
	th.WantOK(t, h.Post("/v2/sandbox/funding-source/"+a+"/micro-deposits/expire", key, ``))
	b := h.VerifiedSource(key, user, "222222222")
	// Revoking a debit's mandate cancels the debit (mandate_revoked); the
	// credit settles.
	first := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(b, `"10.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/mandates/"+first["mandate_id"].(string)+"/revoke", key, ``))
	settles := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(b, `"10.00"`, "credit")))["payment_id"].(string)
	returned := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(b, `"11.00"`, "debit")))["payment_id"].(string)
	canceled := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(b, `"12.00"`, "credit")))["payment_id"].(string)
	// Twenty debits, one of them returned unauthorized: the originator's
	// rate is over its threshold (originator.return_rate_warning).
	var refunded string // one of them is refunded once processed (payment.refunded)
	for i := range 19 {
		src := h.VerifiedSource(key, h.Customer(key), fmt.Sprintf("3000000%02d", i))
		refunded = th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"1.00"`, "debit")))["payment_id"].(string)
	}
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+returned+"/return", key, `{"code":"R10"}`)) // blocks b
	// A customer named like an entry of the sample SDN list
	// (customer.screening_match): its payment is held (payment.held) until
	// the platform clears the match (payment.released).
	listed := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Mirela","last_name":"Drakovic","email":"md@example.com"}`))["user_id"].(string)
	th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(h.Source(key, listed, "444444444"), `"5.00"`, "credit")))
	if _, _, err := h.Payments.ClearScreening(context.Background(), listed, "not the listed person", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	th.WantOK(t, h.Post("/v2/funding-source/"+b+"/unblock", key, `{"attestation":"The customer authorized again."}`))
	th.WantOK(t, h.Post("/v2/payments/"+canceled+"/cancel", key, ``))
	h.Clock.Advance(time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+settles, key)); p["status"] != "processed" {
		t.Fatalf("payment: %s", th.MustJSON(p))
	}
	th.WantOK(t, h.Post("/v2/payments/"+settles+"/reverse", key, `{"reason":"duplicate"}`))
	th.WantOK(t, h.Post("/v2/payments/"+refunded+"/refund", key, `{"amount":"1.00"}`))
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key, webtest.SubscriptionBody(b, "9.99", "weekly", "2026-11-20")))["subscription_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/subscriptions/"+sub+"/advance", key, ``))
	th.WantOK(t, h.Post("/v2/subscriptions/"+sub+"/cancel", key, ``))
	th.WantOK(t, h.Post("/v2/accounts/delete", key, `{"funding_source_id":"`+a+`"}`))
	// A customer on a test clock (its customer.created carries test_clock
	// and clock_time), and the clock's advance coming to its end
	// (test_clock.ready).
	clk := th.WantOK(t, h.Post("/v2/sandbox/test-clocks", key, `{"frozen_time":"2026-12-01T09:00:00Z"}`))["test_clock_id"].(string)
	th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Tess","last_name":"Clock","email":"tess@example.com","test_clock":"`+clk+`"}`))
	th.WantOK(t, h.Post("/v2/sandbox/test-clocks/"+clk+"/advance", key, `{"frozen_time":"2027-01-01T09:00:00Z"}`))
	if _, err := h.Svc.TestClocks.MarkReady(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}, clk); err != nil {
		t.Fatal(err)
	}
	h.Deliver()

	doc, _, err := th.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for typ := range doc.Components.Schemas["Event"].Value.Discriminator.Mapping {
		if typ != "webhook.disabled" {
			want = append(want, typ)
		}
	}
	var got []string
	changed := false
	for _, r := range rc.Requests() {
		p := r.Payload(t)
		if typ := p["type"].(string); !slices.Contains(got, typ) {
			got = append(got, typ)
		}
		if d, _ := p["data"].(map[string]any); p["type"] == "funding_source.updated" && d["change_code"] == "C06" {
			changed = true
		}
	}
	if !changed {
		t.Error("no funding_source.updated with change_code C06 was delivered")
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) != 26 {
		t.Errorf("delivered types:\n%v\nthe document's:\n%v", got, want)
	}
}

// TestEventSchemasRejectWhatTheyShould: the discriminator picks the type's
// schema, so data of another type, an unknown type or an extra member fail.
func TestEventSchemasRejectWhatTheyShould(t *testing.T) {
	t.Parallel()
	doc, _, err := th.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["Event"].Value
	customer := `{"user_id":"cus_gdsepu2dh2gnolqhyuh3aeerhm","first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","business_name":null,"screening":{"status":"clear"},"metadata":{},"created_at":"2026-11-02T15:04:05Z"}`
	envelope := func(typ, data string) any {
		var v any
		if err := json.Unmarshal([]byte(`{"id":"evt_aaaaaaaaaaaaaaaaaaaaaaaaaa","type":"`+typ+`","created_at":"2026-11-02T15:04:05Z","livemode":false,"data":`+data+`}`), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := schema.VisitJSON(envelope("customer.created", customer)); err != nil {
		t.Errorf("a valid customer.created: %v", err)
	}
	for name, v := range map[string]any{
		"customer data in payment.failed": envelope("payment.failed", customer),
		"an unknown type":                 envelope("customer.deleted", customer),
		"an extra data member":            envelope("customer.updated", customer[:len(customer)-1]+`,"extra":1}`),
		"webhook.test without a message":  envelope("webhook.test", `{}`),
	} {
		if err := schema.VisitJSON(v); err == nil {
			t.Errorf("%s passed the schema", name)
		}
	}
}
