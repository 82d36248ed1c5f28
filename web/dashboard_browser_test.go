package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// Browser tests of the merchant dashboard. With DASHBOARD_SCREENSHOTS=dir
// the tour also saves the README's pictures there (`make screenshots`).

func withViewport(w, h int) tabOption {
	return func(o *playwright.BrowserNewContextOptions) { o.Viewport = &playwright.Size{Width: w, Height: h} }
}

// fill types value into the input labelled label.
func (tb *tab) fill(label, value string) {
	tb.t.Helper()
	if err := tb.page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(value); err != nil {
		tb.t.Fatalf("fill %q: %v", label, err)
	}
}

// click presses the button or link with the accessible name.
func (tb *tab) click(role, name string) {
	tb.t.Helper()
	err := tb.page.GetByRole(playwright.AriaRole(role), playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)}).First().Click()
	if err != nil {
		tb.t.Fatalf("click %s %q: %v", role, name, err)
	}
}

// value is the value of the input matching selector.
func (tb *tab) value(selector string) string {
	tb.t.Helper()
	v, err := tb.page.Locator(selector).InputValue()
	if err != nil {
		tb.t.Fatalf("value of %s: %v", selector, err)
	}
	return v
}

// acceptDialogs answers every confirm() with OK.
func (tb *tab) acceptDialogs() {
	tb.page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
}

// signIn signs in through the form and waits to leave the sign-in page.
func (tb *tab) signIn(base, email, password string) {
	tb.t.Helper()
	if !strings.Contains(tb.page.URL(), "/dashboard/sign-in") {
		tb.open(base + "/dashboard/sign-in")
	}
	tb.fill("Email", email)
	tb.fill("Password", password)
	tb.click("button", "Sign in")
	tb.waitURL(`/dashboard(/[a-z-]+.*)?$`)
}

func (tb *tab) shot(dir, name string) {
	if dir != "" {
		tb.screenshot(dir, name)
	}
}

// TestBrowserDashboardTour is the whole first day of a merchant: sign up,
// keys, webhook, test event delivered, a customer and source made through
// the API with the key the dashboard showed, micro-deposits, the hosted
// link, and the source Verified.
func TestBrowserDashboardTour(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	h.Cfg.HostedBaseURL, _ = url.Parse(srv.URL)
	rc := th.NewReceiver(t, nil)
	shots := os.Getenv("DASHBOARD_SCREENSHOTS")

	tb := newTab(t, withViewport(1280, 860))
	tb.open(srv.URL + "/dashboard/sign-up")
	tb.fill("Business name", "Corner Bakery")
	tb.fill("Email", "owner@corner.example")
	tb.fill("Password", "short")
	tb.click("button", "Create account")
	tb.wantText("Password must be at least 12 characters.")
	if inv, _ := tb.page.Locator("#password").GetAttribute("aria-invalid"); inv != "true" {
		t.Errorf("password aria-invalid = %q", inv)
	}
	tb.accessible()
	tb.shot(shots, "dashboard-sign-up")
	tb.fill("Password", "flour water salt yeast")
	tb.click("button", "Create account")

	// The sandbox keys, the secret shown once.
	tb.wantText("Your new secret key", "shown only once", "Sandbox: test data only")
	secret, public := tb.value("#new-secret"), tb.value("#public-key")
	if !regexp.MustCompile(`^sk_test_[A-Za-z0-9]{40,}$`).MatchString(secret) || !strings.HasPrefix(public, "pk_test_") {
		t.Fatalf("keys shown: %q %q", secret, public)
	}
	if hint := tb.text("#secret-hint"); hint != "sk_test_…"+secret[len(secret)-4:] {
		t.Errorf("secret hint = %q", hint)
	}
	if got := tb.text("#env-current"); got != "Sandbox" {
		t.Errorf("environment shown = %q", got)
	}
	tb.accessible()
	tb.shot(shots, "dashboard-home")

	// The webhook URL, pointing at a receiver, and a test event.
	tb.click("link", "Webhooks")
	tb.wantText("No webhook URL yet", "No events yet")
	tb.fill("Webhook URL", rc.URL())
	tb.click("button", "Save URL")
	tb.wantText("Webhook URL saved")
	tb.click("button", "Send test event")
	tb.wantText("Test event sent")
	if n := h.Deliver(); n != 1 {
		t.Fatalf("deliveries = %d, want 1 (the test event)", n)
	}
	if len(rc.Requests()) != 1 || rc.Requests()[0].Payload(t)["type"] != "webhook.test" {
		t.Fatalf("receiver got %d requests", len(rc.Requests()))
	}
	tb.open(srv.URL + "/dashboard/webhooks")
	row := tb.text("#delivery-log tbody tr")
	for _, want := range []string{"webhook.test", "delivered", "200"} {
		if !strings.Contains(row, want) {
			t.Errorf("log row %q lacks %q", row, want)
		}
	}
	tb.click("button", "Reveal secret")
	if s := tb.value("#webhook-secret"); !strings.HasPrefix(s, "whsec_") {
		t.Errorf("revealed secret = %q", s)
	}
	tb.accessible()
	tb.shot(shots, "dashboard-webhooks")
	tb.click("link", "webhook.test")
	tb.wantText("Deliveries", "delivered", "200", `"type": "webhook.test"`)

	// A customer and an Unverified source through the API with the key the
	// dashboard showed; the nickname carries HTML.
	nickname := `<b>Rent</b><img src=x onerror=alert(1)>`
	cus := th.WantOK(t, h.Post("/v2/customers", secret, `{"first_name":"Ada","last_name":"Baker","email":"ada@baker.example"}`))["user_id"].(string)
	body := fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"000123456789","nickname":%q}`, cus, nickname)
	src := th.WantOK(t, h.Post("/v2/funding-source", secret, body))["funding_source_id"].(string)

	// Found in the list by the last four, then opened.
	tb.click("link", "Funding sources")
	tb.fill("Search by user id, email, name or last four", "6789")
	tb.click("button", "Filter")
	tb.waitURL(`q=6789`)
	tb.wantText("Ada Baker", "Checking •••• 6789", "Unverified")
	tb.click("link", "JPMorgan Chase Bank · Checking •••• 6789")
	tb.waitURL(`/dashboard/funding-sources/` + src + `$`)
	if got := tb.text("#nickname"); got != nickname {
		t.Errorf("nickname shown as %q, want the text %q", got, nickname)
	}
	if n, _ := tb.page.Locator("#nickname b, #nickname img").Count(); n != 0 {
		t.Errorf("the nickname's HTML became %d elements", n)
	}

	// Micro-deposits, their sandbox amounts, and the hosted link.
	tb.click("button", "Send micro-deposits")
	tb.wantText("Micro-deposits sent", "3 attempts remaining", "Sandbox amounts")
	amounts := regexp.MustCompile(`\$(0\.\d\d) and \$(0\.\d\d)`).FindStringSubmatch(tb.text("#sandbox-amounts"))
	if amounts == nil {
		t.Fatalf("sandbox amounts = %q", tb.text("#sandbox-amounts"))
	}
	if api := h.Amounts(secret, src); api[0] != amounts[1] || api[1] != amounts[2] {
		t.Errorf("dashboard amounts %v, API %v", amounts[1:], api)
	}
	link := tb.value("#hosted-link")
	if want := srv.URL + "/#/bank-account/" + public + "/" + cus + "/" + src; link != want {
		t.Errorf("hosted link = %q, want %q", link, want)
	}
	tb.accessible()
	tb.shot(shots, "dashboard-source")

	customerTab := newTab(t)
	customerTab.open(link)
	customerTab.waitURL(`/bank-account/`)
	customerTab.wantText("Corner Bakery", "Checking •••• 6789")
	customerTab.verify(amounts[1], amounts[2])
	customerTab.wantText("This bank account is verified")

	// Back in the dashboard: Verified, and the history shows it.
	tb.open(srv.URL + "/dashboard/funding-sources/" + src)
	if got := tb.text(".badge"); got != "Verified" {
		t.Errorf("status after the hosted page = %q", got)
	}
	tb.wantText("funding_source.verified", "funding_source.verification_pending", "funding_source.created")
	tb.open(srv.URL + "/dashboard/funding-sources?status=verified")
	tb.wantText("Ada Baker")
	tb.open(srv.URL + "/dashboard/funding-sources?status=unverified")
	tb.wantText("No funding source matches")

	// The full account number appears on no page.
	for _, p := range []string{"/dashboard", "/dashboard/funding-sources", "/dashboard/funding-sources/" + src, "/dashboard/customers/" + cus} {
		tb.open(srv.URL + p)
		if html, _ := tb.page.Content(); strings.Contains(html, "000123456789") || strings.Contains(html, "123456789") {
			t.Errorf("%s shows the account number", p)
		}
	}
	tb.open(srv.URL + "/dashboard/customers")
	tb.wantText("Ada Baker", "ada@baker.example")
	tb.accessible()
	tb.shot(shots, "dashboard-customers")
	tb.open(srv.URL + "/dashboard/settings")
	tb.wantText("Allowed redirect origins · Sandbox", "No origins yet")
	tb.accessible()

	// Remove asks first (the script's confirm), then removes.
	other := th.WantOK(t, h.Post("/v2/funding-source", secret, th.SourceBody(cus, "021000021", "555566667777")))["funding_source_id"].(string)
	tb.open(srv.URL + "/dashboard/funding-sources/" + other)
	if ok, _ := tb.page.Locator(`button[data-copy="hosted-link"]`).IsVisible(); !ok {
		t.Error("the Copy button stays hidden with JavaScript on")
	}
	tb.click("button", "Remove funding source") // dismissed: nothing happens
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+other, secret))["removed"]; got != false {
		t.Fatalf("a dismissed confirmation removed the source")
	}
	tb.acceptDialogs()
	tb.click("button", "Remove funding source")
	tb.wantText("Funding source removed.", "This funding source was removed.")
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+other, secret))["removed"]; got != true {
		t.Errorf("removed = %v after confirming", got)
	}
}

// accessible fails on form controls without a label, a page without one
// h1 or a language.
func (tb *tab) accessible() {
	tb.t.Helper()
	unlabelled := tb.eval(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
		.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id || e.name).join(',')`)
	if unlabelled != "" {
		tb.t.Errorf("%s: controls without a label: %v", tb.page.URL(), unlabelled)
	}
	if n := tb.eval(`document.querySelectorAll('h1').length`); n != 1 {
		tb.t.Errorf("%s: %v h1 elements", tb.page.URL(), n)
	}
	if lang := tb.eval(`document.documentElement.lang`); lang != "en" {
		tb.t.Errorf("%s: lang = %v", tb.page.URL(), lang)
	}
}

func TestBrowserDashboardSignInFailureAndExpiry(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	h.Merchant("Acme Books")

	tb := newTab(t)
	tb.open(srv.URL + "/dashboard/customers?q=ada")
	tb.waitURL(`/dashboard/sign-in\?next=`)
	tb.fill("Email", "acme.books@example.com")
	tb.fill("Password", "not the password")
	tb.click("button", "Sign in")
	tb.wantText("That email and password don't match an account.")
	if got := tb.value("#email"); got != "acme.books@example.com" {
		t.Errorf("email after a failure = %q (should stay typed)", got)
	}
	// The right password lands where the merchant was going.
	tb.fill("Password", "correct horse battery")
	tb.click("button", "Sign in")
	tb.waitURL(`/dashboard/customers\?q=ada$`)
	tb.wantText("No customer matches")
	if w := tb.eval(`document.documentElement.scrollWidth`).(int); w > 375 {
		t.Errorf("the dashboard is %d px wide on a 375 px phone", w)
	}

	// The cookie's flags, as the browser holds them.
	cookies, err := tb.page.Context().Cookies()
	if err != nil || len(cookies) != 1 {
		t.Fatalf("cookies = %v, %v", cookies, err)
	}
	if c := cookies[0]; !c.HttpOnly || c.SameSite == nil || *c.SameSite != *playwright.SameSiteAttributeLax || c.Path != "/dashboard" {
		t.Errorf("session cookie = %+v", c)
	}
	if tb.eval(`document.cookie`) != "" {
		t.Error("script can read the session cookie")
	}

	// Idle for longer than the timeout: signed out, and back after signing in.
	h.Clock.Advance(h.Cfg.DashboardIdleTimeout + time.Minute)
	tb.open(srv.URL + "/dashboard/webhooks")
	tb.waitURL(`/dashboard/sign-in\?`)
	tb.wantText("Your session expired")
	tb.signIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.waitURL(`/dashboard/webhooks$`)

	// Used now and then, a session still ends at its absolute age.
	for left := h.Cfg.DashboardSessionMaxAge; left > 0; left -= h.Cfg.DashboardIdleTimeout / 2 {
		h.Clock.Advance(h.Cfg.DashboardIdleTimeout / 2)
		tb.open(srv.URL + "/dashboard")
	}
	h.Clock.Advance(h.Cfg.DashboardIdleTimeout / 2)
	tb.open(srv.URL + "/dashboard")
	tb.waitURL(`/dashboard/sign-in\?`)
	tb.wantText("Your session expired")

	// Sign out ends the session.
	tb.signIn(srv.URL, "acme.books@example.com", "correct horse battery")
	tb.click("button", "Sign out")
	tb.waitURL(`/dashboard/sign-in\?reason=signed-out$`)
	tb.wantText("You have been signed out.")
	tb.open(srv.URL + "/dashboard")
	tb.waitURL(`/dashboard/sign-in`)
}

func TestBrowserDashboardHidesOtherMerchantsAndRefusesCrossSitePosts(t *testing.T) {
	h := newHarness(t)
	srv, shop := h.live(), newShopSite(t)
	acme := h.Merchant("Acme Books")
	other := h.Merchant("Other Shop")
	otherUser := h.Customer(other.Sandbox.SecretKey)
	otherSrc := h.Source(other.Sandbox.SecretKey, otherUser, "987654321")

	tb := newTab(t)
	tb.signIn(srv.URL, "acme.books@example.com", "correct horse battery")
	for _, p := range []string{"/dashboard/funding-sources/" + otherSrc, "/dashboard/customers/" + otherUser, "/dashboard/funding-sources/fs_nope"} {
		if status := tb.open(srv.URL + p); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, status)
		}
		tb.wantText("Not found")
	}

	// Another site (localhost is not 127.0.0.1) posts a form to the
	// dashboard in the signed-in merchant's browser.
	shop.pages["/attack"] = `<!doctype html><title>Prize</title><form method="post" action="` +
		srv.URL + `/dashboard/webhooks"><input name="url" value="https://evil.example/hook"><button id="go">Claim</button></form>`
	tb.open(shop.URL("localhost") + "/attack")
	if err := tb.page.Locator("#go").Click(); err != nil {
		t.Fatal(err)
	}
	tb.waitURL(`/dashboard/webhooks$`)
	tb.wantText("This form was sent from another site")
	if _, err := h.Webhooks.Get(t.Context(), tenant.Scope{MerchantID: acme.Merchant.ID, Env: tenant.Sandbox}); err == nil {
		t.Error("a cross-site post set the webhook URL")
	}
}
