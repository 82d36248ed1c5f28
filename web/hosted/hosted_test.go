package hosted_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// wrongAmounts is a pair that cannot match right.
func wrongAmounts(right [2]string) [2]string {
	if right[0] == "0.98" || right[1] == "0.98" {
		return [2]string{"0.99", "0.99"}
	}
	return [2]string{"0.98", "0.98"}
}

func amountsForm(a [2]string) url.Values { return url.Values{"amount1": {a[0]}, "amount2": {a[1]}} }

func attemptsLeft(t *testing.T, s *webtest.HostedSetup) float64 {
	t.Helper()
	v, _ := th.WantOK(t, s.H.Get("/v2/funding-source/"+s.Src, s.Key))["verification"].(map[string]any)
	n, _ := v["attempts_remaining"].(float64)
	return n
}

func TestHostedPageStates(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t) // clock: Monday 2026-11-02 15:04 UTC
	h := s.H

	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "Deposits not sent yet", "Acme Books has not sent",
		"•••• 6789", "JPMorgan Chase", `action="/bank-account/`+s.PK+"/"+s.User+"/"+s.Src+`/cancel?`)

	th.WantOK(t, h.Initiate(s.Key, s.Src))
	body := webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "Confirm your bank account", "Acme Books", "Checking •••• 6789",
		"today, Monday, November 2, 2026", "<strong>3</strong> attempts remaining", "November 12, 2026",
		`<label for="amount1">First deposit</label>`, `<label for="amount2">Second deposit</label>`,
		`aria-describedby="amount-hint"`, "12 means $0.12", `role="alert"`)
	if strings.Contains(body, "123456789") {
		t.Error("the page shows the full account number")
	}

	// Failed: three wrong pairs.
	wrong := wrongAmounts(h.Amounts(s.Key, s.Src))
	webtest.WantPage(t, h.Submit(s.Path(webtest.OkQuery()), amountsForm(wrong)), 422, "don&#39;t match the deposits. You have 2 attempts left.",
		"<strong>2</strong> attempts remaining")
	webtest.WantPage(t, h.Submit(s.Path(webtest.OkQuery()), amountsForm(wrong)), 422, "You have 1 attempt left.")
	webtest.WantPage(t, h.Submit(s.Path(webtest.OkQuery()), amountsForm(wrong)), 422, "Verification locked", "too many times")
	if ev := h.Events("funding_source.verification_failed"); len(ev) != 1 {
		t.Errorf("verification_failed events = %d, want 1", len(ev))
	}
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "Verification locked", "Ask Acme Books to send new deposits")

	// Expired: a new initiation left past its expiry (before the sweeper runs).
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	h.Clock.Advance(10*24*time.Hour + time.Second)
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "Deposits expired", "sent too long ago")
	if n, err := h.Funding.ExpireDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	webtest.WantPage(t, h.Page(s.Path("")), 200, "Deposits expired")

	// Verified: a third initiation, then the right pair.
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	right := h.Amounts(s.Key, s.Src)
	th.WantOK(t, h.Post("/v2/funding-source/verify", s.Key, th.VerifyBody(s.Src, "["+right[0]+","+right[1]+"]")))
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200, "Bank account verified",
		`href="https://shop.example/done?order=7&amp;funding_source_id=`+s.Src+`&amp;status=Verified"`)
	webtest.WantPage(t, h.Page(s.Path("")), 200, "Bank account verified", "You can close this page")
}

func TestHostedVerifySuccessRedirectsAndFiresEvent(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	right := h.Amounts(s.Key, s.Src)

	// Amounts as typed from a statement: cents without a point, either order.
	typed := [2]string{strings.TrimPrefix(right[1], "0."), "$" + right[0]}
	r := h.Submit(s.Path(webtest.OkQuery()), amountsForm(typed))
	if r.Code != http.StatusSeeOther {
		t.Fatalf("right pair: %d, want 303\n%s", r.Code, r.Body)
	}
	want := "https://shop.example/done?order=7&funding_source_id=" + s.Src + "&status=Verified"
	if got := r.Header.Get("Location"); got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+s.Src, s.Key))["status"]; got != "Verified" {
		t.Errorf("status after the page = %v", got)
	}
	ev := h.Events("funding_source.verified")
	if len(ev) != 1 || ev[0]["funding_source_id"] != s.Src || ev[0]["status"] != "Verified" {
		t.Errorf("verified events = %v", ev)
	}
	// Posting again (a double submit) continues to successUrl; nothing more happens.
	if r := h.Submit(s.Path(webtest.OkQuery()), amountsForm(typed)); r.Code != http.StatusSeeOther || r.Header.Get("Location") != want {
		t.Errorf("second post: %d %q", r.Code, r.Header.Get("Location"))
	}
	webtest.WantPage(t, h.Submit(s.Path(""), amountsForm(typed)), 200, "Bank account verified", "You can close this page")
	if n := len(h.Events("funding_source.verified")); n != 1 {
		t.Errorf("verified events after a second post = %d", n)
	}
}

func TestHostedWrongAndMalformedAmountsShareTheAPIsAttempts(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	right := h.Amounts(s.Key, s.Src)

	// A malformed amount is an input error; it uses no attempt and keeps what was typed.
	for _, tc := range []struct{ a1, a2, field, msg string }{
		{"", right[1], "amount1", "Enter the amount of this deposit."},
		{right[0], "1.50", "amount2", "Each deposit is between 0.01 and 0.99"},
		{"abc", right[1], "amount1", "like 0.12, or just the cents, like 12"},
	} {
		body := webtest.WantPage(t, h.Submit(s.Path(webtest.OkQuery()), url.Values{"amount1": {tc.a1}, "amount2": {tc.a2}}), 422,
			`id="`+tc.field+`-error"`, tc.msg, `aria-describedby="amount-hint `+tc.field+`-error"`, `aria-invalid="true"`,
			`value="`+tc.a2+`"`)
		if strings.Count(body, `aria-invalid="true"`) != 1 {
			t.Errorf("%s: not exactly one input marked invalid", tc.field)
		}
	}
	if n := attemptsLeft(t, s); n != 3 {
		t.Errorf("attempts after malformed input = %v, want 3", n)
	}

	// One wrong guess on the page and one on the API: the same counter.
	webtest.WantPage(t, h.Submit(s.Path(""), amountsForm(wrongAmounts(right))), 422, "attempts left")
	if n := attemptsLeft(t, s); n != 2 {
		t.Errorf("attempts after a wrong page guess = %v, want 2", n)
	}
	th.WantError(t, h.Post("/v2/funding-source/verify", s.Key, th.VerifyBody(s.Src, th.WrongPair(right))), 400, "verification_failed")
	webtest.WantPage(t, h.Page(s.Path("")), 200, "<strong>1</strong> attempt remaining")
}

func TestHostedCancel(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	r := h.Submit(strings.Replace(s.Path(webtest.OkQuery()), "?", "/cancel?", 1), url.Values{})
	if r.Code != http.StatusSeeOther || r.Header.Get("Location") != "https://shop.example/cart?funding_source_id="+s.Src {
		t.Fatalf("cancel: %d Location %q\n%s", r.Code, r.Header.Get("Location"), r.Body)
	}
	// Without a cancelUrl there is no Cancel button, and posting anyway is refused.
	body := webtest.WantPage(t, h.Page(s.Path("successUrl="+url.QueryEscape("https://shop.example/done"))), 200)
	if strings.Contains(body, `id="cancel"`) {
		t.Error("Cancel shown without a cancelUrl")
	}
	r = h.Submit(s.Path("")+"/cancel", url.Values{})
	webtest.WantPage(t, r, 400, "This link cannot be used", "cancelUrl")
	if r.Header.Get("Location") != "" {
		t.Errorf("refused cancel redirected to %q", r.Header.Get("Location"))
	}
}

func TestHostedInvalidLinksAreAllTheSame404(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	other := h.Merchant("Other Shop")
	otherUser := h.Customer(other.Sandbox.SecretKey)
	otherSrc := h.Source(other.Sandbox.SecretKey, otherUser, "555555555")
	sameMerchantUser := h.Customer(s.Key)
	removed := h.Source(s.Key, s.User, "222222222")
	th.WantOK(t, h.Post("/v2/accounts/delete", s.Key, `{"funding_source_id":"`+removed+`"}`))
	prod := h.Production(h.Merchant("Live Shop"))

	paths := map[string]string{
		"unknown public key":          "/bank-account/pk_test_nope/" + s.User + "/" + s.Src,
		"secret key as public key":    "/bank-account/" + s.Key + "/" + s.User + "/" + s.Src,
		"other merchant's key":        "/bank-account/" + other.Sandbox.PublicKey + "/" + s.User + "/" + s.Src,
		"other merchant's source":     "/bank-account/" + s.PK + "/" + s.User + "/" + otherSrc,
		"other customer of merchant":  "/bank-account/" + s.PK + "/" + sameMerchantUser + "/" + s.Src,
		"unknown customer":            "/bank-account/" + s.PK + "/cus_nope/" + s.Src,
		"unknown source":              "/bank-account/" + s.PK + "/" + s.User + "/fs_nope",
		"removed source":              "/bank-account/" + s.PK + "/" + s.User + "/" + removed,
		"production key, sandbox ids": "/bank-account/" + prod.PublicKey + "/" + s.User + "/" + s.Src,
	}
	var first string
	for name, p := range paths {
		body := webtest.WantPage(t, h.Page(p+"?"+webtest.OkQuery()), 404, "This link is not valid")
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("%s: the 404 page differs from another case's, telling which part was wrong", name)
		}
		// Posting to an invalid link is the same 404, not a verification.
		webtest.WantPage(t, h.Submit(p, url.Values{"amount1": {"0.01"}, "amount2": {"0.02"}}), 404, "This link is not valid")
	}
}

func TestHostedRedirectValidation(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	refused := []string{
		"javascript:alert(1)", "data:text/html,hi", "//evil.example/x", `https://shop.example\@evil.example`,
		`https:\\evil.example`, "https://user:pw@shop.example/", "https://shop.example@evil.example/",
		"/relative", "ftp://shop.example/", "https://shop.example/%0a x",
	}
	for _, target := range refused {
		for _, param := range []string{"successUrl", "cancelUrl"} {
			r := h.Page(s.Path(param + "=" + url.QueryEscape(target)))
			webtest.WantPage(t, r, 400, "This link cannot be used", param+" was refused")
			if r.Header.Get("Location") != "" {
				t.Errorf("%s=%q: redirected", param, target)
			}
		}
	}
	// With origins listed, only those.
	webtest.WantPage(t, h.Page(s.Path("successUrl="+url.QueryEscape("http://localhost:3000/ok"))), 400, "not one of the merchant")
	webtest.WantPage(t, h.Page(s.Path(webtest.OkQuery())), 200)
	// A sandbox that allowed none sends customers only to this computer:
	// anyone can sign up for sandbox keys, so its links are no open redirect.
	if _, err := h.Merchants.RemoveRedirectOrigin(context.Background(), s.Scope, "https://shop.example", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"https://shop.example/done", "https://evil.example/", "http://localhost.evil.example/"} {
		for _, param := range []string{"successUrl", "cancelUrl"} {
			webtest.WantPage(t, h.Page(s.Path(param+"="+url.QueryEscape(target))), 400, "only to this computer")
		}
	}
	for _, target := range []string{"http://localhost:3000/ok", "http://127.0.0.1:8080/done", "http://[::1]:3000/"} {
		webtest.WantPage(t, h.Page(s.Path("successUrl="+url.QueryEscape(target)+"&cancelUrl="+url.QueryEscape(target))), 200)
	}
	r := h.Submit(s.Path("cancelUrl="+url.QueryEscape("https://evil.example/")), nil)
	if r.Header.Get("Location") != "" {
		t.Errorf("Cancel redirected off this computer: %s", r.Header.Get("Location"))
	}
}

// TestHostedSandboxBanner: a sandbox link says so; a production one does not.
func TestHostedSandboxBanner(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	webtest.WantPage(t, s.H.Page(s.Path("")), 200, `id="sandbox-banner"`, "No real deposits")
	m := s.H.Merchant("Live Shop")
	keys := s.H.Production(m)
	user := s.H.Customer(keys.SecretKey)
	src := s.H.Source(keys.SecretKey, user, "987654321")
	if body := webtest.WantPage(t, s.H.Page("/bank-account/"+keys.PublicKey+"/"+user+"/"+src), 200); strings.Contains(body, "sandbox-banner") {
		t.Error("a production page shows the sandbox banner")
	}
}

func TestHostedProductionRedirectRules(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Live Shop")
	keys := h.Production(m)
	user := h.Customer(keys.SecretKey)
	src := h.Source(keys.SecretKey, user, "123456789")
	path := "/bank-account/" + keys.PublicKey + "/" + user + "/" + src + "?successUrl="
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}

	webtest.WantPage(t, h.Page(path+url.QueryEscape("https://shop.example/done")), 400, "is not one of the merchant")
	if _, err := h.Merchants.AllowRedirectOrigin(context.Background(), scope, "https://shop.example", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	webtest.WantPage(t, h.Page(path+url.QueryEscape("https://shop.example/done")), 200, "Deposits not sent yet")
	webtest.WantPage(t, h.Page(path+url.QueryEscape("http://shop.example/done")), 400, "must use https")
	webtest.WantPage(t, h.Page(path+url.QueryEscape("https://evil.example/done")), 400, "not one of the merchant")
	// The sandbox list is separate.
	if o, _ := h.Merchants.RedirectOrigins(context.Background(), tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}); len(o) != 0 {
		t.Errorf("sandbox origins = %v", o)
	}
}

func TestHostedHeaders(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.Development, config.Production} {
		s := webtest.NewHostedSetup(t, func(c *config.Config) { c.Mode = mode })
		th.WantOK(t, s.H.Initiate(s.Key, s.Src))
		for name, r := range map[string]*th.Response{
			"form":    s.H.Page(s.Path(webtest.OkQuery())),
			"invalid": s.H.Page("/bank-account/pk_test_x/cus_x/fs_x"),
			"index":   s.H.Page("/"),
			"refused": s.H.Page(s.Path("successUrl=javascript:alert(1)")),
		} {
			hd := r.Header
			csp := hd.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("%s %s: CSP %q lacks %q", mode, name, csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("%s %s: CSP allows inline script: %q", mode, name, csp)
			}
			for k, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
				if got := hd.Get(k); got != want {
					t.Errorf("%s %s: %s = %q, want %q", mode, name, k, got, want)
				}
			}
			if hsts := hd.Get("Strict-Transport-Security"); (mode == config.Production) != strings.HasPrefix(hsts, "max-age=") {
				t.Errorf("%s %s: Strict-Transport-Security = %q", mode, name, hsts)
			}
		}
		// The form may end at the link's return origin (browsers apply form-action to the redirect).
		if csp := s.H.Page(s.Path(webtest.OkQuery())).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://shop.example https://shop.example;") &&
			!strings.Contains(csp, "form-action 'self' https://shop.example;") {
			t.Errorf("form-action of the form page: %q", csp)
		}
	}
}

func TestHostedRefusesCrossOriginPosts(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	h := s.H
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	right := h.Amounts(s.Key, s.Src)
	for name, hd := range map[string]map[string]string{
		"cross-site fetch metadata": {"Sec-Fetch-Site": "cross-site"},
		"same-site fetch metadata":  {"Sec-Fetch-Site": "same-site"},
		"foreign Origin":            {"Sec-Fetch-Site": "", "Origin": "https://evil.example"},
	} {
		r := h.Submit(s.Path(webtest.OkQuery()), amountsForm(right), hd)
		webtest.WantPage(t, r, 403, "This form was sent from another site")
		if r.Header.Get("Location") != "" {
			t.Errorf("%s: redirected", name)
		}
		webtest.WantPage(t, h.Submit(strings.Replace(s.Path(webtest.OkQuery()), "?", "/cancel?", 1), url.Values{}, hd), 403)
	}
	if n := attemptsLeft(t, s); n != 3 {
		t.Errorf("attempts after refused posts = %v", n)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+s.Src, s.Key))["status"]; got != "Unverified" {
		t.Errorf("status after refused cross-site posts = %v", got)
	}
	// The page's own origin (no fetch metadata, Origin matching Host) is accepted.
	r := h.Submit(s.Path(webtest.OkQuery()), amountsForm(right), map[string]string{"Sec-Fetch-Site": "", "Origin": "http://example.com"})
	if r.Code != http.StatusSeeOther {
		t.Errorf("same-origin post by Origin header: %d\n%s", r.Code, r.Body)
	}
}

func TestHostedRateLimits(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t, func(c *config.Config) { c.HostedSubmitsPerSource, c.HostedSubmitsPerIP = 4, 6 })
	h := s.H
	bad := url.Values{"amount1": {"x"}, "amount2": {"y"}} // input errors: no attempt used
	from := func(ip string) map[string]string { return map[string]string{"remote": ip + ":5000"} }
	th.WantOK(t, h.Initiate(s.Key, s.Src))

	// Per source: 4, then 429 from any address.
	for i := 0; i < 4; i++ {
		webtest.WantPage(t, h.Submit(s.Path(""), bad, from("198.51.100.1")), 422)
	}
	r := h.Submit(s.Path(""), bad, from("198.51.100.2"))
	webtest.WantPage(t, r, 429, "Too many attempts")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Refilled over time.
	h.Clock.Advance(3 * time.Minute)
	webtest.WantPage(t, h.Submit(s.Path(""), bad, from("198.51.100.2")), 422)

	// Per IP: 6 across many sources, then 429; X-Forwarded-For is not trusted
	// without TRUSTED_PROXIES, so it cannot buy more.
	for i := 0; i < 6; i++ {
		src := h.Source(s.Key, s.User, fmt.Sprintf("40000001%d", i))
		th.WantOK(t, h.Initiate(s.Key, src))
		p := "/bank-account/" + s.PK + "/" + s.User + "/" + src
		hd := from("203.0.113.9")
		hd["X-Forwarded-For"] = fmt.Sprintf("10.0.0.%d", i+1)
		webtest.WantPage(t, h.Submit(p, bad, hd), 422)
	}
	src := h.Source(s.Key, s.User, "499999999")
	th.WantOK(t, h.Initiate(s.Key, src))
	webtest.WantPage(t, h.Submit("/bank-account/"+s.PK+"/"+s.User+"/"+src, bad, from("203.0.113.9")), 429)
	webtest.WantPage(t, h.Submit("/bank-account/"+s.PK+"/"+s.User+"/"+src, bad, from("203.0.113.10")), 422)
}

// TestHostedForgedLinksCannotLockOutTheCustomer: posts that name a real
// source id through a made-up link are refused as invalid links and spend
// only their IP's allowance; the customer's own link keeps its source's
// whole allowance.
func TestHostedForgedLinksCannotLockOutTheCustomer(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t, func(c *config.Config) { c.HostedSubmitsPerSource, c.HostedSubmitsPerIP = 4, 3 })
	h := s.H
	bad := url.Values{"amount1": {"x"}, "amount2": {"y"}}
	from := func(ip string) map[string]string { return map[string]string{"remote": ip + ":5000"} }
	th.WantOK(t, h.Initiate(s.Key, s.Src))
	other := h.Merchant("Mallory")
	forged := []string{
		"/bank-account/pk_sandbox_madeup/" + s.User + "/" + s.Src,
		"/bank-account/" + s.PK + "/cus_guessed/" + s.Src,
		"/bank-account/" + other.Sandbox.PublicKey + "/" + s.User + "/" + s.Src,
	}
	// Ten addresses, each up to its own allowance, every forged link and
	// the cancel form too: far more posts than the source allows.
	for i := range 10 {
		ip := fmt.Sprintf("198.51.100.%d", i+1)
		for j, p := range forged {
			if j == 2 {
				p += "/cancel?cancelUrl=" + url.QueryEscape("https://shop.example/cart")
			}
			webtest.WantPage(t, h.Submit(p, bad, from(ip)), 404, "This link is not valid")
		}
		// The forged posts spent this address's allowance.
		webtest.WantPage(t, h.Submit(forged[0], bad, from(ip)), 429, "Too many attempts")
	}
	// The customer's link still has the source's four submissions.
	for i := range 4 {
		webtest.WantPage(t, h.Submit(s.Path(""), bad, from(fmt.Sprintf("203.0.113.%d", i+1))), 422)
	}
	webtest.WantPage(t, h.Submit(s.Path(""), bad, from("203.0.113.9")), 429, "Too many attempts")
}

func TestHostedTrustedProxySetsClientIP(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t, func(c *config.Config) {
		c.HostedSubmitsPerSource, c.HostedSubmitsPerIP, c.TrustedProxies = 100, 1, []string{"192.0.2.0/24"}
	})
	bad := url.Values{"amount1": {"x"}, "amount2": {"y"}}
	th.WantOK(t, s.H.Initiate(s.Key, s.Src))
	via := func(client string) map[string]string {
		return map[string]string{"remote": "192.0.2.10:443", "X-Forwarded-For": client}
	}
	webtest.WantPage(t, s.H.Submit(s.Path(""), bad, via("198.51.100.7")), 422)
	webtest.WantPage(t, s.H.Submit(s.Path(""), bad, via("198.51.100.8")), 422)
	webtest.WantPage(t, s.H.Submit(s.Path(""), bad, via("198.51.100.7")), 429)
}

func TestHostedIndexAndScript(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	webtest.WantPage(t, h.Page("/"), 200, `<script src="/static/js/hosted.js" defer></script>`, "Open the verification link", "<noscript>")
	r := h.Do(th.Req{Method: http.MethodGet, Path: "/static/js/hosted.js"})
	if r.Code != 200 || !strings.Contains(string(r.Body), "/bank-account/") || !strings.Contains(r.Header.Get("Content-Type"), "javascript") {
		t.Errorf("hosted.js: %d %s", r.Code, r.Header.Get("Content-Type"))
	}
}
