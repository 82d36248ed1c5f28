package hosted_test

import (
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestBrowserHostedVerificationByKeyboard(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly()
	h := s.H
	rc := th.NewReceiver(t, nil)
	secret := h.RegisterWebhook(s.Key, rc.URL())["secret"].(string)
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	right := h.Amounts(s.Key, s.Src)
	srv, shop := h.Live(), webtest.NewShopSite(t)
	success := shop.URL("127.0.0.1") + "/done?order=7"

	tb := webtest.NewTab(t)
	tb.Open(s.FragmentLink(srv.URL, success, shop.URL("127.0.0.1")+"/cart"))
	// The fragment became the server-rendered route, query kept.
	tb.WaitURL(`/bank-account/` + s.PK + `/` + s.User + `/` + s.Src + `\?(.*&)?successUrl=`)
	tb.WantText("Confirm your bank account", "Acme Books", "JPMorgan Chase Bank", "Checking •••• 6789",
		"today, Monday, November 2, 2026", "3 attempts remaining", "like 0.12")
	if w := tb.Eval(`document.documentElement.scrollWidth`).(int); w > 375 {
		tb.Errorf("the page is %d px wide on a 375 px phone", w)
	}

	// Keyboard only: Tab to the first input, type, Tab, type, Enter.
	wrong := wrongAmounts(right)
	tb.Press("Tab")
	tb.WantFocus("#amount1") // the first Tab
	if err := tb.Page.Keyboard().Type(wrong[0]); err != nil {
		tb.Fatal(err)
	}
	tb.Press("Tab")
	if err := tb.Page.Keyboard().Type(wrong[1]); err != nil {
		tb.Fatal(err)
	}
	tb.Press("Enter")
	if err := tb.Page.Locator("#form-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
		tb.Fatalf("no error after a wrong pair: %v", err)
	}
	if msg := tb.Text("#form-error"); !strings.Contains(msg, "You have 2 attempts left") {
		tb.Errorf("error = %q", msg)
	}
	if role, _ := tb.Page.Locator("#form-error").GetAttribute("role"); role != "alert" {
		tb.Errorf("error role = %q, want alert (announced)", role)
	}
	tb.WantFocus("#amount1") // after the error
	tb.WantText("2 attempts remaining")

	// The right pair, found by their labels; one typed as bare cents.
	tb.Verify(strings.TrimPrefix(right[0], "0."), right[1])
	tb.WaitURL(`/done\?order=7&funding_source_id=` + s.Src + `&status=Verified$`)
	tb.WantText("Back at the shop")

	// The same service as the API: Verified, one event, delivered signed.
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+s.Src, s.Key))["status"]; got != "Verified" {
		tb.Errorf("status = %v", got)
	}
	h.Deliver()
	var verified []th.Received
	for _, r := range rc.Requests() {
		if r.Payload(t)["type"] == "funding_source.verified" {
			verified = append(verified, r)
		}
	}
	if len(verified) != 1 {
		tb.Fatalf("funding_source.verified deliveries = %d, want 1", len(verified))
	}
	if err := th.VerifyStandardWebhook(secret, verified[0].Header, verified[0].Body, h.Clock.Now()); err != nil {
		tb.Errorf("verified event signature: %v", err)
	}
	if d := verified[0].Payload(t)["data"].(map[string]any); d["funding_source_id"] != s.Src || d["status"] != "Verified" {
		tb.Errorf("verified event data = %v", d)
	}
}

func TestBrowserHostedCancel(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly()
	th.WantOK(t, s.H.Initiate(s.Key, s.Src))
	srv, shop := s.H.Live(), webtest.NewShopSite(t)

	tb := webtest.NewTab(t)
	tb.Open(s.FragmentLink(srv.URL, shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart?step=bank"))
	tb.ClickOn(tb.Page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Cancel"}))
	tb.WaitURL(`/cart\?step=bank&funding_source_id=` + s.Src + `$`)
	if n := attemptsLeft(t, s); n != 3 {
		tb.Errorf("attempts after cancel = %v", n)
	}
}

// TestBrowserHostedStates opens each state's page. With
// HOSTED_SCREENSHOTS=dir it also saves one screenshot per state there (the
// README's pictures come from `make screenshots`).
func TestBrowserHostedStates(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly() // not initiated
	h := s.H
	srv, shop := h.Live(), webtest.NewShopSite(t)
	success := shop.URL("127.0.0.1") + "/done"
	cancel := shop.URL("127.0.0.1") + "/cart"
	sourceIn := func(state string) *webtest.HostedSetup {
		c := *s
		c.Src = h.Source(s.Key, s.User, map[string]string{"pending": "222222222", "failed": "333333333",
			"verified": "444444444", "expired": "555555555", "error": "666666666"}[state])
		if state != "not_initiated" {
			th.WantOK(t, h.Initiate(s.Key, c.Src))
		}
		right := h.Amounts(s.Key, c.Src)
		switch state {
		case "failed":
			for i := 0; i < 3; i++ {
				h.Post("/v2/funding-source/verify", s.Key, th.VerifyBody(c.Src, th.WrongPair(right)))
			}
		case "verified":
			th.WantOK(t, h.Post("/v2/funding-source/verify", s.Key, th.VerifyBody(c.Src, "["+right[0]+","+right[1]+"]")))
		}
		return &c
	}
	shots := os.Getenv("HOSTED_SCREENSHOTS")
	tb := webtest.NewTab(t)
	check := func(name, link string, want ...string) {
		t.Helper()
		tb.Open(link)
		if strings.Contains(link, "/#/") {
			tb.WaitURL(`/bank-account/`)
		}
		tb.WantText(want...)
		if w := tb.Eval(`document.documentElement.scrollWidth`).(int); w > 375 {
			tb.Errorf("%s: %d px wide on a 375 px phone", name, w)
		}
		if shots != "" {
			tb.Screenshot(shots, "hosted-"+name)
		}
	}

	check("not-initiated", s.FragmentLink(srv.URL, success, cancel), "Deposits not sent yet", "Acme Books has not sent")
	pending := sourceIn("pending")
	check("pending", pending.FragmentLink(srv.URL, success, cancel), "Confirm your bank account", "3 attempts remaining")
	errored := sourceIn("error")
	tb.Open(errored.FragmentLink(srv.URL, success, cancel))
	tb.WaitURL(`/bank-account/`)
	wrong := wrongAmounts(h.Amounts(s.Key, errored.Src))
	tb.Verify(wrong[0], wrong[1])
	tb.WantText("attempts left")
	if shots != "" {
		tb.Screenshot(shots, "hosted-wrong-amounts")
	}
	check("failed", sourceIn("failed").FragmentLink(srv.URL, success, cancel), "Verification locked", "Ask Acme Books to send new deposits")
	verified := sourceIn("verified")
	check("verified", verified.FragmentLink(srv.URL, success, cancel), "Bank account verified", "Continue to Acme Books")
	tb.ClickOn(tb.Page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Continue to Acme Books"}))
	tb.WaitURL(`/done\?funding_source_id=` + verified.Src + `&status=Verified$`)

	expired := sourceIn("expired")
	h.Clock.Advance(10*24*time.Hour + time.Minute)
	check("expired", expired.FragmentLink(srv.URL, success, cancel), "Deposits expired", "sent too long ago")

	// Links that cannot be used.
	bad := *s
	bad.Src = "fs_doesnotexist"
	check("invalid-link", bad.FragmentLink(srv.URL, success, cancel), "This link is not valid")
	check("refused-redirect", s.FragmentLink(srv.URL, "javascript:alert(1)", cancel), "This link cannot be used", "successUrl was refused")
	if strings.HasPrefix(tb.Page.URL(), "javascript:") {
		tb.Error("followed a javascript: successUrl")
	}
	tb.Open(srv.URL + "/#/bank-account/../../evil.example")
	if err := tb.Page.Locator("#bad-link").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
		tb.Errorf("a malformed fragment does not say the link is not valid: %v", err)
	}
	if u := tb.Page.URL(); !strings.HasPrefix(u, srv.URL+"/#") {
		tb.Errorf("a malformed fragment navigated to %s", u)
	}
}

func TestBrowserHostedRefusesCrossSitePost(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly()
	th.WantOK(t, s.H.Initiate(s.Key, s.Src))
	right := s.H.Amounts(s.Key, s.Src)
	srv, shop := s.H.Live(), webtest.NewShopSite(t)
	target := srv.URL + s.Path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))
	// Another site (localhost is a different site from 127.0.0.1) posts the
	// right amounts to the page in the customer's browser.
	shop.Pages["/attack"] = `<!doctype html><title>Prize</title><form method="post" action="` + target + `">` +
		`<input name="amount1" value="` + right[0] + `"><input name="amount2" value="` + right[1] + `">` +
		`<button id="go">Claim</button></form>`

	tb := webtest.NewTab(t)
	tb.Open(shop.URL("localhost") + "/attack")
	tb.ClickOn(tb.Page.Locator("#go"))
	if err := tb.Page.WaitForURL(regexp.MustCompile(`/bank-account/`)); err != nil {
		tb.Fatal(err)
	}
	tb.WantText("This form was sent from another site")
	if got := th.WantOK(t, s.H.Get("/v2/funding-source/"+s.Src, s.Key))["status"]; got != "Unverified" {
		tb.Errorf("a cross-site post changed the source to %v", got)
	}
	if n := attemptsLeft(t, s); n != 3 {
		tb.Errorf("attempts after a cross-site post = %v", n)
	}
}

func TestBrowserHostedWithoutJavaScript(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly()
	th.WantOK(t, s.H.Initiate(s.Key, s.Src))
	right := s.H.Amounts(s.Key, s.Src)
	srv, shop := s.H.Live(), webtest.NewShopSite(t)

	tb := webtest.NewTab(t, webtest.WithoutJavaScript)
	tb.Open(srv.URL + "/")
	tb.WantText("JavaScript turned off")
	if status := tb.Open(srv.URL + s.Path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))); status != 200 {
		tb.Fatalf("direct route without JavaScript: %d", status)
	}
	tb.Verify(right[1], right[0]) // either order
	tb.WaitURL(`/done\?funding_source_id=` + s.Src + `&status=Verified$`)
}
