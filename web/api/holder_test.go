package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestAccountHolderTypeOverHTTP: the source resource carries
// account_holder_type on every answer (with and without an
// Idempotency-Key, whose replay is the same bytes); a bad value is 400
// invalid_request on account_holder_type; POST /v2/funding-source/{id}
// changes it, alone or with the nickname, and needs one of them.
func TestAccountHolderTypeOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	biz := th.WantOK(t, h.Post("/v2/customers", key,
		`{"first_name":"Bea","last_name":"Baker","email":"bea@example.com","business_name":"Bea's Bakery LLC"}`))["user_id"].(string)
	withHolder := func(body, holder string) string {
		return strings.TrimSuffix(body, "}") + `,"account_holder_type":` + holder + `}`
	}
	th.WantError(t, h.Post("/v2/funding-source", key, withHolder(th.SourceBody(biz, "021000021", "71000001"), `"Company"`)),
		http.StatusBadRequest, "invalid_request")
	res := h.Post("/v2/funding-source", key, withHolder(th.SourceBody(biz, "021000021", "71000001"), `"trust"`))
	if e, _ := res.JSON(t)["error"].(map[string]any); e["param"] != "account_holder_type" {
		t.Errorf("bad account_holder_type: %s", res.Body)
	}
	keyed := th.Req{Method: http.MethodPost, Path: "/v2/funding-source", Key: key, Body: th.SourceBody(biz, "021000021", "71000002"),
		Header: map[string]string{"Idempotency-Key": "holder-1"}}
	first := h.Do(keyed)
	if got := th.WantOK(t, first); got["account_holder_type"] != "company" {
		t.Errorf("keyed creation for a business: %s", first.Body)
	}
	if again := h.Do(keyed); string(again.Body) != string(first.Body) {
		t.Errorf("replay differs:\n%s\n%s", again.Body, first.Body)
	}
	src := th.WantOK(t, h.Post("/v2/funding-source", key, withHolder(th.SourceBody(biz, "021000021", "71000003"), `"individual"`)))
	id := src["funding_source_id"].(string)
	if src["account_holder_type"] != "individual" {
		t.Errorf("explicit individual: %v", src["account_holder_type"])
	}
	th.WantError(t, h.Post("/v2/funding-source/"+id, key, `{}`), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Post("/v2/funding-source/"+id, key, `{"account_holder_type":"both"}`), http.StatusBadRequest, "invalid_request")
	got := th.WantOK(t, h.Post("/v2/funding-source/"+id, key, `{"account_holder_type":"company","nickname":"Shop"}`))
	if got["account_holder_type"] != "company" || got["nickname"] != "Shop" {
		t.Errorf("update: %v", got)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key)); got["account_holder_type"] != "company" {
		t.Errorf("after the update: %v", got)
	}
	// entry_description travels on the payment resource.
	pay := th.WantOK(t, h.Post("/v2/payments", key, `{"funding_source_id":"`+id+`","amount":"5.00","direction":"credit","entry_description":"REBATE"}`))
	if pay["entry_description"] != "REBATE" {
		t.Errorf("payment: %v", pay)
	}
	res = h.Post("/v2/payments", key, `{"funding_source_id":"`+id+`","amount":"5.00","direction":"credit","entry_description":"PAYROLL"}`)
	if e, _ := res.JSON(t)["error"].(map[string]any); res.Code != http.StatusBadRequest || e["param"] != "entry_description" {
		t.Errorf("PAYROLL to a company: %d %s", res.Code, res.Body)
	}
}
