package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardExplainsOwnership: a source linked with a processor
// token shows its owner match in words with its scores, at 1280 and 390
// px; Settings turns require_match on, after which the API refuses a
// customer who does not match.
func TestBrowserDashboardExplainsOwnership(t *testing.T) {
	l := webtest.NewLinking(t)
	srv := l.Live()
	key := l.Merchant("Acme Books").Sandbox.SecretKey
	jordan := l.NamedCustomer(key, "Jordan", "Smith", "jordan@example.com")
	mismatch := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(jordan, l.Token(l.Link("ins_109508", "checking")))))["funding_source_id"].(string)
	partial := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(l.NamedCustomer(key, "Alberta", "Smith", "accountholder0@example.com"),
		l.Token(l.Link("ins_109508", "checking")))))["funding_source_id"].(string)
	other := l.Source(key, jordan, "556677889")

	for _, width := range []int{1280, 390} {
		tb := webtest.NewTab(t, webtest.WithViewport(width, 900))
		tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
		tb.Open(srv.URL + "/dashboard/funding-sources/" + mismatch)
		tb.WantText("Owner match", "Mismatch: the account's owner has another name", "Scores: name 20 of 100, email 0 of 100.")
		tb.FitsWidth()
		tb.Accessible()
		tb.Axe()
		tb.Open(srv.URL + "/dashboard/funding-sources/" + partial)
		tb.WantText("Partial: the owner shares only part of the customer's name", "Scores: name 60 of 100, email 100 of 100.")
		tb.Open(srv.URL + "/dashboard/funding-sources/" + other)
		if n, err := tb.Page.Locator("#ownership").Count(); err != nil || n != 0 {
			tb.Errorf("a source linked by account number shows an owner match: %d, %v", n, err)
		}
	}

	tb := webtest.NewTab(t, webtest.WithViewport(390, 844))
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.Open(srv.URL + "/dashboard/settings")
	if err := tb.Page.GetByLabel("Link only a match").Check(); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Save checks")
	tb.WantText("Saved: account check flag, ownership require_match.")
	tb.FitsWidth()
	tb.Accessible()
	tb.Axe()
	th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(jordan, l.Token(l.Link("ins_109508", "checking")))), http.StatusUnprocessableEntity, "ownership_mismatch")
}
