package web_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestBrowserPagesOutsideTheListsPassAxe: axe-core (installed by `make
// browser` beside the playwright driver) finds no serious or critical
// violation, at a desktop's and a phone's width, on the sign-in and
// sign-up pages, the not-found pages (the site's, and the dashboard's
// for an id that names nothing) and a source's page while its
// micro-deposits are pending.
func TestBrowserPagesOutsideTheListsPassAxe(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	pending := h.Source(key, h.Customer(key), "123456789")
	th.WantOK(t, h.Initiate(key, pending))

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900))
			check := func(path string, status int, text ...string) {
				t.Helper()
				if got := tb.Open(srv.URL + path); got != status {
					tb.Errorf("%s: %d, want %d", path, got, status)
				}
				tb.WantText(text...)
				tb.Accessible()
				tb.FitsWidth()
				tb.Axe()
			}
			check("/dashboard/sign-in", 200, "Sign in")
			check("/dashboard/sign-up", 200, "Create")
			check("/no-such-page", 404, "Page not found")
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			check("/dashboard/payments/pay_aaaaaaaaaaaaaaaaaaaaaaaaaa", 404, "Not found")
			check("/dashboard/funding-sources/"+pending, 200, "Verification pending", "Expire the deposits now")
		})
	}
}
