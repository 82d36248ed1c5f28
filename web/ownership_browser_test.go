package web_test

import (
	"net/http"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardExplainsOwnership: a source linked with a processor
// token shows its owner match in words with its scores, at 1280 and 390
// px; Settings turns require_match on, after which the API refuses a
// customer who does not match.
func TestBrowserDashboardExplainsOwnership(t *testing.T) {
	l := newLinking(t)
	srv := l.live()
	key := l.Merchant("Acme Books").Sandbox.SecretKey
	jordan := l.namedCustomer(key, "Jordan", "Smith", "jordan@example.com")
	mismatch := th.WantOK(t, l.Post(linkPath, key, linkBody(jordan, l.token(l.link("ins_109508", "checking")))))["funding_source_id"].(string)
	partial := th.WantOK(t, l.Post(linkPath, key, linkBody(l.namedCustomer(key, "Alberta", "Smith", "accountholder0@example.com"),
		l.token(l.link("ins_109508", "checking")))))["funding_source_id"].(string)
	other := l.Source(key, jordan, "556677889")

	for _, width := range []int{1280, 390} {
		tb := newTab(t, withViewport(width, 900))
		tb.signIn(srv.URL, "acme.books@example.com", "correct horse battery")
		tb.open(srv.URL + "/dashboard/funding-sources/" + mismatch)
		tb.wantText("Owner match", "Mismatch: the account's owner has another name", "Scores: name 20 of 100, email 0 of 100.")
		tb.fitsWidth()
		tb.accessible()
		tb.axe()
		tb.open(srv.URL + "/dashboard/funding-sources/" + partial)
		tb.wantText("Partial: the owner shares only part of the customer's name", "Scores: name 60 of 100, email 100 of 100.")
		tb.open(srv.URL + "/dashboard/funding-sources/" + other)
		if n, err := tb.page.Locator("#ownership").Count(); err != nil || n != 0 {
			t.Errorf("a source linked by account number shows an owner match: %d, %v", n, err)
		}
	}

	tb := newTab(t, withViewport(390, 844))
	tb.signIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.open(srv.URL + "/dashboard/settings")
	if err := tb.page.GetByLabel("Link only a match").Check(); err != nil {
		t.Fatal(err)
	}
	tb.click("button", "Save checks")
	tb.wantText("Saved: account check flag, ownership require_match.")
	tb.fitsWidth()
	tb.accessible()
	tb.axe()
	th.WantError(t, l.Post(linkPath, key, linkBody(jordan, l.token(l.link("ins_109508", "checking")))), http.StatusUnprocessableEntity, "ownership_mismatch")
}
