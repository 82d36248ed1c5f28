package dashboard_test

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/merchant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// copyCookies is what an attacker who copied the browser's cookies holds.
func copyCookies(d *webtest.Dash) *webtest.Dash {
	c := webtest.NewDash(d.H)
	c.Cookies = maps.Clone(d.Cookies)
	c.Remote = "203.0.113.9:4000"
	return c
}

// wantSignInPage checks that a dashboard page sends the browser to sign in.
func wantSignInPage(t *testing.T, p *th.Response) {
	t.Helper()
	if p.Code != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/dashboard/sign-in") {
		t.Fatalf("got %d to %q, want the sign-in page", p.Code, p.Header.Get("Location"))
	}
}

// TestSignOutEndsTheSessionOnTheServer: a cookie copied before sign-out
// opens nothing afterwards, and the session's id is stored only hashed.
func TestSignOutEndsTheSessionOnTheServer(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	h.Customer(key) // some data beside the session, for the dump
	stolen := copyCookies(d)
	webtest.WantPage(t, stolen.Get("/dashboard"), http.StatusOK, "Acme Books")
	if n := h.Count("dashboard_sessions"); n != 1 {
		t.Fatalf("%d session rows, want 1", n)
	}
	if dump := h.DumpDatabase(); strings.Contains(dump, "ses_") {
		t.Error("a session id is stored in clear")
	}

	if p := d.Post("/dashboard/sign-out", url.Values{}); p.Code != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", p.Code)
	}
	wantSignInPage(t, stolen.Get("/dashboard"))
	wantSignInPage(t, stolen.Get("/dashboard/settings"))
	if n := h.Count("dashboard_sessions"); n != 0 {
		t.Errorf("%d session rows after sign-out", n)
	}
}

// TestSignOutOfAllOtherSessions: Settings lists each browser with its
// address and user agent, and ends every one but this.
func TestSignOutOfAllOtherSessions(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	laptop, phone := webtest.NewDash(h), webtest.NewDash(h)
	phone.Remote = "198.51.100.20:443"
	for _, d := range []*webtest.Dash{laptop, phone} {
		if p := d.SignIn(m.Merchant.Email, "correct horse battery"); p.Code != http.StatusSeeOther {
			t.Fatalf("sign in: %d", p.Code)
		}
	}
	page := webtest.WantPage(t, laptop.Get("/dashboard/settings"), http.StatusOK, "Signed-in sessions", "192.0.2.10", "198.51.100.20",
		"This session", "Sign out of all other sessions")
	if strings.Count(page, "<tr>") != 3 { // the header and two sessions
		t.Errorf("sessions table:\n%s", page)
	}
	webtest.WantPage(t, laptop.Follow(laptop.Post("/dashboard/settings/sessions/end-others", url.Values{})), http.StatusOK,
		"Signed out of 1 other session.")
	wantSignInPage(t, phone.Get("/dashboard"))
	webtest.WantPage(t, laptop.Get("/dashboard"), http.StatusOK)

	// The hourly sweep deletes sessions past their limits.
	limits := merchant.SessionLimits{IdleTimeout: h.Cfg.DashboardIdleTimeout, MaxAge: h.Cfg.DashboardSessionMaxAge}
	if n, err := h.Merchants.PurgeSessions(context.Background(), limits); err != nil || n != 0 {
		t.Errorf("a live session was swept: %d, %v", n, err)
	}
	h.Clock.Advance(h.Cfg.DashboardIdleTimeout + time.Minute)
	if n, err := h.Merchants.PurgeSessions(context.Background(), limits); err != nil || n != 1 || h.Count("dashboard_sessions") != 0 {
		t.Errorf("sweep after the idle timeout: %d, %v", n, err)
	}
}

// TestChangePasswordEndsOtherSessions: the current password must be
// right and the new one valid; a change signs out every other session,
// and only the new password signs in.
func TestChangePasswordEndsOtherSessions(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	mine, other := webtest.NewDash(h), webtest.NewDash(h)
	other.Remote = "198.51.100.20:443"
	for _, d := range []*webtest.Dash{mine, other} {
		if p := d.SignIn(m.Merchant.Email, "correct horse battery"); p.Code != http.StatusSeeOther {
			t.Fatalf("sign in: %d", p.Code)
		}
	}
	change := func(current, next string) *th.Response {
		return mine.Post("/dashboard/settings/password", url.Values{"current_password": {current}, "new_password": {next}})
	}
	webtest.WantPage(t, change("not my password", "a brand new passphrase"), http.StatusUnprocessableEntity, "current password is not right")
	webtest.WantPage(t, change("correct horse battery", "short"), http.StatusUnprocessableEntity, "at least 12 characters")
	webtest.WantPage(t, other.Get("/dashboard"), http.StatusOK) // nothing changed yet

	webtest.WantPage(t, mine.Follow(change("correct horse battery", "a brand new passphrase")), http.StatusOK, "Password changed")
	wantSignInPage(t, other.Get("/dashboard"))
	webtest.WantPage(t, mine.Get("/dashboard"), http.StatusOK)

	fresh := webtest.NewDash(h)
	fresh.Remote = "192.0.2.77:1"
	webtest.WantPage(t, fresh.SignIn(m.Merchant.Email, "correct horse battery"), http.StatusUnauthorized)
	if p := fresh.SignIn(m.Merchant.Email, "a brand new passphrase"); p.Code != http.StatusSeeOther {
		t.Errorf("the new password: %d", p.Code)
	}
}
