package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// auditActions are the actions of an evidence answer's audit events, in order.
func auditActions(t *testing.T, ev map[string]any) []string {
	t.Helper()
	var out []string
	for _, e := range ev["audit_events"].([]any) {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return out
}

// TestPaymentEvidenceSandbox: a sandbox debit's evidence carries the
// mandate the sandbox made for it (no IP address), the source verified by
// micro-deposits, masked, and the security log's events about the source
// and its mandates: a revocation and an unblock, not another source's.
func TestPaymentEvidenceSandbox(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	cus := h.Customer(key)
	src := h.VerifiedSource(key, cus, "444455556666")
	other := h.VerifiedSource(key, cus, "444455557777")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	pay := debit["payment_id"].(string)

	r := h.Get("/v2/payments/"+pay+"/evidence", key)
	ev := th.WantOK(t, r)
	if strings.Contains(string(r.Body), "444455556666") {
		t.Fatalf("evidence shows the account number: %s", r.Body)
	}
	if p := ev["payment"].(map[string]any); p["payment_id"] != pay || p["direction"] != "debit" || p["amount"] != "25.00" {
		t.Errorf("payment: %s", th.MustJSON(p))
	}
	m := ev["mandate"].(map[string]any)
	if m["mandate_id"] != debit["mandate_id"] || m["type"] != "single" || m["text"] != payment.SandboxMandateText ||
		m["text_sha256"] != sha(payment.SandboxMandateText) || m["ip_address"] != nil || m["user_agent"] != nil ||
		m["accepted_at"] == nil || m["status"] != "active" {
		t.Errorf("mandate: %s", th.MustJSON(m))
	}
	fs := ev["funding_source"].(map[string]any)
	vf := fs["verification"].(map[string]any)
	if fs["funding_source_id"] != src || fs["last_four"] != "6666" || fs["account_holder_type"] != "individual" ||
		vf["method"] != "micro_deposits" || vf["verified_at"] == nil || fs["ownership"] != nil {
		t.Errorf("funding source: %s", th.MustJSON(fs))
	}
	if ck, _ := fs["account_check"].(map[string]any); ck == nil || ck["result"] == nil {
		t.Errorf("account check: %s", th.MustJSON(fs))
	}
	if got := auditActions(t, ev); len(got) != 0 {
		t.Errorf("audit events before any change: %v", got)
	}

	// Another debit's mandate revoked by the merchant, then an R10 that
	// blocks the source (and revokes the first mandate), then the block
	// lifted: the revocation and the unblock are about this source. The
	// other source's unblock is not.
	second := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"3.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/mandates/"+second["mandate_id"].(string)+"/revoke", key, `{"revoke_reason":"customer called"}`))
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+pay+"/return", key, `{"code":"R10"}`))
	th.WantOK(t, h.Post("/v2/funding-source/"+src+"/unblock", key, `{"attestation":"The customer authorized again."}`))
	blockOther := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(other, `"4.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+blockOther["payment_id"].(string)+"/return", key, `{"code":"R10"}`))
	th.WantOK(t, h.Post("/v2/funding-source/"+other+"/unblock", key, `{"attestation":"The customer authorized again."}`))

	ev = th.WantOK(t, h.Get("/v2/payments/"+pay+"/evidence", key))
	if got := auditActions(t, ev); len(got) != 2 || got[0] != audit.MandateRevoked || got[1] != audit.FundingSourceUnblocked {
		t.Errorf("audit events = %v, want [mandate.revoked funding_source.unblocked]", got)
	}
	for _, e := range ev["audit_events"].([]any) {
		if d := e.(map[string]any)["details"].(map[string]any); d["funding_source_id"] != src {
			t.Errorf("event of another source: %s", th.MustJSON(e))
		}
	}
	m = ev["mandate"].(map[string]any)
	if m["status"] != "revoked" || m["revoke_reason"] != "return_R10" || m["revoked_at"] == nil {
		t.Errorf("mandate after the R10: %s", th.MustJSON(m))
	}
	if p := ev["payment"].(map[string]any); p["status"] != "failed" || p["failure_code"] != "R10" {
		t.Errorf("payment after the R10: %s", th.MustJSON(p))
	}

	// A credit has no mandate.
	credit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"7.00"`, "credit")))
	if ev := th.WantOK(t, h.Get("/v2/payments/"+credit["payment_id"].(string)+"/evidence", key)); ev["mandate"] != nil {
		t.Errorf("credit's mandate: %s", th.MustJSON(ev["mandate"]))
	}
	th.WantError(t, h.Get("/v2/payments/pay_unknown/evidence", key), http.StatusNotFound, "payment_not_found")
}

// TestPaymentEvidenceProduction: a production debit's evidence is the
// customer's authorization as the merchant sent it; a business customer's
// account is a company's; another merchant, and the same merchant's
// sandbox, get 404 like every read of the payment.
func TestPaymentEvidenceProduction(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	live := h.Production(m).SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if err := h.Merchants.GrantOnDemand(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	cus := th.WantOK(t, h.Post("/v2/customers", live, `{"first_name":"Ana","last_name":"Ruiz","email":"ana@example.com","business_name":"Ruiz Bakery LLC"}`))["user_id"].(string)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", live, th.SourceBody(cus, "021000021", "000123456789")))["funding_source_id"].(string)
	pay := th.WantOK(t, h.Post("/v2/payments", live, th.DebitBody(src, `"25.00"`)))["payment_id"].(string)

	r := h.Get("/v2/payments/"+pay+"/evidence", live)
	ev := th.WantOK(t, r)
	if strings.Contains(string(r.Body), "000123456789") || strings.Contains(string(r.Body), "123456789\"") {
		t.Fatalf("evidence shows the account number: %s", r.Body)
	}
	text := "I authorize Acme to debit my account."
	md := ev["mandate"].(map[string]any)
	if md["text"] != text || md["text_sha256"] != sha(text) || md["ip_address"] != "203.0.113.7" ||
		md["user_agent"] != "Mozilla/5.0 (Test)" || md["accepted_at"] != "2026-11-01T15:04:05Z" || md["type"] != "single" {
		t.Errorf("mandate: %s", th.MustJSON(md))
	}
	fs := ev["funding_source"].(map[string]any)
	vf := fs["verification"].(map[string]any)
	if fs["account_holder_type"] != "company" || fs["last_four"] != "6789" || vf["method"] != "third_party" || vf["verified_at"] == nil {
		t.Errorf("funding source: %s", th.MustJSON(fs))
	}

	other := h.Production(h.Merchant("Other")).SecretKey
	th.WantError(t, h.Get("/v2/payments/"+pay+"/evidence", other), http.StatusNotFound, "payment_not_found")
	th.WantError(t, h.Get("/v2/payments/"+pay+"/evidence", m.Sandbox.SecretKey), http.StatusNotFound, "payment_not_found")
}

// TestPaymentEvidenceProcessorToken: a source linked with a processor
// token was verified by it, with its ownership match; one linked before
// ownership checks existed (no ownership) is found in the token ledger.
func TestPaymentEvidenceProcessorToken(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	src := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(l.Customer(key), l.Token(l.Link("ins_109508", "checking")))))["funding_source_id"].(string)
	pay := th.WantOK(t, l.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))["payment_id"].(string)
	method := func() (string, any) {
		fs := th.WantOK(t, l.Get("/v2/payments/"+pay+"/evidence", key))["funding_source"].(map[string]any)
		return fs["verification"].(map[string]any)["method"].(string), fs["ownership"]
	}
	if m, own := method(); m != "processor_token" || own == nil {
		t.Errorf("method %q, ownership %v; want processor_token with an ownership match", m, own)
	}
	if _, err := l.SQL().Exec(`UPDATE funding_sources SET ownership_result = NULL, ownership_name_score = NULL,
		ownership_email_score = NULL, ownership_checked_at = NULL WHERE id = $1`, src); err != nil {
		t.Fatal(err)
	}
	if m, own := method(); m != "processor_token" || own != nil {
		t.Errorf("without ownership: method %q, ownership %v; want processor_token from the token ledger", m, own)
	}
}

// TestPaymentEvidenceListsTheAuditOfItsMandateAndSource: the payment's own
// mandate revoked by the merchant, its source blocked by another debit's
// R10 and unblocked: the evidence lists both audit events, as the audit
// log holds them, oldest first.
func TestPaymentEvidenceListsTheAuditOfItsMandateAndSource(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "444455556666")
	debit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"25.00"`, "debit")))
	pay, mandate := debit["payment_id"].(string), debit["mandate_id"].(string)
	th.WantOK(t, h.Post("/v2/mandates/"+mandate+"/revoke", key, `{"revoke_reason":"customer called"}`))
	ev := th.WantOK(t, h.Get("/v2/payments/"+pay+"/evidence", key))
	if got := auditActions(t, ev); len(got) != 1 || got[0] != audit.MandateRevoked {
		t.Fatalf("after its mandate's revocation: audit events %v, want [mandate.revoked]", got)
	}
	next := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"3.00"`, "debit")))
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+next["payment_id"].(string)+"/return", key, `{"code":"R10"}`))
	th.WantOK(t, h.Post("/v2/funding-source/"+src+"/unblock", key, `{"attestation":"The customer authorized again."}`))

	log := th.WantOK(t, h.Get("/v2/audit-events?limit=100", key))
	var logged []string
	for _, e := range log["data"].([]any) {
		if a := e.(map[string]any)["action"].(string); a == audit.MandateRevoked || a == audit.FundingSourceUnblocked {
			logged = append([]string{a}, logged...)
		}
	}
	ev = th.WantOK(t, h.Get("/v2/payments/"+pay+"/evidence", key))
	got := auditActions(t, ev)
	if strings.Join(got, ",") != strings.Join(logged, ",") || len(got) != 2 {
		t.Errorf("evidence audit events %v, the audit log's %v; want [mandate.revoked funding_source.unblocked] in both", got, logged)
	}
}
