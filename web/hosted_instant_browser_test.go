package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// instantSource is a new source of the setup's customer at routing with
// account, its instant verification initiated.
func (s *hostedSetup) instantSource(routing, account string) *hostedSetup {
	c := *s
	c.src = th.WantOK(s.h.T, s.h.Post("/v2/funding-source", s.key, th.SourceBody(s.user, routing, account)))["funding_source_id"].(string)
	th.WantOK(s.h.T, s.h.InitiateBy(s.key, c.src, "instant"))
	return &c
}

// The hosted page asks for the code of an instant verification, at desktop
// and phone widths: labelled, announced errors, the same attempts, and the
// state of a deposit the bank refused.
func TestBrowserHostedInstantCode(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := newHostedSetup(t).localOnly()
			h := s.h
			srv, shop := h.live(), newShopSite(t)
			success, cancel := shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart"
			inst := s.instantSource("110000000", fmt.Sprint(700000000+width))
			code := h.Code(s.key, inst.src)

			tb := newTab(t, withViewport(width, 800))
			tb.open(inst.fragmentLink(srv.URL, success, cancel))
			tb.waitURL(`/bank-account/`)
			tb.wantText("Confirm your bank account", "$0.01", "over RTP", "starts with FS", "3 attempts remaining")
			tb.accessible()
			tb.axe()
			if w := tb.eval(`document.documentElement.scrollWidth`).(int); w > width {
				t.Errorf("the page is %d px wide at %d px", w, width)
			}
			if n := tb.eval(`document.querySelectorAll('#amount1, #amount2').length`); n != 0 {
				t.Errorf("%v amount inputs on an instant verification", n)
			}
			// A touch target as large as the amount inputs: 44 px and more.
			if box := tb.box("#code"); box.Height < 44 || box.Width < 200 {
				t.Errorf("the code input is %.0f × %.0f px at %d px, want at least 44 px tall", box.Width, box.Height, width)
			}

			wrong := "FS2222"
			if code == wrong {
				wrong = "FS3333"
			}
			tb.fill("Code from the $0.01 deposit", wrong)
			tb.click("button", "Verify account")
			if err := tb.page.Locator("#form-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
				t.Fatalf("no error after a wrong code: %v", err)
			}
			if msg := tb.text("#form-error"); !strings.Contains(msg, "That code doesn't match") || !strings.Contains(msg, "2 attempts left") {
				t.Errorf("error = %q", msg)
			}
			if id := tb.eval(`document.activeElement.id`); id != "code" {
				t.Errorf("after the error the focus is on %v, want code", id)
			}
			tb.axe()
			tb.fill("Code from the $0.01 deposit", "x")
			tb.click("button", "Verify account")
			if err := tb.page.Locator("#code-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
				t.Fatalf("no field error after a malformed code: %v", err)
			}
			if inv, _ := tb.page.Locator("#code").GetAttribute("aria-invalid"); inv != "true" {
				t.Errorf("aria-invalid = %q on a malformed code", inv)
			}
			tb.wantText("2 attempts remaining") // a malformed code costs nothing

			// Lower case, without FS.
			tb.fill("Code from the $0.01 deposit", strings.ToLower(code[2:]))
			tb.click("button", "Verify account")
			tb.waitURL(`/done\?funding_source_id=` + inst.src + `&status=Verified$`)

			// The link opened again shows the verified state.
			tb.open(inst.fragmentLink(srv.URL, success, cancel))
			tb.waitURL(`/bank-account/`)
			tb.wantText("This bank account is verified.")
			tb.accessible()
			tb.axe()

			refused := s.instantSource("222222226", railsim.AccountClosed)
			tb.open(refused.fragmentLink(srv.URL, success, cancel))
			tb.waitURL(`/bank-account/`)
			tb.wantText("Deposit refused by the bank", "Your bank refused the deposit", "Return to Acme Books")
			tb.accessible()
			tb.axe()
		})
	}
}

func TestBrowserHostedInstantWithoutJavaScript(t *testing.T) {
	s := newHostedSetup(t).localOnly()
	inst := s.instantSource("222222226", "123498765")
	code := s.h.Code(s.key, inst.src)
	srv, shop := s.h.live(), newShopSite(t)

	tb := newTab(t, withoutJavaScript)
	if status := tb.open(srv.URL + inst.path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))); status != 200 {
		t.Fatalf("direct route without JavaScript: %d", status)
	}
	tb.wantText("over FedNow")
	tb.fill("Code from the $0.01 deposit", " "+code[:3]+" "+code[3:]+" ")
	tb.click("button", "Verify account")
	tb.waitURL(`/done\?funding_source_id=` + inst.src + `&status=Verified$`)
}
