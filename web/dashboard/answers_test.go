package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestPaymentsPageShowsTheBanksUnmatchedAnswersUnderTheMerchantsCompany:
// an answer from the bank kept unmatched shows on the production payments
// page of the merchant whose company identification its batch named (the
// account by its last four), never on another merchant's, and not when
// it names the platform's company id, which no single merchant owns; a
// resolved one no longer shows.
func TestPaymentsPageShowsTheBanksUnmatchedAnswersUnderTheMerchantsCompany(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Alpha Books")
	h.Production(m)
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	name, id := "ALPHA BOOKS", "9123456780"
	if _, err := h.Svc.Originators.Set(context.Background(), scope, originator.Change{CompanyName: &name, CompanyID: &id}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	keep := func(answerID, company, trace, status string) {
		t.Helper()
		if _, err := h.SQL().Exec(`INSERT INTO ach_unmatched_answers (id, kind, reason, candidates, original_trace, answer_trace, code,
			amount_cents, account_last4, company_id, arrived_on, key_id, sealed_records, status)
			VALUES ($1, 'return', 'unmatched', 1, $2, '231380100000001', 'R01', 4000, '6789', $3, '2026-11-05', 'k', '\x00', $4)`,
			answerID, trace, company, status); err != nil {
			t.Fatal(err)
		}
	}
	keep("acha_mine", id, "121042880000007", "open")
	keep("acha_other", "9999999999", "121042880000008", "open")
	keep("acha_platform", h.Cfg.ACHCompanyID, "121042880000009", "open")
	keep("acha_resolved", id, "121042880000010", "dismissed")

	d := webtest.NewDash(h)
	d.SignIn(m.Merchant.Email, "correct horse battery")
	d.Follow(d.Post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/payments"}}))
	page := webtest.WantPage(t, d.Get("/dashboard/payments"), http.StatusOK, `id="unmatched-answers"`,
		"121042880000007", "Return R01", "$40.00", "…6789", "Nov 5, 2026")
	for _, not := range []string{"121042880000008", "121042880000009", "121042880000010"} {
		if strings.Contains(page, not) {
			t.Errorf("the payments page shows the answer of trace %s, which is not this merchant's to see", not)
		}
	}
	d.Follow(d.Post("/dashboard/environment", url.Values{"env": {"sandbox"}, "next": {"/dashboard/payments"}}))
	if page := webtest.WantPage(t, d.Get("/dashboard/payments"), http.StatusOK); strings.Contains(page, `id="unmatched-answers"`) {
		t.Error("the sandbox payments page shows the bank's answers")
	}
}
