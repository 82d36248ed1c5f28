package web_test

import (
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// fragmentLink is the link a merchant builds: {hosted_url}/#/bank-account/….
func (s *hostedSetup) fragmentLink(base, success, cancel string) string {
	q := url.Values{}
	if success != "" {
		q.Set("successUrl", success)
	}
	if cancel != "" {
		q.Set("cancelUrl", cancel)
	}
	link := base + "/#/bank-account/" + s.pk + "/" + s.user + "/" + s.src
	if len(q) > 0 {
		link += "?" + q.Encode()
	}
	return link
}

// verify fills the two amounts, found by their labels, and presses Verify.
func (tb *tab) verify(first, second string) {
	tb.t.Helper()
	if err := tb.page.GetByLabel("First deposit").Fill(first); err != nil {
		tb.t.Fatal(err)
	}
	if err := tb.page.GetByLabel("Second deposit").Fill(second); err != nil {
		tb.t.Fatal(err)
	}
	if err := tb.page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Verify account"}).Click(); err != nil {
		tb.t.Fatal(err)
	}
}

func TestBrowserHostedVerificationByKeyboard(t *testing.T) {
	s := newHostedSetup(t).localOnly()
	h := s.h
	rc := th.NewReceiver(t, nil)
	secret := h.RegisterWebhook(s.key, rc.URL())["secret"].(string)
	th.WantOK(t, h.Initiate(s.key, s.src))
	right := h.Amounts(s.key, s.src)
	srv, shop := h.live(), newShopSite(t)
	success := shop.URL("127.0.0.1") + "/done?order=7"

	tb := newTab(t)
	tb.open(s.fragmentLink(srv.URL, success, shop.URL("127.0.0.1")+"/cart"))
	// The fragment became the server-rendered route, query kept.
	tb.waitURL(`/bank-account/` + s.pk + `/` + s.user + `/` + s.src + `\?(.*&)?successUrl=`)
	tb.wantText("Confirm your bank account", "Acme Books", "JPMorgan Chase Bank", "Checking •••• 6789",
		"today, Monday, November 2, 2026", "3 attempts remaining", "like 0.12")
	if w := tb.eval(`document.documentElement.scrollWidth`).(int); w > 375 {
		t.Errorf("the page is %d px wide on a 375 px phone", w)
	}

	// Keyboard only: Tab to the first input, type, Tab, type, Enter.
	wrong := wrongAmounts(right)
	tb.press("Tab")
	if id := tb.eval(`document.activeElement.id`); id != "amount1" {
		t.Fatalf("first Tab focuses %v, want amount1", id)
	}
	if err := tb.page.Keyboard().Type(wrong[0]); err != nil {
		t.Fatal(err)
	}
	tb.press("Tab")
	if err := tb.page.Keyboard().Type(wrong[1]); err != nil {
		t.Fatal(err)
	}
	tb.press("Enter")
	if err := tb.page.Locator("#form-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
		t.Fatalf("no error after a wrong pair: %v", err)
	}
	if msg := tb.text("#form-error"); !strings.Contains(msg, "You have 2 attempts left") {
		t.Errorf("error = %q", msg)
	}
	if role, _ := tb.page.Locator("#form-error").GetAttribute("role"); role != "alert" {
		t.Errorf("error role = %q, want alert (announced)", role)
	}
	if id := tb.eval(`document.activeElement.id`); id != "amount1" {
		t.Errorf("after the error the focus is on %v, want amount1", id)
	}
	tb.wantText("2 attempts remaining")

	// The right pair, found by their labels; one typed as bare cents.
	tb.verify(strings.TrimPrefix(right[0], "0."), right[1])
	tb.waitURL(`/done\?order=7&funding_source_id=` + s.src + `&status=Verified$`)
	tb.wantText("Back at the shop")

	// The same service as the API: Verified, one event, delivered signed.
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+s.src, s.key))["status"]; got != "Verified" {
		t.Errorf("status = %v", got)
	}
	h.Deliver()
	var verified []th.Received
	for _, r := range rc.Requests() {
		if r.Payload(t)["type"] == "funding_source.verified" {
			verified = append(verified, r)
		}
	}
	if len(verified) != 1 {
		t.Fatalf("funding_source.verified deliveries = %d, want 1", len(verified))
	}
	if err := th.VerifyStandardWebhook(secret, verified[0].Header, verified[0].Body, h.Clock.Now()); err != nil {
		t.Errorf("verified event signature: %v", err)
	}
	if d := verified[0].Payload(t)["data"].(map[string]any); d["funding_source_id"] != s.src || d["status"] != "Verified" {
		t.Errorf("verified event data = %v", d)
	}
}

func TestBrowserHostedCancel(t *testing.T) {
	s := newHostedSetup(t).localOnly()
	th.WantOK(t, s.h.Initiate(s.key, s.src))
	srv, shop := s.h.live(), newShopSite(t)

	tb := newTab(t)
	tb.open(s.fragmentLink(srv.URL, shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart?step=bank"))
	if err := tb.page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Cancel"}).Click(); err != nil {
		t.Fatal(err)
	}
	tb.waitURL(`/cart\?step=bank&funding_source_id=` + s.src + `$`)
	if n := attemptsLeft(t, s); n != 3 {
		t.Errorf("attempts after cancel = %v", n)
	}
}

// TestBrowserHostedStates opens each state's page. With
// HOSTED_SCREENSHOTS=dir it also saves one screenshot per state there (the
// README's pictures come from `make screenshots`).
func TestBrowserHostedStates(t *testing.T) {
	s := newHostedSetup(t).localOnly() // not initiated
	h := s.h
	srv, shop := h.live(), newShopSite(t)
	success := shop.URL("127.0.0.1") + "/done"
	cancel := shop.URL("127.0.0.1") + "/cart"
	sourceIn := func(state string) *hostedSetup {
		c := *s
		c.src = h.Source(s.key, s.user, map[string]string{"pending": "222222222", "failed": "333333333",
			"verified": "444444444", "expired": "555555555", "error": "666666666"}[state])
		if state != "not_initiated" {
			th.WantOK(t, h.Initiate(s.key, c.src))
		}
		right := h.Amounts(s.key, c.src)
		switch state {
		case "failed":
			for i := 0; i < 3; i++ {
				h.Post("/v2/funding-source/verify", s.key, th.VerifyBody(c.src, th.WrongPair(right)))
			}
		case "verified":
			th.WantOK(t, h.Post("/v2/funding-source/verify", s.key, th.VerifyBody(c.src, "["+right[0]+","+right[1]+"]")))
		}
		return &c
	}
	shots := os.Getenv("HOSTED_SCREENSHOTS")
	tb := newTab(t)
	check := func(name, link string, want ...string) {
		t.Helper()
		tb.open(link)
		if strings.Contains(link, "/#/") {
			tb.waitURL(`/bank-account/`)
		}
		tb.wantText(want...)
		if w := tb.eval(`document.documentElement.scrollWidth`).(int); w > 375 {
			t.Errorf("%s: %d px wide on a 375 px phone", name, w)
		}
		if shots != "" {
			tb.screenshot(shots, "hosted-"+name)
		}
	}

	check("not-initiated", s.fragmentLink(srv.URL, success, cancel), "Deposits not sent yet", "Acme Books has not sent")
	pending := sourceIn("pending")
	check("pending", pending.fragmentLink(srv.URL, success, cancel), "Confirm your bank account", "3 attempts remaining")
	errored := sourceIn("error")
	tb.open(errored.fragmentLink(srv.URL, success, cancel))
	tb.waitURL(`/bank-account/`)
	wrong := wrongAmounts(h.Amounts(s.key, errored.src))
	tb.verify(wrong[0], wrong[1])
	tb.wantText("attempts left")
	if shots != "" {
		tb.screenshot(shots, "hosted-wrong-amounts")
	}
	check("failed", sourceIn("failed").fragmentLink(srv.URL, success, cancel), "Verification locked", "Ask Acme Books to send new deposits")
	verified := sourceIn("verified")
	check("verified", verified.fragmentLink(srv.URL, success, cancel), "Bank account verified", "Continue to Acme Books")
	if err := tb.page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Continue to Acme Books"}).Click(); err != nil {
		t.Fatal(err)
	}
	tb.waitURL(`/done\?funding_source_id=` + verified.src + `&status=Verified$`)

	expired := sourceIn("expired")
	h.Clock.Advance(10*24*time.Hour + time.Minute)
	check("expired", expired.fragmentLink(srv.URL, success, cancel), "Deposits expired", "sent too long ago")

	// Links that cannot be used.
	bad := *s
	bad.src = "fs_doesnotexist"
	check("invalid-link", bad.fragmentLink(srv.URL, success, cancel), "This link is not valid")
	check("refused-redirect", s.fragmentLink(srv.URL, "javascript:alert(1)", cancel), "This link cannot be used", "successUrl was refused")
	if strings.HasPrefix(tb.page.URL(), "javascript:") {
		t.Error("followed a javascript: successUrl")
	}
	tb.open(srv.URL + "/#/bank-account/../../evil.example")
	if err := tb.page.Locator("#bad-link").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
		t.Errorf("a malformed fragment does not say the link is not valid: %v", err)
	}
	if u := tb.page.URL(); !strings.HasPrefix(u, srv.URL+"/#") {
		t.Errorf("a malformed fragment navigated to %s", u)
	}
}

func TestBrowserHostedRefusesCrossSitePost(t *testing.T) {
	s := newHostedSetup(t).localOnly()
	th.WantOK(t, s.h.Initiate(s.key, s.src))
	right := s.h.Amounts(s.key, s.src)
	srv, shop := s.h.live(), newShopSite(t)
	target := srv.URL + s.path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))
	// Another site (localhost is a different site from 127.0.0.1) posts the
	// right amounts to the page in the customer's browser.
	shop.pages["/attack"] = `<!doctype html><title>Prize</title><form method="post" action="` + target + `">` +
		`<input name="amount1" value="` + right[0] + `"><input name="amount2" value="` + right[1] + `">` +
		`<button id="go">Claim</button></form>`

	tb := newTab(t)
	tb.open(shop.URL("localhost") + "/attack")
	if err := tb.page.Locator("#go").Click(); err != nil {
		t.Fatal(err)
	}
	if err := tb.page.WaitForURL(regexp.MustCompile(`/bank-account/`)); err != nil {
		t.Fatal(err)
	}
	tb.wantText("This form was sent from another site")
	if got := th.WantOK(t, s.h.Get("/v2/funding-source/"+s.src, s.key))["status"]; got != "Unverified" {
		t.Errorf("a cross-site post changed the source to %v", got)
	}
	if n := attemptsLeft(t, s); n != 3 {
		t.Errorf("attempts after a cross-site post = %v", n)
	}
}

func TestBrowserHostedWithoutJavaScript(t *testing.T) {
	s := newHostedSetup(t).localOnly()
	th.WantOK(t, s.h.Initiate(s.key, s.src))
	right := s.h.Amounts(s.key, s.src)
	srv, shop := s.h.live(), newShopSite(t)

	tb := newTab(t, withoutJavaScript)
	tb.open(srv.URL + "/")
	tb.wantText("JavaScript turned off")
	if status := tb.open(srv.URL + s.path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))); status != 200 {
		t.Fatalf("direct route without JavaScript: %d", status)
	}
	tb.verify(right[1], right[0]) // either order
	tb.waitURL(`/done\?funding_source_id=` + s.src + `&status=Verified$`)
}
