package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
	"github.com/playwright-community/playwright-go"
)

// open opens the action's disclosure (the confirmation step) by its summary.
func open(t *testing.T, tb *webtest.Tab, summary string) {
	t.Helper()
	if err := tb.Page.Locator("summary", playwright.PageLocatorOptions{HasText: summary}).Click(); err != nil {
		tb.Fatalf("open %q: %v", summary, err)
	}
}

// TestBrowserDashboardPaymentActions: with JavaScript off, a payment's
// page retries a debit of 13.91 that came back R01 (its retry settles),
// reverses the settled retry with a reason, cancels a pending debit,
// simulates a return with a code from a select wide enough for its
// options, and shows a refusal in the API's words; each action opens
// first and moves nothing until its button is pressed.
func TestBrowserDashboardPaymentActions(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	src := h.VerifiedSource(key, user, "222222222")
	orig := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"13.91"`, "debit")))["payment_id"].(string)
	webtest.SettleSandbox(t, h)

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			checkPage := tb.PageChecks()
			check := func() {
				t.Helper()
				tb.InsideCards()
				checkPage()
			}
			other := h.VerifiedSource(key, user, fmt.Sprintf("3333%05d", width))
			pending := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(other, `"7.00"`, "debit")))["payment_id"].(string)
			returned := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(other, `"8.00"`, "debit")))["payment_id"].(string)

			// Cancel: the button is inside a closed disclosure.
			tb.Open(srv.URL + "/dashboard/payments/" + pending)
			check()
			if ok, _ := tb.Page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Cancel the payment"}).IsVisible(); ok {
				tb.Error("the cancel button shows before its confirmation is opened")
			}
			if n, _ := tb.Page.Locator("#retry-action, #reverse-action").Count(); n != 0 {
				tb.Errorf("a pending sandbox debit offers %d retry or reverse actions", n)
			}
			open(t, tb, "Cancel this payment")
			tb.WantText("will not be sent")
			if width == 1280 {
				tb.Shot(os.Getenv("DASHBOARD_SCREENSHOTS"), "dashboard-payment-actions")
			}
			tb.Click("button", "Cancel the payment")
			tb.WaitURL(`/dashboard/payments/` + pending + `$`)
			tb.WantText("Payment canceled.")
			if got := th.WantOK(t, h.Get("/v2/payments/"+pending, key))["status"]; got != "canceled" {
				tb.Errorf("status after Cancel = %v", got)
			}
			if n, _ := tb.Page.Locator("#payment-actions").Count(); n != 0 {
				tb.Error("a canceled payment still offers actions")
			}

			// Simulate return: the select's options are shown whole.
			tb.Open(srv.URL + "/dashboard/payments/" + returned)
			open(t, tb, "Sandbox: simulate a return")
			check()
			// At 1280 px every option fits the closed select; at 390 px
			// (where the picker shows the options whole) the chosen one
			// does, whichever it is.
			for _, code := range []string{"R01", "R10", "R29"} {
				tb.Choose("#payment-return-code", code)
				if cut := tb.Eval(`((wide) => { const s = document.querySelector('#payment-return-code'), cs = getComputedStyle(s);
					const c = document.createElement('canvas').getContext('2d'); c.font = cs.font;
					const texts = wide ? [...s.options].map(o => o.text) : [s.options[s.selectedIndex].text];
					const w = Math.max(...texts.map(t => c.measureText(t).width));
					return Math.max(0, Math.ceil(w - (s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight))));
				})(` + fmt.Sprint(width >= 1280) + `)`); fmt.Sprint(cut) != "0" {
					tb.Errorf("with %s chosen the return code select cuts its text by %v px", code, cut)
				}
			}
			tb.Choose("#payment-return-code", "R03")
			tb.Click("button", "Simulate the return")
			tb.WaitURL(`/dashboard/payments/` + returned + `$`)
			tb.WantText("came back with R03", "R03 No account")
			if got := th.WantOK(t, h.Get("/v2/payments/"+returned, key)); got["status"] != "failed" || got["failure_code"] != "R03" {
				tb.Errorf("after the simulated return: %s", th.MustJSON(got))
			}
		})
	}

	// Retry the R01 debit; its retry settles; reverse that one.
	tb := webtest.NewTab(t, webtest.WithViewport(1280, 900), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Open(srv.URL + "/dashboard/payments/" + orig)
	tb.WantText("R01")
	if n, _ := tb.Page.Locator("#cancel-action, #reverse-action, #return-action").Count(); n != 0 {
		tb.Errorf("a failed debit offers %d cancel, reverse or return actions", n)
	}
	open(t, tb, "Retry this debit")
	tb.Click("button", "Present the debit again")
	tb.WaitURL(`/dashboard/payments/` + orig + `$`)
	tb.WantText("The debit is presented again as pay_")
	list := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+src, key))["data"].([]any)
	retry := list[0].(map[string]any)
	if retry["retry_of"] != orig || retry["status"] != "pending" {
		tb.Fatalf("newest payment after Retry: %s", th.MustJSON(retry))
	}
	id := retry["payment_id"].(string)
	tb.WantText(id)
	webtest.SettleSandbox(t, h)
	if got := th.WantOK(t, h.Get("/v2/payments/"+id, key))["status"]; got != "processed" {
		tb.Fatalf("the retry of 13.91 = %v, want processed", got)
	}
	tb.Open(srv.URL + "/dashboard/payments/" + id)
	open(t, tb, "Reverse this payment")
	tb.Choose("#reverse-reason", "wrong_amount")
	tb.Click("button", "Reverse the payment")
	tb.WaitURL(`/dashboard/payments/` + id + `$`)
	tb.WantText("Reversal pay_", "wrong amount")
	got := th.WantOK(t, h.Get("/v2/payments/"+id, key))
	if rev, _ := got["reversal"].(map[string]any); rev == nil || rev["reason"] != "wrong_amount" {
		tb.Errorf("after Reverse: %s", th.MustJSON(got))
	}
	if n, _ := tb.Page.Locator("#reverse-action").Count(); n != 0 {
		tb.Error("a reversed payment still offers Reverse")
	}

	// A refusal reads as the API's message: the page's form, sent after
	// the payment changed, and a reason that is none.
	late := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"6.00"`, "debit")))["payment_id"].(string)
	tb.Open(srv.URL + "/dashboard/payments/" + late)
	open(t, tb, "Cancel this payment")
	webtest.SettleSandbox(t, h) // processed meanwhile: no longer canceled
	again := h.Post("/v2/payments/"+late+"/cancel", key, "")
	var refusal struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(again.Body, &refusal); err != nil || again.Code != http.StatusConflict || refusal.Error.Message == "" {
		tb.Fatalf("a cancel of a processed payment through the API: %d %s", again.Code, again.Body)
	}
	msg := refusal.Error.Message
	tb.Click("button", "Cancel the payment")
	tb.WaitURL(`/dashboard/payments/` + late + `$`)
	tb.WantText(strings.TrimSuffix(msg, "."))

	d := webtest.NewDash(h)
	if r := d.SignIn(m.Merchant.Email, "correct horse battery"); r.Code != http.StatusSeeOther {
		tb.Fatalf("sign in: %d", r.Code)
	}
	r := d.Post("/dashboard/payments/"+orig+"/reverse", url.Values{"reason": {"because"}})
	page := d.Follow(r)
	if page.Code != http.StatusOK || !strings.Contains(string(page.Body), "Reason must be &#34;duplicate&#34;") {
		tb.Errorf("a reverse with an unknown reason: %d\n%s", page.Code, page.Body)
	}
}

// TestBrowserDashboardSimulatesNotificationOfChange: a sandbox source's
// page applies a C01 with the corrected account number, and shows a
// code without the value it needs in the API's words.
func TestBrowserDashboardSimulatesNotificationOfChange(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	src := h.VerifiedSource(key, h.Customer(key), "222222222")

	tb := webtest.NewTab(t, webtest.WithViewport(390, 900), webtest.WithoutJavaScript)
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Open(srv.URL + "/dashboard/funding-sources/" + src)
	open(t, tb, "Sandbox: simulate a notification of change")
	tb.Accessible()
	tb.FitsWidth()
	tb.Choose("#change-code", "C01")
	tb.Click("button", "Simulate notification of change")
	tb.WaitURL(`/dashboard/funding-sources/` + src + `$`)
	refusal := tb.Text(".error-summary, [role=alert]")
	if !strings.Contains(strings.ToLower(refusal), "account_number") && !strings.Contains(strings.ToLower(refusal), "account number") {
		tb.Errorf("a C01 without the account number: %q", refusal)
	}
	open(t, tb, "Sandbox: simulate a notification of change")
	tb.Choose("#change-code", "C01")
	tb.Fill("Corrected account number", "987654321")
	tb.Click("button", "Simulate notification of change")
	tb.WaitURL(`/dashboard/funding-sources/` + src + `$`)
	tb.WantText("notification of change C01 was applied", "•••• 4321")
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+src, key)); !strings.Contains(th.MustJSON(got), "4321") {
		tb.Errorf("source after the C01: %s", th.MustJSON(got))
	}
	twin := tb.AxeTwin()
	twin.Open(tb.Page.URL())
	twin.Axe()
}
