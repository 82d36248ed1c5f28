package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// Browser tests of the merchant dashboard. With DASHBOARD_SCREENSHOTS=dir
// the tour also saves the README's pictures there (`make screenshots`).

// TestBrowserDashboardTour is the whole first day of a merchant: sign up,
// keys, webhook, test event delivered, the endpoint healthy and then
// backing off, a customer and source made through
// the API with the key the dashboard showed, micro-deposits, the hosted
// link, and the source Verified.
func TestBrowserDashboardTour(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	h.Cfg.HostedBaseURL, _ = url.Parse(srv.URL)
	rc := th.NewReceiver(t, nil)
	shots := os.Getenv("DASHBOARD_SCREENSHOTS")

	tb := webtest.NewTab(t, webtest.WithViewport(1280, 860))
	tb.Open(srv.URL + "/dashboard/sign-up")
	tb.Fill("Business name", "Corner Bakery")
	tb.Fill("Email", "owner@corner.example")
	tb.Fill("Password", "short")
	tb.Click("button", "Create account")
	tb.WantText("Password must be at least 12 characters.")
	if inv, _ := tb.Page.Locator("#password").GetAttribute("aria-invalid"); inv != "true" {
		tb.Errorf("password aria-invalid = %q", inv)
	}
	tb.Accessible()
	tb.Shot(shots, "dashboard-sign-up")
	tb.Fill("Password", "flour water salt yeast")
	tb.Click("button", "Create account")

	// The sandbox keys, the secret shown once.
	tb.WantText("Your new secret key", "shown only once", "Sandbox: test data only")
	secret, public := tb.Value("#new-secret"), tb.Value("#public-key")
	if !regexp.MustCompile(`^sk_test_[A-Za-z0-9]{40,}$`).MatchString(secret) || !strings.HasPrefix(public, "pk_test_") {
		tb.Fatalf("keys shown: %q %q", secret, public)
	}
	if hint := tb.Text("#secret-hint"); hint != "sk_test_…"+secret[len(secret)-4:] {
		tb.Errorf("secret hint = %q", hint)
	}
	if got := tb.Text("#env-current"); got != "Sandbox" {
		tb.Errorf("environment shown = %q", got)
	}
	tb.Accessible()
	tb.Shot(shots, "dashboard-home")

	// The webhook URL, pointing at a receiver, and a test event.
	tb.Click("link", "Webhooks")
	tb.WantText("No webhook URL yet", "No events yet")
	tb.Fill("Webhook URL", rc.URL())
	tb.Click("button", "Save URL")
	tb.WantText("Webhook URL saved")
	tb.Click("button", "Send test event")
	tb.WantText("Test event sent")
	if n := h.Deliver(); n != 1 {
		tb.Fatalf("deliveries = %d, want 1 (the test event)", n)
	}
	if len(rc.Requests()) != 1 || rc.Requests()[0].Payload(t)["type"] != "webhook.test" {
		tb.Fatalf("receiver got %d requests", len(rc.Requests()))
	}
	tb.Open(srv.URL + "/dashboard/webhooks")
	row := tb.Text("#delivery-log tbody tr")
	for _, want := range []string{"webhook.test", "delivered", "200"} {
		if !strings.Contains(row, want) {
			tb.Errorf("log row %q lacks %q", row, want)
		}
	}
	tb.Click("button", "Reveal secret")
	if s := tb.Value("#webhook-secret"); !strings.HasPrefix(s, "whsec_") {
		tb.Errorf("revealed secret = %q", s)
	}
	tb.Accessible()
	tb.Shot(shots, "dashboard-webhooks")
	// The endpoint's health: healthy with no failures, then backing off
	// after three failures in a row, in the badge, the count and a banner.
	health := func(badge, failures string, banner bool) {
		t.Helper()
		if got := tb.Text("#endpoint-health .badge"); got != badge {
			tb.Errorf("the endpoint's health badge says %q, want %q", got, badge)
		}
		if got := tb.Text("#consecutive-failures"); got != failures {
			tb.Errorf("consecutive failures shown: %q, want %s", got, failures)
		}
		if shown, _ := tb.Page.Locator("#backoff-banner").IsVisible(); shown != banner {
			tb.Errorf("the backing-off banner shows: %v, want %v", shown, banner)
		}
	}
	health("Healthy", "0", false)
	setFailures := func(n int) {
		t.Helper()
		if _, err := h.SQL().Exec(`UPDATE webhook_endpoints SET consecutive_failures = $1`, n); err != nil {
			tb.Fatal(err)
		}
		tb.Open(srv.URL + "/dashboard/webhooks")
	}
	setFailures(3)
	tb.WantText("The endpoint failed 3 deliveries in a row")
	health("Backing off", "3", true)
	tb.Accessible()
	setFailures(0)
	health("Healthy", "0", false)
	tb.Click("link", "webhook.test")
	tb.WantText("Deliveries", "delivered", "200", `"type": "webhook.test"`)

	// A customer and an Unverified source through the API with the key the
	// dashboard showed; the nickname carries HTML.
	nickname := `<b>Rent</b><img src=x onerror=alert(1)>`
	cus := th.WantOK(t, h.Post("/v2/customers", secret, `{"first_name":"Ada","last_name":"Baker","email":"ada@baker.example"}`))["user_id"].(string)
	body := fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"000123456789","nickname":%q}`, cus, nickname)
	src := th.WantOK(t, h.Post("/v2/funding-source", secret, body))["funding_source_id"].(string)

	// Found in the list by the last four, then opened.
	tb.Click("link", "Funding sources")
	tb.Fill("Search by user id, email, name or last four", "6789")
	tb.Click("button", "Filter")
	tb.WaitURL(`q=6789`)
	tb.WantText("Ada Baker", "Checking •••• 6789", "Unverified")
	tb.Click("link", "JPMorgan Chase Bank · Checking •••• 6789")
	tb.WaitURL(`/dashboard/funding-sources/` + src + `$`)
	if got := tb.Text("#nickname"); got != nickname {
		tb.Errorf("nickname shown as %q, want the text %q", got, nickname)
	}
	if n, _ := tb.Page.Locator("#nickname b, #nickname img").Count(); n != 0 {
		tb.Errorf("the nickname's HTML became %d elements", n)
	}

	// Micro-deposits, their sandbox amounts, and the hosted link.
	tb.Click("button", "Send micro-deposits")
	tb.WantText("Micro-deposits sent", "3 attempts remaining", "Sandbox amounts")
	amounts := regexp.MustCompile(`\$(0\.\d\d) and \$(0\.\d\d)`).FindStringSubmatch(tb.Text("#sandbox-amounts"))
	if amounts == nil {
		tb.Fatalf("sandbox amounts = %q", tb.Text("#sandbox-amounts"))
	}
	if api := h.Amounts(secret, src); api[0] != amounts[1] || api[1] != amounts[2] {
		tb.Errorf("dashboard amounts %v, API %v", amounts[1:], api)
	}
	link := tb.Value("#hosted-link")
	if want := srv.URL + "/#/bank-account/" + public + "/" + cus + "/" + src; link != want {
		tb.Errorf("hosted link = %q, want %q", link, want)
	}
	tb.Accessible()
	tb.Shot(shots, "dashboard-source")

	customerTab := webtest.NewTab(t)
	customerTab.Open(link)
	customerTab.WaitURL(`/bank-account/`)
	customerTab.WantText("Corner Bakery", "Checking •••• 6789")
	customerTab.Verify(amounts[1], amounts[2])
	customerTab.WantText("This bank account is verified")

	// Back in the dashboard: Verified, and the history shows it.
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	if got := tb.Text(".badge"); got != "Verified" {
		tb.Errorf("status after the hosted page = %q", got)
	}
	tb.WantText("funding_source.verified", "funding_source.verification_pending", "funding_source.created")
	tb.Open(srv.URL + "/dashboard/funding-sources?status=verified")
	tb.WantText("Ada Baker")
	tb.Open(srv.URL + "/dashboard/funding-sources?status=unverified")
	tb.WantText("No funding source matches")

	// The full account number appears on no page.
	for _, p := range []string{"/dashboard", "/dashboard/funding-sources", "/dashboard/funding-sources/" + src, "/dashboard/customers/" + cus} {
		tb.Open(srv.URL + p)
		if html, _ := tb.Page.Content(); strings.Contains(html, "000123456789") || strings.Contains(html, "123456789") {
			tb.Errorf("%s shows the account number", p)
		}
	}
	tb.Open(srv.URL + "/dashboard/customers")
	tb.WantText("Ada Baker", "ada@baker.example")
	tb.Accessible()
	tb.Shot(shots, "dashboard-customers")
	tb.Open(srv.URL + "/dashboard/settings")
	tb.WantText("Allowed redirect origins · Sandbox", "No origins yet")
	tb.Accessible()

	// Remove asks first (the script's confirm), then removes.
	other := th.WantOK(t, h.Post("/v2/funding-source", secret, th.SourceBody(cus, "021000021", "555566667777")))["funding_source_id"].(string)
	tb.Open(srv.URL + "/dashboard/funding-sources/" + other)
	if ok, _ := tb.Page.Locator(`button[data-copy="hosted-link"]`).IsVisible(); !ok {
		tb.Error("the Copy button stays hidden with JavaScript on")
	}
	tb.Click("button", "Remove funding source") // dismissed: nothing happens
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+other, secret))["removed"]; got != false {
		tb.Fatalf("a dismissed confirmation removed the source")
	}
	tb.AcceptDialogs()
	tb.Click("button", "Remove funding source")
	tb.WantText("Funding source removed.", "This funding source was removed.")
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+other, secret))["removed"]; got != true {
		tb.Errorf("removed = %v after confirming", got)
	}
}

func TestBrowserDashboardSignInFailureAndExpiry(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	h.Merchant("Acme Books")

	tb := webtest.NewTab(t)
	tb.Open(srv.URL + "/dashboard/customers?q=ada")
	tb.WaitURL(`/dashboard/sign-in\?next=`)
	tb.Fill("Email", "acme.books@example.com")
	tb.Fill("Password", "not the password")
	tb.Click("button", "Sign in")
	tb.WantText("That email and password don't match an account.")
	if got := tb.Value("#email"); got != "acme.books@example.com" {
		tb.Errorf("email after a failure = %q (should stay typed)", got)
	}
	// The right password lands where the merchant was going.
	tb.Fill("Password", "correct horse battery")
	tb.Click("button", "Sign in")
	tb.WaitURL(`/dashboard/customers\?q=ada$`)
	tb.WantText("No customer matches")
	if w := tb.Eval(`document.documentElement.scrollWidth`).(int); w > 375 {
		tb.Errorf("the dashboard is %d px wide on a 375 px phone", w)
	}

	// The cookie's flags, as the browser holds them.
	cookies, err := tb.Page.Context().Cookies()
	if err != nil || len(cookies) != 1 {
		tb.Fatalf("cookies = %v, %v", cookies, err)
	}
	if c := cookies[0]; !c.HttpOnly || c.SameSite == nil || *c.SameSite != *playwright.SameSiteAttributeLax || c.Path != "/dashboard" {
		tb.Errorf("session cookie = %+v", c)
	}
	if tb.Eval(`document.cookie`) != "" {
		tb.Error("script can read the session cookie")
	}

	// Idle for longer than the timeout: signed out, and back after signing in.
	h.Clock.Advance(h.Cfg.DashboardIdleTimeout + time.Minute)
	tb.Open(srv.URL + "/dashboard/webhooks")
	tb.WaitURL(`/dashboard/sign-in\?`)
	tb.WantText("Your session expired")
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.WaitURL(`/dashboard/webhooks$`)

	// Used now and then, a session still ends at its absolute age.
	for left := h.Cfg.DashboardSessionMaxAge; left > 0; left -= h.Cfg.DashboardIdleTimeout / 2 {
		h.Clock.Advance(h.Cfg.DashboardIdleTimeout / 2)
		tb.Open(srv.URL + "/dashboard")
	}
	h.Clock.Advance(h.Cfg.DashboardIdleTimeout / 2)
	tb.Open(srv.URL + "/dashboard")
	tb.WaitURL(`/dashboard/sign-in\?`)
	tb.WantText("Your session expired")

	// Sign out ends the session.
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.Click("button", "Sign out")
	tb.WaitURL(`/dashboard/sign-in\?reason=signed-out$`)
	tb.WantText("You have been signed out.")
	tb.Open(srv.URL + "/dashboard")
	tb.WaitURL(`/dashboard/sign-in`)
}

func TestBrowserDashboardHidesOtherMerchantsAndRefusesCrossSitePosts(t *testing.T) {
	h := webtest.NewHarness(t)
	srv, shop := h.Live(), webtest.NewShopSite(t)
	acme := h.Merchant("Acme Books")
	other := h.Merchant("Other Shop")
	otherUser := h.Customer(other.Sandbox.SecretKey)
	otherSrc := h.Source(other.Sandbox.SecretKey, otherUser, "987654321")

	tb := webtest.NewTab(t)
	tb.SignIn(srv.URL, "acme.books@example.com", "correct horse battery")
	for _, p := range []string{"/dashboard/funding-sources/" + otherSrc, "/dashboard/customers/" + otherUser, "/dashboard/funding-sources/fs_nope"} {
		if status := tb.Open(srv.URL + p); status != http.StatusNotFound {
			tb.Errorf("%s: %d, want 404", p, status)
		}
		tb.WantText("Not found")
	}

	// Another site (localhost is not 127.0.0.1) posts a form to the
	// dashboard in the signed-in merchant's browser.
	shop.Pages["/attack"] = `<!doctype html><title>Prize</title><form method="post" action="` +
		srv.URL + `/dashboard/webhooks"><input name="url" value="https://evil.example/hook"><button id="go">Claim</button></form>`
	tb.Open(shop.URL("localhost") + "/attack")
	tb.ClickOn(tb.Page.Locator("#go"))
	tb.WaitURL(`/dashboard/webhooks$`)
	tb.WantText("This form was sent from another site")
	if _, err := h.Webhooks.Get(t.Context(), tenant.Scope{MerchantID: acme.Merchant.ID, Env: tenant.Sandbox}); err == nil {
		tb.Error("a cross-site post set the webhook URL")
	}
}
