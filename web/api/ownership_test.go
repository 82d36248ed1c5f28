package api_test

import (
	"net/http"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// wantOwnership checks a source's ownership: its result and scores (-1:
// null).
func wantOwnership(t *testing.T, what string, src map[string]any, result string, name, email int) {
	t.Helper()
	o, ok := src["ownership"].(map[string]any)
	if !ok {
		t.Errorf("%s: ownership = %v, want %s", what, src["ownership"], result)
		return
	}
	score := func(k string) int {
		if v, ok := o[k].(float64); ok {
			return int(v)
		}
		if o[k] != nil {
			t.Errorf("%s: %s = %v", what, k, o[k])
		}
		return -1
	}
	if o["result"] != result || score("name_score") != name || score("email_score") != email || o["checked_at"] == nil {
		t.Errorf("%s: ownership = %s, want %s name %d email %d", what, th.MustJSON(o), result, name, email)
	}
}

// TestOwnershipBandsThroughTheSimulator links one token per band of the
// simulator's sandbox owner and checks the source's ownership on the
// answer, on GET, and in the creation's events; a business customer is
// matched by its business name; other creation paths carry null.
func TestOwnershipBandsThroughTheSimulator(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	for _, c := range []struct {
		first, last, email, business string
		result                       string
		name, emailScore             int
	}{
		{"Alberta Bobbeth", "Charleson", "accountholder0@example.com", "", "match", 100, 100},
		{"Alberta", "Charleson", "Alberta.Charleson@example.net", "", "match", 90, 0},
		{"Alberta", "Smith", "ACCOUNTHOLDER0@example.com", "", "partial", 60, 100},
		{"Jordan", "Smith", "jordan@example.com", "", "mismatch", 20, 0},
		// A business is matched by its business name, not its contact's.
		{"Alberta", "Charleson", "ap@example.com", "Smith Holdings LLC", "mismatch", 20, 0},
	} {
		what := c.first + " " + c.last + " " + c.business
		var user string
		if c.business != "" {
			user = l.NamedCustomer(key, c.first, c.last, c.email, c.business)
		} else {
			user = l.NamedCustomer(key, c.first, c.last, c.email)
		}
		src := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, l.Token(l.Link("ins_109508", "checking")))))
		wantOwnership(t, what, src, c.result, c.name, c.emailScore)
		id := src["funding_source_id"].(string)
		wantOwnership(t, what+" on GET", th.WantOK(t, l.Get("/v2/funding-source/"+id, key)), c.result, c.name, c.emailScore)
		for _, typ := range []string{"funding_source.created", "funding_source.verified"} {
			found := false
			for _, ev := range l.Events(typ) {
				if ev["funding_source_id"] == id {
					found = true
					wantOwnership(t, what+" in "+typ, ev, c.result, c.name, c.emailScore)
					if _, ok := ev["account_check"].(map[string]any); !ok {
						t.Errorf("%s: %s has no account_check: %s", what, typ, th.MustJSON(ev))
					}
				}
			}
			if !found {
				t.Errorf("%s: no %s event", what, typ)
			}
		}
	}

	// Other paths: ownership is present and null.
	user := l.Customer(key)
	for path, account := range map[string]string{"/v2/funding-source": "556677881", "/v2/on-demand/funding-source": "556677882"} {
		src := th.WantOK(t, l.Post(path, key, th.SourceBody(user, "021000021", account)))
		if o, present := src["ownership"]; !present || o != nil {
			t.Errorf("%s: ownership = %v (present %v), want null", path, o, present)
		}
	}
}

// TestOwnershipUnavailableNeverFailsALinkUnderFlag: the identity call
// failing (a Plaid error, a proxy's HTML page) still links the account,
// with ownership unavailable and no scores.
func TestOwnershipUnavailableNeverFailsALinkUnderFlag(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	key := l.Merchant("Acme").Sandbox.SecretKey
	for _, failure := range []string{"INTERNAL_SERVER_ERROR", "INVALID_PRODUCT", "html_502"} {
		user := l.NamedCustomer(key, "Alberta", "Charleson", "accountholder0@example.com")
		tok := l.Token(l.Link("ins_109508", "checking"))
		l.Control("/sim/fail", `{"error_code":"`+failure+`","count":1,"path":"/processor/identity/match"}`)
		src := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(user, tok)))
		wantOwnership(t, failure, src, "unavailable", -1, -1)
		if src["status"] != "Verified" {
			t.Errorf("%s: status %v", failure, src["status"])
		}
	}
}

// TestRequireMatchRefusesAndLeavesTheTokenUsable: under require_match a
// mismatch or a partial match is 422 ownership_mismatch with the check in
// the error and nothing written; a provider error is the provider's
// error; the same token then links to the customer who owns the account.
func TestRequireMatchRefusesAndLeavesTheTokenUsable(t *testing.T) {
	t.Parallel()
	l := webtest.NewLinking(t)
	m := l.Merchant("Acme")
	key := m.Sandbox.SecretKey
	l.SetOwnershipPolicy(m, "require_match")
	tok := l.Token(l.Link("ins_109508", "checking"))
	refused := []struct {
		user, result string
		name         int
	}{
		{l.NamedCustomer(key, "Jordan", "Smith", "x@example.com"), "mismatch", 20},
		{l.NamedCustomer(key, "Alberta", "Smith", "x@example.com"), "partial", 60},
	}
	owner := l.NamedCustomer(key, "Alberta", "Charleson", "accountholder0@example.com")
	before, events := l.Count("funding_sources"), l.Count("events")
	for _, c := range refused {
		r := l.Post(webtest.LinkPath, key, webtest.LinkBody(c.user, tok))
		th.WantError(t, r, http.StatusUnprocessableEntity, "ownership_mismatch")
		e := r.JSON(t)["error"].(map[string]any)
		wantOwnership(t, c.result+" refused", e, c.result, c.name, 0)
		if e["param"] != "user_id" {
			t.Errorf("param = %v", e["param"])
		}
	}
	l.Control("/sim/fail", `{"error_code":"INTERNAL_SERVER_ERROR","count":1,"path":"/processor/identity/match"}`)
	th.WantError(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(owner, tok)), http.StatusBadGateway, "provider_unavailable")
	if n, e := l.Count("funding_sources"), l.Count("events"); n != before || e != events {
		t.Errorf("refusals wrote: funding_sources %d -> %d, events %d -> %d", before, n, events, e)
	}
	src := th.WantOK(t, l.Post(webtest.LinkPath, key, webtest.LinkBody(owner, tok)))
	wantOwnership(t, "the owner", src, "match", 90, 100)
}
