package hosted_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
)

// The hosted page asks for the code of an instant verification, at desktop
// and phone widths: labelled, announced errors, the same attempts, and the
// state of a deposit the bank refused.
func TestBrowserHostedInstantCode(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := webtest.NewHostedSetup(t).LocalOnly()
			h := s.H
			srv, shop := h.Live(), webtest.NewShopSite(t)
			success, cancel := shop.URL("127.0.0.1")+"/done", shop.URL("127.0.0.1")+"/cart"
			inst := s.InstantSource("110000000", fmt.Sprint(700000000+width))
			code := h.Code(s.Key, inst.Src)

			tb := webtest.NewTab(t, webtest.WithViewport(width, 800))
			tb.Open(inst.FragmentLink(srv.URL, success, cancel))
			tb.WaitURL(`/bank-account/`)
			tb.WantText("Confirm your bank account", "$0.01", "over RTP", "starts with FS", "3 attempts remaining",
				"The code is FS followed by four letters or digits, like FS7KQ2. Upper or lower case both work, and you can leave out FS.")
			if ph, err := tb.Page.Locator("#code").GetAttribute("placeholder"); err != nil || ph != "FS" {
				tb.Errorf("the code input's placeholder is %q (%v), want FS", ph, err)
			}
			tb.Accessible()
			tb.Axe()
			if w := tb.Eval(`document.documentElement.scrollWidth`).(int); w > width {
				tb.Errorf("the page is %d px wide at %d px", w, width)
			}
			if n := tb.Eval(`document.querySelectorAll('#amount1, #amount2').length`); n != 0 {
				tb.Errorf("%v amount inputs on an instant verification", n)
			}
			// A touch target as large as the amount inputs: 44 px and more.
			if box := tb.Box("#code"); box.Height < 44 || box.Width < 200 {
				tb.Errorf("the code input is %.0f × %.0f px at %d px, want at least 44 px tall", box.Width, box.Height, width)
			}

			wrong := "FS2222"
			if code == wrong {
				wrong = "FS3333"
			}
			tb.Fill("Code from the $0.01 deposit", wrong)
			tb.Click("button", "Verify account")
			if err := tb.Page.Locator("#form-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
				tb.Fatalf("no error after a wrong code: %v", err)
			}
			if msg := tb.Text("#form-error"); !strings.Contains(msg, "That code doesn't match") || !strings.Contains(msg, "2 attempts left") {
				tb.Errorf("error = %q", msg)
			}
			tb.WantFocus("#code") // after the error
			tb.Axe()
			tb.Fill("Code from the $0.01 deposit", "x")
			tb.Click("button", "Verify account")
			if err := tb.Page.Locator("#code-error").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
				tb.Fatalf("no field error after a malformed code: %v", err)
			}
			if inv, _ := tb.Page.Locator("#code").GetAttribute("aria-invalid"); inv != "true" {
				tb.Errorf("aria-invalid = %q on a malformed code", inv)
			}
			tb.WantText("2 attempts remaining") // a malformed code costs nothing

			// Lower case, without FS.
			tb.Fill("Code from the $0.01 deposit", strings.ToLower(code[2:]))
			tb.Click("button", "Verify account")
			tb.WaitURL(`/done\?funding_source_id=` + inst.Src + `&status=Verified$`)

			// The link opened again shows the verified state.
			tb.Open(inst.FragmentLink(srv.URL, success, cancel))
			tb.WaitURL(`/bank-account/`)
			tb.WantText("This bank account is verified.")
			tb.Accessible()
			tb.Axe()

			refused := s.InstantSource("222222226", railsim.AccountClosed)
			tb.Open(refused.FragmentLink(srv.URL, success, cancel))
			tb.WaitURL(`/bank-account/`)
			tb.WantText("Deposit refused by the bank", "Your bank refused the deposit", "Return to Acme Books")
			tb.Accessible()
			tb.Axe()
		})
	}
}

func TestBrowserHostedInstantWithoutJavaScript(t *testing.T) {
	s := webtest.NewHostedSetup(t).LocalOnly()
	inst := s.InstantSource("222222226", "123498765")
	code := s.H.Code(s.Key, inst.Src)
	srv, shop := s.H.Live(), webtest.NewShopSite(t)

	tb := webtest.NewTab(t, webtest.WithoutJavaScript)
	if status := tb.Open(srv.URL + inst.Path("successUrl="+url.QueryEscape(shop.URL("127.0.0.1")+"/done"))); status != 200 {
		tb.Fatalf("direct route without JavaScript: %d", status)
	}
	tb.WantText("over FedNow")
	tb.Fill("Code from the $0.01 deposit", " "+code[:3]+" "+code[3:]+" ")
	tb.Click("button", "Verify account")
	tb.WaitURL(`/done\?funding_source_id=` + inst.Src + `&status=Verified$`)
}
