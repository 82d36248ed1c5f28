package dashboard_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/webhook"
)

func TestDashboardCookieFlags(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.Development, config.Production} {
		t.Run(string(mode), func(t *testing.T) {
			h := webtest.NewHarness(t, func(c *config.Config) { c.Mode = mode })
			d := webtest.NewDash(h)
			p := d.Post("/dashboard/sign-up", url.Values{"name": {"Acme"}, "email": {"a@acme.example"}, "password": {"correct horse battery"}})
			webtest.WantPage(t, p, http.StatusOK, "Your new secret key")
			c := d.Cookies["fundsource_session"]
			if c == nil {
				t.Fatal("no session cookie")
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/dashboard" || c.Secure != (mode == config.Production) {
				t.Errorf("cookie = %+v", c)
			}
			if c.MaxAge != int(h.Cfg.DashboardSessionMaxAge.Seconds()) {
				t.Errorf("cookie Max-Age = %d", c.MaxAge)
			}
			if cc := p.Header.Get("Cache-Control"); cc != "no-store" || !strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Errorf("headers: %v", p.Header)
			}
			if (p.Header.Get("Strict-Transport-Security") != "") != (mode == config.Production) {
				t.Errorf("HSTS in %s: %q", mode, p.Header.Get("Strict-Transport-Security"))
			}
		})
	}
}

func TestDashboardSignUpRules(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	h.Merchant("Acme Books")
	d := webtest.NewDash(h)
	for _, c := range []struct {
		name, email, password, want string
	}{
		{"", "x@example.com", "correct horse battery", "name"},
		{"Shop", "not-an-email", "correct horse battery", "email"},
		{"Shop", "acme.books@example.com", "correct horse battery", "already exists"},
		{"Shop", "y@example.com", "eleven char", "at least 12 characters"},
		{"Shop", "y@example.com", strings.Repeat("p", 73), "at most 72 bytes"},
	} {
		p := d.Post("/dashboard/sign-up", url.Values{"name": {c.name}, "email": {c.email}, "password": {c.password}})
		webtest.WantPage(t, p, http.StatusUnprocessableEntity, c.want)
		if strings.Contains(string(p.Body), c.password) {
			t.Errorf("the typed password is echoed back")
		}
		if d.Cookies["fundsource_session"] != nil {
			t.Fatalf("a refused sign-up started a session")
		}
	}
	if n := h.Count("merchants"); n != 1 {
		t.Errorf("merchants = %d after refused sign-ups", n)
	}
}

func TestDashboardSignInIsLimitedPerEmailAndIP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.SignInSlowdown = 300 * time.Millisecond })
	h.Merchant("Acme Books")
	attacker := webtest.NewDash(h)
	attacker.Remote = "203.0.113.66:1"
	for i := 0; i < h.Cfg.SignInAttemptsPerEmail; i++ {
		webtest.WantPage(t, attacker.SignIn("acme.books@example.com", "wrong password"), http.StatusUnauthorized, "don&#39;t match")
	}
	// The attacker's address is stopped for this email, even with the right password…
	p := attacker.SignIn("Acme.Books@example.com ", "correct horse battery")
	webtest.WantPage(t, p, http.StatusTooManyRequests, "Too many attempts")
	if ra, err := strconv.Atoi(p.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", p.Header.Get("Retry-After"))
	}
	// …but the merchant, from their own address, is not locked out.
	merchant := webtest.NewDash(h)
	merchant.Remote = "192.0.2.99:1"
	if p := merchant.SignIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("the merchant was locked out by another address's attempts: %d", p.Code)
	}
	h.Clock.Advance(15 * time.Minute) // the whole allowance is back
	if p := attacker.SignIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("after the wait: %d", p.Code)
	}

	// Many addresses at one email: once the email's allowance from all
	// addresses together is spent, attempts are slowed, never refused.
	for i := 0; i < h.Cfg.SignInAttemptsPerEmail*20; i++ {
		bot := webtest.NewDash(h)
		bot.Remote = fmt.Sprintf("198.18.%d.%d:1", i/200, i%200)
		bot.SignIn("acme.books@example.com", "wrong password")
	}
	start := time.Now()
	webtest.WantPage(t, webtest.NewDash(h).SignIn("acme.books@example.com", "wrong password"), http.StatusUnauthorized, "don&#39;t match")
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("an attempt past the email's allowance was not slowed")
	}
	start = time.Now()
	if p := merchant.SignIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther || time.Since(start) < 300*time.Millisecond {
		t.Errorf("the merchant during the flood: %d after %s, want a slowed success", p.Code, time.Since(start))
	}

	// One address trying many emails.
	d2 := webtest.NewDash(h)
	d2.Remote = "198.51.100.7:1"
	for i := 0; i < h.Cfg.SignInAttemptsPerIP; i++ {
		d2.SignIn(fmt.Sprintf("nobody%d@example.com", i), "whatever password")
	}
	webtest.WantPage(t, d2.SignIn("acme.books@example.com", "correct horse battery"), http.StatusTooManyRequests)
	// Sign-ups count against the same address.
	p = d2.Post("/dashboard/sign-up", url.Values{"name": {"Bot"}, "email": {"bot@example.com"}, "password": {"correct horse battery"}})
	webtest.WantPage(t, p, http.StatusTooManyRequests, "Too many attempts")
	if n := h.Count("merchants"); n != 1 {
		t.Errorf("a limited sign-up made a merchant (%d)", n)
	}
}

// TestDashboardSignUpIsLimitedPerIP: sign-up keeps its honest "already
// exists" answer, but one client can ask it only as often as the per-IP
// allowance says; an IPv6 client counts as its /64, so taking a fresh
// address for each attempt does not reset it. Other networks are not
// affected.
func TestDashboardSignUpIsLimitedPerIP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t, func(c *config.Config) { c.SignInAttemptsPerEmail = 1000 })
	h.Merchant("Acme Books")
	signUp := func(remote string) *th.Response {
		d := webtest.NewDash(h)
		d.Remote = remote
		return d.Post("/dashboard/sign-up", url.Values{"name": {"Probe"}, "email": {"acme.books@example.com"}, "password": {"correct horse battery"}})
	}
	for i := range h.Cfg.SignInAttemptsPerIP {
		webtest.WantPage(t, signUp(fmt.Sprintf("[2001:db8:7:7::%x]:1", i+1)), http.StatusUnprocessableEntity, "already exists")
	}
	for _, remote := range []string{"[2001:db8:7:7::ffff]:1", "[2001:db8:7:7:1:2:3:4]:1"} {
		body := webtest.WantPage(t, signUp(remote), http.StatusTooManyRequests, "Too many attempts")
		if strings.Contains(body, "already exists") {
			t.Errorf("a limited sign-up still says whether the email has an account")
		}
	}
	webtest.WantPage(t, signUp("[2001:db8:7:8::1]:1"), http.StatusUnprocessableEntity, "already exists")
	webtest.WantPage(t, signUp("192.0.2.77:1"), http.StatusUnprocessableEntity, "already exists")
	if n := h.Count("merchants"); n != 1 {
		t.Errorf("merchants = %d, want only the first", n)
	}
}

func TestDashboardSignInRedirectsOnlyWithinTheDashboard(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	h.Merchant("Acme Books")
	p := webtest.NewDash(h).Get("/dashboard/customers?q=a%20b")
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/sign-in?next=%2Fdashboard%2Fcustomers%3Fq%3Da%2520b" {
		t.Fatalf("signed out: %d %q", p.Code, p.Header.Get("Location"))
	}
	for next, want := range map[string]string{
		"/dashboard/customers?q=a": "/dashboard/customers?q=a",
		"https://evil.example/":    "/dashboard",
		"//evil.example/dashboard": "/dashboard",
		"/dashboard\\@evil":        "/dashboard",
		"/dashboard/sign-out":      "/dashboard",
	} {
		d := webtest.NewDash(h)
		p := d.Post("/dashboard/sign-in", url.Values{"email": {"acme.books@example.com"}, "password": {"correct horse battery"}, "next": {next}})
		if p.Code != http.StatusSeeOther || p.Header.Get("Location") != want {
			t.Errorf("next %q: %d %q, want %q", next, p.Code, p.Header.Get("Location"), want)
		}
	}
	// A signed-out post goes to sign in, not back to the post.
	if p := webtest.NewDash(h).Post("/dashboard/keys/roll", url.Values{}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("signed-out post: %d %q", p.Code, p.Header.Get("Location"))
	}
}

func TestDashboardSignInStartsAFreshSession(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, _ := webtest.SignedIn(t, h, "Acme Books")
	h.Merchant("Other Shop")
	before := a.Cookies["fundsource_session"].Value
	if p := a.SignIn("other.shop@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", p.Code)
	}
	if a.Cookies["fundsource_session"].Value == before {
		t.Error("signing in kept the old session cookie")
	}
	webtest.WantPage(t, a.Get("/dashboard"), http.StatusOK, "Welcome, Other Shop")
	// A forged or foreign cookie is no session.
	a.Cookies["fundsource_session"].Value = strings.Repeat("A", 60)
	if p := a.Get("/dashboard"); p.Code != http.StatusSeeOther {
		t.Errorf("forged cookie: %d", p.Code)
	}
}

func TestDashboardEnvironmentSwitch(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	d := webtest.NewDash(h)
	d.SignIn(m.Merchant.Email, "correct horse battery")
	h.Customer(m.Sandbox.SecretKey)

	p := d.Follow(d.Post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/customers"}}))
	webtest.WantPage(t, p, http.StatusOK, "Production is not activated", "Sandbox: test data only", "C0 L")
	live := h.Production(m)
	p = d.Follow(d.Post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/customers/cus_x?y=1"}}))
	webtest.WantPage(t, p, http.StatusOK, "Now showing production data.", `id="env-current" class="env-badge env-live">Production`, "No customers in Production yet")
	if strings.Contains(string(p.Body), "Sandbox: test data only") {
		t.Error("the sandbox banner shows in production")
	}
	webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK, live.PublicKey, "sk_live_…"+live.SecretKey[len(live.SecretKey)-4:])
	if p := d.Post("/dashboard/environment", url.Values{"env": {"staging"}}); p.Code != http.StatusSeeOther {
		t.Errorf("unknown environment: %d", p.Code)
	}
	webtest.WantPage(t, d.Get("/dashboard"), http.StatusOK, live.PublicKey)
}

func TestDashboardRollKeyShowsTheNewKeyOnce(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, old := webtest.SignedIn(t, h, "Acme Books")
	th.WantOK(t, h.Get("/v2/customers", old)) // now in the key cache
	p := d.Post("/dashboard/keys/roll", url.Values{})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard" {
		t.Fatalf("roll: %d to %q, want a 303 to /dashboard (POST/redirect/GET)", p.Code, p.Header.Get("Location"))
	}
	// The redirect's cookie, as someone who copied it would replay it.
	replay := map[string]*http.Cookie{}
	maps.Copy(replay, d.Cookies)
	p = d.Follow(p)
	webtest.WantPage(t, p, http.StatusOK, "Your new secret key")
	secret := regexp.MustCompile(`sk_test_[A-Za-z0-9]{40,}`).FindString(string(p.Body))
	d.Cookies = replay
	if again := d.Get("/dashboard"); again.Code != http.StatusOK || strings.Contains(string(again.Body), "Your new secret key") ||
		regexp.MustCompile(`sk_test_[A-Za-z0-9]{40,}`).Match(again.Body) {
		t.Errorf("replaying the redirect's cookie: %d, shows the secret again", again.Code)
	}
	if secret == "" || secret == old {
		t.Fatalf("new secret %q", secret)
	}
	th.WantError(t, h.Get("/v2/customers", old), http.StatusUnauthorized, "unauthorized")
	th.WantOK(t, h.Get("/v2/customers", secret))
	if home := d.Get("/dashboard"); strings.Contains(string(home.Body), secret) || !strings.Contains(string(home.Body), "sk_test_…"+secret[len(secret)-4:]) {
		t.Error("the home page shows the whole secret after the roll, or not its hint")
	}
	// Reloading the page after the roll is a GET: the key stays the same.
	th.WantOK(t, h.Get("/v2/customers", secret))
}

func TestDashboardWebhookSettings(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/webhooks/test", url.Values{})), http.StatusOK, "No webhook URL is registered")

	p := d.Post("/dashboard/webhooks", url.Values{"url": {"ftp://files.example/hook"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, `value="ftp://files.example/hook"`, `aria-invalid="true"`)
	p = d.Follow(d.Post("/dashboard/webhooks", url.Values{"url": {"https://hooks.example/a"}}))
	webtest.WantPage(t, p, http.StatusOK, "Webhook URL saved", `value="https://hooks.example/a"`, "whsec_••••")
	reg := th.WantOK(t, h.Get("/v2/webhooks", key))
	if reg["webhook_url"] != "https://hooks.example/a" || strings.Contains(string(p.Body), reg["secret"].(string)) {
		t.Errorf("after saving: %v (the secret must stay hidden until revealed)", reg["webhook_url"])
	}
	webtest.WantPage(t, d.Post("/dashboard/webhooks/secret/reveal", url.Values{}), http.StatusOK, reg["secret"].(string))
	rolled := d.Post("/dashboard/webhooks/secret/roll", url.Values{})
	newSecret := th.WantOK(t, h.Get("/v2/webhooks", key))["secret"].(string)
	webtest.WantPage(t, rolled, http.StatusOK, newSecret, "The previous secret also signs until")
	if newSecret == reg["secret"] {
		t.Error("roll kept the secret")
	}
	p = d.Follow(d.Post("/dashboard/webhooks", url.Values{"url": {"https://hooks.example/b"}}))
	webtest.WantPage(t, p, http.StatusOK, `value="https://hooks.example/b"`)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/webhooks/delete", url.Values{})), http.StatusOK, "Webhook URL deleted", "No webhook URL yet")
	th.WantError(t, h.Get("/v2/webhooks", key), http.StatusNotFound, "webhook_not_found")
}

func TestDashboardDeliveryLogAndResend(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	failing := th.NewReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	user := h.Customer(key) // before any webhook: not sent
	h.RegisterWebhook(key, failing.URL())
	src := h.Source(key, user, "123456789")
	h.Deliver()

	p := d.Get("/dashboard/webhooks")
	webtest.WantPage(t, p, http.StatusOK, "funding_source.created", "retrying", "503", "customer.created", "not sent")
	evID := regexp.MustCompile(`/dashboard/events/(evt_[a-z0-9]+)">funding_source.created`).FindStringSubmatch(string(p.Body))
	if evID == nil {
		t.Fatal("no link to the event")
	}
	ev := d.Get("/dashboard/events/" + evID[1])
	webtest.WantPage(t, ev, http.StatusOK, "retrying", "503", failing.URL(), "&#34;funding_source_id&#34;: &#34;"+src)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/events/"+evID[1]+"/resend", url.Values{})), http.StatusOK, "Queued for delivery")
	if n := h.Deliver(); n != 1 {
		t.Errorf("resend made %d deliveries due, want 1", n)
	}

	// Another merchant sees none of it.
	other, _ := webtest.SignedIn(t, h, "Other Shop")
	webtest.WantPage(t, other.Get("/dashboard/events/"+evID[1]), http.StatusNotFound, "Not found")
	webtest.WantPage(t, other.Post("/dashboard/events/"+evID[1]+"/resend", url.Values{}), http.StatusNotFound)
	if p := other.Get("/dashboard/webhooks"); strings.Contains(string(p.Body), evID[1]) {
		t.Error("another merchant's log shows the event")
	}
}

func TestDashboardListsSearchAndPages(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	var first string
	for i := 0; i < 30; i++ {
		u := th.WantOK(t, h.Post("/v2/customers", key, fmt.Sprintf(`{"first_name":"Pat%d","last_name":"Lee","email":"pat%d@lee.example"}`, i, i)))["user_id"].(string)
		if i == 0 {
			first = u
		}
		h.Clock.Advance(time.Millisecond)
	}
	p := d.Get("/dashboard/customers")
	webtest.WantPage(t, p, http.StatusOK, "Pat29 Lee", `rel="next"`)
	if n := strings.Count(string(p.Body), `<a href="/dashboard/customers/cus_`); n != 25 {
		t.Errorf("first page rows = %d, want 25", n)
	}
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(string(p.Body))[1]
	p2 := d.Get(strings.ReplaceAll(next, "&amp;", "&"))
	webtest.WantPage(t, p2, http.StatusOK, "Pat0 Lee", "First page")
	if n := strings.Count(string(p2.Body), `<a href="/dashboard/customers/cus_`); n != 5 || strings.Contains(string(p2.Body), `rel="next"`) {
		t.Errorf("second page rows = %d", n)
	}
	for q, want := range map[string]int{"pat7@": 1, "PAT1": 11, first: 1, "%": 0, "_": 0, "lee.example": 25} {
		p := d.Get("/dashboard/customers?q=" + url.QueryEscape(q))
		if n := strings.Count(string(p.Body), `<a href="/dashboard/customers/cus_`); n != want {
			t.Errorf("search %q: %d rows, want %d", q, n, want)
		}
	}

	// Sources: search by last four and email, filter by status.
	a := h.Source(key, first, "111122223333")
	b := h.Source(key, first, "444455556666")
	th.WantOK(t, h.Initiate(key, b))
	for query, want := range map[string][]string{
		"?q=3333":                  {a},
		"?q=pat0%40lee":            {a, b},
		"?status=pending":          {b},
		"?status=unverified":       {a, b},
		"?status=verified":         {},
		"?q=6666&status=pending":   {b},
		"?q=6666&status=removed":   {},
		"?q=" + first + "&status=": {a, b},
	} {
		p := d.Get("/dashboard/funding-sources" + query)
		got := regexp.MustCompile(`/dashboard/funding-sources/(fs_[a-z0-9]+)"`).FindAllStringSubmatch(string(p.Body), -1)
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d", query, len(got), len(want))
		}
	}
	webtest.WantPage(t, d.Get("/dashboard/funding-sources?status=bogus"), http.StatusBadRequest, "There is no status filter")
	webtest.WantPage(t, d.Get("/dashboard/customers?q="+strings.Repeat("x", 101)), http.StatusBadRequest, "at most 100")

	// Remove from the dashboard: gone from the live list, shown as removed.
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+a+"/remove", url.Values{})), http.StatusOK, "Funding source removed", "was removed")
	p = d.Get("/dashboard/funding-sources?status=removed")
	if !strings.Contains(string(p.Body), a) || strings.Contains(string(d.Get("/dashboard/funding-sources").Body), a) {
		t.Error("removed source in the wrong list")
	}
	webtest.WantPage(t, d.Post("/dashboard/funding-sources/"+a+"/initiate", url.Values{}), http.StatusNotFound)
	webtest.WantPage(t, d.Get("/dashboard/customers/"+first), http.StatusOK, "Removed", "Verification pending")
}

func TestDashboardInitiateLimitsAndSandboxAmounts(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+src+"/initiate", url.Values{})), http.StatusOK, "Micro-deposits sent")
	right := h.Amounts(key, src)
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+src), http.StatusOK, "$"+right[0]+" and $"+right[1], "3</strong> attempts remaining")
	// A second initiation while one is pending is refused by the rules,
	// shown as a message, not an error page.
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+src+"/initiate", url.Values{})), http.StatusOK, "role=\"alert\"")
	if n := h.Count("micro_deposits"); n != 1 {
		t.Errorf("micro_deposits = %d", n)
	}
}

func TestDashboardRedirectOrigins(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, _ := webtest.SignedIn(t, h, "Acme Books")
	webtest.WantPage(t, d.Get("/dashboard/settings"), http.StatusOK, "No origins yet")
	p := d.Post("/dashboard/settings/redirect-origins", url.Values{"origin": {"javascript:alert(1)"}})
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, `aria-invalid="true"`, "javascript:alert(1)")
	p = d.Follow(d.Post("/dashboard/settings/redirect-origins", url.Values{"origin": {"HTTPS://Shop.Example:443"}}))
	webtest.WantPage(t, p, http.StatusOK, "Added https://shop.example.", `<span class="mono">https://shop.example</span>`)
	m, err := h.Merchants.MerchantByEmail(t.Context(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	origins, _ := h.Merchants.RedirectOrigins(t.Context(), tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox})
	if len(origins) != 1 || origins[0] != "https://shop.example" {
		t.Errorf("origins = %v", origins)
	}
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/settings/redirect-origins/remove", url.Values{"origin": {"https://shop.example"}})), http.StatusOK, "Removed https://shop.example.", "No origins yet")
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/settings/redirect-origins/remove", url.Values{"origin": {"https://shop.example"}})), http.StatusOK, "not on the list")
}

func TestDashboardRefusesCrossSiteFormsAndHugeBodies(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	p := d.Do(http.MethodPost, "/dashboard/keys/roll", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	webtest.WantPage(t, p, http.StatusForbidden, "This form was sent from another site")
	p = d.Do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {"acme.books@example.com"}, "password": {"correct horse battery"}},
		map[string]string{"Origin": "https://evil.example"})
	webtest.WantPage(t, p, http.StatusForbidden)
	th.WantOK(t, h.Get("/v2/customers", key)) // the key was not rolled
	big := url.Values{"url": {strings.Repeat("a", 20<<10)}}
	if p := d.Post("/dashboard/webhooks", big); p.Code >= 500 {
		t.Errorf("huge form: %d", p.Code)
	}
}

// TestDashboardDisabledEndpointBanner: the dashboard says an endpoint is
// backing off or disabled, and its button enables it again.
func TestDashboardDisabledEndpointBanner(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	rc := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	h.RegisterWebhook(key, rc.URL())
	body := webtest.WantPage(t, d.Get("/dashboard/webhooks"), http.StatusOK)
	if strings.Contains(body, "disabled-banner") || strings.Contains(body, "backoff-banner") {
		t.Fatal("a healthy endpoint shows a warning")
	}
	if !strings.Contains(body, "Healthy</span>") || !strings.Contains(body, `id="consecutive-failures">0<`) {
		t.Errorf("a healthy endpoint's health:\n%s", body)
	}
	// Three failures in a row: backing off, the count shown.
	if _, err := h.SQL().Exec(`UPDATE webhook_endpoints SET consecutive_failures = 3`); err != nil {
		t.Fatal(err)
	}
	if s := th.WantOK(t, h.Get("/v2/webhooks", key)); s["status"] != "backing_off" {
		t.Fatalf("after three failures: %s", th.MustJSON(s))
	}
	webtest.WantPage(t, d.Get("/dashboard/webhooks"), http.StatusOK, `id="backoff-banner"`, "Backing off</span>",
		`id="consecutive-failures">3<`)
	if _, err := h.SQL().Exec(`UPDATE webhook_endpoints SET consecutive_failures = 0`); err != nil {
		t.Fatal(err)
	}
	opts := webhook.DispatcherOptions{DisableAfter: time.Hour}
	th.WantOK(t, h.Post("/v2/webhooks/test", key, ""))
	for range 4 {
		if _, err := h.Dispatcher(opts).DeliverDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.Clock.Advance(40 * time.Minute)
	}
	if s := th.WantOK(t, h.Get("/v2/webhooks", key)); s["status"] != "disabled" {
		t.Fatalf("endpoint: %s", th.MustJSON(s))
	}
	d.SignIn("acme.books@example.com", "correct horse battery") // the session idled out meanwhile
	webtest.WantPage(t, d.Get("/dashboard/webhooks"), http.StatusOK, `id="disabled-banner"`, "This endpoint is disabled", "Enable and deliver held events",
		"Disabled</span>")
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/webhooks/enable", url.Values{})), http.StatusOK, "Endpoint enabled")
	if s := th.WantOK(t, h.Get("/v2/webhooks", key)); s["status"] != "enabled" {
		t.Errorf("after the button: %s", th.MustJSON(s))
	}
}

func TestDashboardStartsAnInstantVerification(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	webtest.WantPage(t, d.Get("/dashboard/funding-sources/"+src), http.StatusOK, "Send micro-deposits", "Send an instant $0.01 deposit")
	p := webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+src+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"Instant deposit sent", "over RTP", "Sandbox code: <strong>"+h.Code(key, src)+"</strong>")
	if strings.Contains(p, "Simulate return") {
		t.Error("an instant deposit offers a simulated ACH return")
	}
	refused := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "9900000003")))["funding_source_id"].(string)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+refused+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"The bank refused the instant deposit (AC03)")
	far := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456780")))["funding_source_id"].(string)
	webtest.WantPage(t, d.Follow(d.Post("/dashboard/funding-sources/"+far+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		`role="alert"`, "No instant rail reaches this bank")
}
