package web_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/webhook"
)

// dash is a browser without a browser: it keeps the dashboard's cookies
// and sends forms through the real engine.
type dash struct {
	t       *testing.T
	h       *harness
	cookies map[string]*http.Cookie
	remote  string
}

func newDash(h *harness) *dash {
	return &dash{t: h.T.(*testing.T), h: h, cookies: map[string]*http.Cookie{}, remote: "192.0.2.10:5000"}
}

func (d *dash) do(method, path string, form url.Values, header map[string]string) *th.Response {
	d.t.Helper()
	if form == nil {
		return d.send(method, path, nil, header)
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	maps.Copy(h, header)
	return d.send(method, path, strings.NewReader(form.Encode()), h)
}

// send sends body with the client's cookies and keeps the cookies set.
func (d *dash) send(method, path string, body io.Reader, header map[string]string) *th.Response {
	d.t.Helper()
	r := httptest.NewRequest(method, path, body)
	r.RemoteAddr = d.remote
	for k, v := range header {
		r.Header.Set(k, v)
	}
	for _, c := range d.cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	d.h.Engine.ServeHTTP(w, r)
	res := w.Result()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(d.cookies, c.Name)
		} else {
			d.cookies[c.Name] = c
		}
	}
	return &th.Response{Code: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
}

func (d *dash) get(path string) *th.Response { return d.do(http.MethodGet, path, nil, nil) }

func (d *dash) post(path string, form url.Values) *th.Response {
	return d.do(http.MethodPost, path, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
}

// follow gets the page a 303 points at.
func (d *dash) follow(p *th.Response) *th.Response {
	d.t.Helper()
	if p.Code != http.StatusSeeOther {
		d.t.Fatalf("got %d, want a 303\n%s", p.Code, p.Body)
	}
	return d.get(p.Header.Get("Location"))
}

func (d *dash) signIn(email, password string) *th.Response {
	return d.post("/dashboard/sign-in", url.Values{"email": {email}, "password": {password}})
}

// signedIn returns a dashboard client signed in as a new merchant.
func signedIn(t *testing.T, h *harness, name string) (*dash, string) {
	m := h.Merchant(name)
	d := newDash(h)
	if p := d.signIn(m.Merchant.Email, "correct horse battery"); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard" {
		t.Fatalf("sign in: %d %s", p.Code, p.Header.Get("Location"))
	}
	return d, m.Sandbox.SecretKey
}

func TestDashboardCookieFlags(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.Mode{config.Development, config.Production} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, func(c *config.Config) { c.Mode = mode })
			d := newDash(h)
			p := d.post("/dashboard/sign-up", url.Values{"name": {"Acme"}, "email": {"a@acme.example"}, "password": {"correct horse battery"}})
			wantPage(t, p, http.StatusOK, "Your new secret key")
			c := d.cookies["fundsource_session"]
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
	h := newHarness(t)
	h.Merchant("Acme Books")
	d := newDash(h)
	for _, c := range []struct {
		name, email, password, want string
	}{
		{"", "x@example.com", "correct horse battery", "name"},
		{"Shop", "not-an-email", "correct horse battery", "email"},
		{"Shop", "acme.books@example.com", "correct horse battery", "already exists"},
		{"Shop", "y@example.com", "eleven char", "at least 12 characters"},
		{"Shop", "y@example.com", strings.Repeat("p", 73), "at most 72 bytes"},
	} {
		p := d.post("/dashboard/sign-up", url.Values{"name": {c.name}, "email": {c.email}, "password": {c.password}})
		wantPage(t, p, http.StatusUnprocessableEntity, c.want)
		if strings.Contains(string(p.Body), c.password) {
			t.Errorf("the typed password is echoed back")
		}
		if d.cookies["fundsource_session"] != nil {
			t.Fatalf("a refused sign-up started a session")
		}
	}
	if n := h.Count("merchants"); n != 1 {
		t.Errorf("merchants = %d after refused sign-ups", n)
	}
}

func TestDashboardSignInIsLimitedPerEmailAndIP(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.SignInSlowdown = 300 * time.Millisecond })
	h.Merchant("Acme Books")
	attacker := newDash(h)
	attacker.remote = "203.0.113.66:1"
	for i := 0; i < h.Cfg.SignInAttemptsPerEmail; i++ {
		wantPage(t, attacker.signIn("acme.books@example.com", "wrong password"), http.StatusUnauthorized, "don&#39;t match")
	}
	// The attacker's address is stopped for this email, even with the right password…
	p := attacker.signIn("Acme.Books@example.com ", "correct horse battery")
	wantPage(t, p, http.StatusTooManyRequests, "Too many attempts")
	if ra, err := strconv.Atoi(p.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", p.Header.Get("Retry-After"))
	}
	// …but the merchant, from their own address, is not locked out.
	merchant := newDash(h)
	merchant.remote = "192.0.2.99:1"
	if p := merchant.signIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("the merchant was locked out by another address's attempts: %d", p.Code)
	}
	h.Clock.Advance(15 * time.Minute) // the whole allowance is back
	if p := attacker.signIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("after the wait: %d", p.Code)
	}

	// Many addresses at one email: once the email's allowance from all
	// addresses together is spent, attempts are slowed, never refused.
	for i := 0; i < h.Cfg.SignInAttemptsPerEmail*20; i++ {
		bot := newDash(h)
		bot.remote = fmt.Sprintf("198.18.%d.%d:1", i/200, i%200)
		bot.signIn("acme.books@example.com", "wrong password")
	}
	start := time.Now()
	wantPage(t, newDash(h).signIn("acme.books@example.com", "wrong password"), http.StatusUnauthorized, "don&#39;t match")
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("an attempt past the email's allowance was not slowed")
	}
	start = time.Now()
	if p := merchant.signIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther || time.Since(start) < 300*time.Millisecond {
		t.Errorf("the merchant during the flood: %d after %s, want a slowed success", p.Code, time.Since(start))
	}

	// One address trying many emails.
	d2 := newDash(h)
	d2.remote = "198.51.100.7:1"
	for i := 0; i < h.Cfg.SignInAttemptsPerIP; i++ {
		d2.signIn(fmt.Sprintf("nobody%d@example.com", i), "whatever password")
	}
	wantPage(t, d2.signIn("acme.books@example.com", "correct horse battery"), http.StatusTooManyRequests)
	// Sign-ups count against the same address.
	p = d2.post("/dashboard/sign-up", url.Values{"name": {"Bot"}, "email": {"bot@example.com"}, "password": {"correct horse battery"}})
	wantPage(t, p, http.StatusTooManyRequests, "Too many attempts")
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
	h := newHarness(t, func(c *config.Config) { c.SignInAttemptsPerEmail = 1000 })
	h.Merchant("Acme Books")
	signUp := func(remote string) *th.Response {
		d := newDash(h)
		d.remote = remote
		return d.post("/dashboard/sign-up", url.Values{"name": {"Probe"}, "email": {"acme.books@example.com"}, "password": {"correct horse battery"}})
	}
	for i := range h.Cfg.SignInAttemptsPerIP {
		wantPage(t, signUp(fmt.Sprintf("[2001:db8:7:7::%x]:1", i+1)), http.StatusUnprocessableEntity, "already exists")
	}
	for _, remote := range []string{"[2001:db8:7:7::ffff]:1", "[2001:db8:7:7:1:2:3:4]:1"} {
		body := wantPage(t, signUp(remote), http.StatusTooManyRequests, "Too many attempts")
		if strings.Contains(body, "already exists") {
			t.Errorf("a limited sign-up still says whether the email has an account")
		}
	}
	wantPage(t, signUp("[2001:db8:7:8::1]:1"), http.StatusUnprocessableEntity, "already exists")
	wantPage(t, signUp("192.0.2.77:1"), http.StatusUnprocessableEntity, "already exists")
	if n := h.Count("merchants"); n != 1 {
		t.Errorf("merchants = %d, want only the first", n)
	}
}

func TestDashboardSignInRedirectsOnlyWithinTheDashboard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.Merchant("Acme Books")
	p := newDash(h).get("/dashboard/customers?q=a%20b")
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
		d := newDash(h)
		p := d.post("/dashboard/sign-in", url.Values{"email": {"acme.books@example.com"}, "password": {"correct horse battery"}, "next": {next}})
		if p.Code != http.StatusSeeOther || p.Header.Get("Location") != want {
			t.Errorf("next %q: %d %q, want %q", next, p.Code, p.Header.Get("Location"), want)
		}
	}
	// A signed-out post goes to sign in, not back to the post.
	if p := newDash(h).post("/dashboard/keys/roll", url.Values{}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("signed-out post: %d %q", p.Code, p.Header.Get("Location"))
	}
}

func TestDashboardSignInStartsAFreshSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, _ := signedIn(t, h, "Acme Books")
	h.Merchant("Other Shop")
	before := a.cookies["fundsource_session"].Value
	if p := a.signIn("other.shop@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", p.Code)
	}
	if a.cookies["fundsource_session"].Value == before {
		t.Error("signing in kept the old session cookie")
	}
	wantPage(t, a.get("/dashboard"), http.StatusOK, "Welcome, Other Shop")
	// A forged or foreign cookie is no session.
	a.cookies["fundsource_session"].Value = strings.Repeat("A", 60)
	if p := a.get("/dashboard"); p.Code != http.StatusSeeOther {
		t.Errorf("forged cookie: %d", p.Code)
	}
}

func TestDashboardEnvironmentSwitch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.Merchant("Acme Books")
	d := newDash(h)
	d.signIn(m.Merchant.Email, "correct horse battery")
	h.Customer(m.Sandbox.SecretKey)

	p := d.follow(d.post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/customers"}}))
	wantPage(t, p, http.StatusOK, "Production is not activated", "Sandbox: test data only", "C0 L")
	live := h.Production(m)
	p = d.follow(d.post("/dashboard/environment", url.Values{"env": {"production"}, "next": {"/dashboard/customers/cus_x?y=1"}}))
	wantPage(t, p, http.StatusOK, "Now showing production data.", `id="env-current" class="env-badge env-live">Production`, "No customers in Production yet")
	if strings.Contains(string(p.Body), "Sandbox: test data only") {
		t.Error("the sandbox banner shows in production")
	}
	wantPage(t, d.get("/dashboard"), http.StatusOK, live.PublicKey, "sk_live_…"+live.SecretKey[len(live.SecretKey)-4:])
	if p := d.post("/dashboard/environment", url.Values{"env": {"staging"}}); p.Code != http.StatusSeeOther {
		t.Errorf("unknown environment: %d", p.Code)
	}
	wantPage(t, d.get("/dashboard"), http.StatusOK, live.PublicKey)
}

func TestDashboardRollKeyShowsTheNewKeyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, old := signedIn(t, h, "Acme Books")
	th.WantOK(t, h.Get("/v2/customers", old)) // now in the key cache
	p := d.post("/dashboard/keys/roll", url.Values{})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard" {
		t.Fatalf("roll: %d to %q, want a 303 to /dashboard (POST/redirect/GET)", p.Code, p.Header.Get("Location"))
	}
	// The redirect's cookie, as someone who copied it would replay it.
	replay := map[string]*http.Cookie{}
	maps.Copy(replay, d.cookies)
	p = d.follow(p)
	wantPage(t, p, http.StatusOK, "Your new secret key")
	secret := regexp.MustCompile(`sk_test_[A-Za-z0-9]{40,}`).FindString(string(p.Body))
	d.cookies = replay
	if again := d.get("/dashboard"); again.Code != http.StatusOK || strings.Contains(string(again.Body), "Your new secret key") ||
		regexp.MustCompile(`sk_test_[A-Za-z0-9]{40,}`).Match(again.Body) {
		t.Errorf("replaying the redirect's cookie: %d, shows the secret again", again.Code)
	}
	if secret == "" || secret == old {
		t.Fatalf("new secret %q", secret)
	}
	th.WantError(t, h.Get("/v2/customers", old), http.StatusUnauthorized, "unauthorized")
	th.WantOK(t, h.Get("/v2/customers", secret))
	if home := d.get("/dashboard"); strings.Contains(string(home.Body), secret) || !strings.Contains(string(home.Body), "sk_test_…"+secret[len(secret)-4:]) {
		t.Error("the home page shows the whole secret after the roll, or not its hint")
	}
	// Reloading the page after the roll is a GET: the key stays the same.
	th.WantOK(t, h.Get("/v2/customers", secret))
}

func TestDashboardWebhookSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	wantPage(t, d.follow(d.post("/dashboard/webhooks/test", url.Values{})), http.StatusOK, "No webhook URL is registered")

	p := d.post("/dashboard/webhooks", url.Values{"url": {"ftp://files.example/hook"}})
	wantPage(t, p, http.StatusUnprocessableEntity, `value="ftp://files.example/hook"`, `aria-invalid="true"`)
	p = d.follow(d.post("/dashboard/webhooks", url.Values{"url": {"https://hooks.example/a"}}))
	wantPage(t, p, http.StatusOK, "Webhook URL saved", `value="https://hooks.example/a"`, "whsec_••••")
	reg := th.WantOK(t, h.Get("/v2/webhooks", key))
	if reg["webhook_url"] != "https://hooks.example/a" || strings.Contains(string(p.Body), reg["secret"].(string)) {
		t.Errorf("after saving: %v (the secret must stay hidden until revealed)", reg["webhook_url"])
	}
	wantPage(t, d.post("/dashboard/webhooks/secret/reveal", url.Values{}), http.StatusOK, reg["secret"].(string))
	rolled := d.post("/dashboard/webhooks/secret/roll", url.Values{})
	newSecret := th.WantOK(t, h.Get("/v2/webhooks", key))["secret"].(string)
	wantPage(t, rolled, http.StatusOK, newSecret, "The previous secret also signs until")
	if newSecret == reg["secret"] {
		t.Error("roll kept the secret")
	}
	p = d.follow(d.post("/dashboard/webhooks", url.Values{"url": {"https://hooks.example/b"}}))
	wantPage(t, p, http.StatusOK, `value="https://hooks.example/b"`)
	wantPage(t, d.follow(d.post("/dashboard/webhooks/delete", url.Values{})), http.StatusOK, "Webhook URL deleted", "No webhook URL yet")
	th.WantError(t, h.Get("/v2/webhooks", key), http.StatusNotFound, "webhook_not_found")
}

func TestDashboardDeliveryLogAndResend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	failing := th.NewReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	user := h.Customer(key) // before any webhook: not sent
	h.RegisterWebhook(key, failing.URL())
	src := h.Source(key, user, "123456789")
	h.Deliver()

	p := d.get("/dashboard/webhooks")
	wantPage(t, p, http.StatusOK, "funding_source.created", "retrying", "503", "customer.created", "not sent")
	evID := regexp.MustCompile(`/dashboard/events/(evt_[a-z0-9]+)">funding_source.created`).FindStringSubmatch(string(p.Body))
	if evID == nil {
		t.Fatal("no link to the event")
	}
	ev := d.get("/dashboard/events/" + evID[1])
	wantPage(t, ev, http.StatusOK, "retrying", "503", failing.URL(), "&#34;funding_source_id&#34;: &#34;"+src)
	wantPage(t, d.follow(d.post("/dashboard/events/"+evID[1]+"/resend", url.Values{})), http.StatusOK, "Queued for delivery")
	if n := h.Deliver(); n != 1 {
		t.Errorf("resend made %d deliveries due, want 1", n)
	}

	// Another merchant sees none of it.
	other, _ := signedIn(t, h, "Other Shop")
	wantPage(t, other.get("/dashboard/events/"+evID[1]), http.StatusNotFound, "Not found")
	wantPage(t, other.post("/dashboard/events/"+evID[1]+"/resend", url.Values{}), http.StatusNotFound)
	if p := other.get("/dashboard/webhooks"); strings.Contains(string(p.Body), evID[1]) {
		t.Error("another merchant's log shows the event")
	}
}

func TestDashboardListsSearchAndPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	var first string
	for i := 0; i < 30; i++ {
		u := th.WantOK(t, h.Post("/v2/customers", key, fmt.Sprintf(`{"first_name":"Pat%d","last_name":"Lee","email":"pat%d@lee.example"}`, i, i)))["user_id"].(string)
		if i == 0 {
			first = u
		}
		h.Clock.Advance(time.Millisecond)
	}
	p := d.get("/dashboard/customers")
	wantPage(t, p, http.StatusOK, "Pat29 Lee", `rel="next"`)
	if n := strings.Count(string(p.Body), `<a href="/dashboard/customers/cus_`); n != 25 {
		t.Errorf("first page rows = %d, want 25", n)
	}
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(string(p.Body))[1]
	p2 := d.get(strings.ReplaceAll(next, "&amp;", "&"))
	wantPage(t, p2, http.StatusOK, "Pat0 Lee", "First page")
	if n := strings.Count(string(p2.Body), `<a href="/dashboard/customers/cus_`); n != 5 || strings.Contains(string(p2.Body), `rel="next"`) {
		t.Errorf("second page rows = %d", n)
	}
	for q, want := range map[string]int{"pat7@": 1, "PAT1": 11, first: 1, "%": 0, "_": 0, "lee.example": 25} {
		p := d.get("/dashboard/customers?q=" + url.QueryEscape(q))
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
		p := d.get("/dashboard/funding-sources" + query)
		got := regexp.MustCompile(`/dashboard/funding-sources/(fs_[a-z0-9]+)"`).FindAllStringSubmatch(string(p.Body), -1)
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d", query, len(got), len(want))
		}
	}
	wantPage(t, d.get("/dashboard/funding-sources?status=bogus"), http.StatusBadRequest, "There is no status filter")
	wantPage(t, d.get("/dashboard/customers?q="+strings.Repeat("x", 101)), http.StatusBadRequest, "at most 100")

	// Remove from the dashboard: gone from the live list, shown as removed.
	wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+a+"/remove", url.Values{})), http.StatusOK, "Funding source removed", "was removed")
	p = d.get("/dashboard/funding-sources?status=removed")
	if !strings.Contains(string(p.Body), a) || strings.Contains(string(d.get("/dashboard/funding-sources").Body), a) {
		t.Error("removed source in the wrong list")
	}
	wantPage(t, d.post("/dashboard/funding-sources/"+a+"/initiate", url.Values{}), http.StatusNotFound)
	wantPage(t, d.get("/dashboard/customers/"+first), http.StatusOK, "Removed", "Verification pending")
}

func TestDashboardInitiateLimitsAndSandboxAmounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+src+"/initiate", url.Values{})), http.StatusOK, "Micro-deposits sent")
	right := h.Amounts(key, src)
	wantPage(t, d.get("/dashboard/funding-sources/"+src), http.StatusOK, "$"+right[0]+" and $"+right[1], "3</strong> attempts remaining")
	// A second initiation while one is pending is refused by the rules,
	// shown as a message, not an error page.
	wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+src+"/initiate", url.Values{})), http.StatusOK, "role=\"alert\"")
	if n := h.Count("micro_deposits"); n != 1 {
		t.Errorf("micro_deposits = %d", n)
	}
}

func TestDashboardRedirectOrigins(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, _ := signedIn(t, h, "Acme Books")
	wantPage(t, d.get("/dashboard/settings"), http.StatusOK, "No origins yet")
	p := d.post("/dashboard/settings/redirect-origins", url.Values{"origin": {"javascript:alert(1)"}})
	wantPage(t, p, http.StatusUnprocessableEntity, `aria-invalid="true"`, "javascript:alert(1)")
	p = d.follow(d.post("/dashboard/settings/redirect-origins", url.Values{"origin": {"HTTPS://Shop.Example:443"}}))
	wantPage(t, p, http.StatusOK, "Added https://shop.example.", `<span class="mono">https://shop.example</span>`)
	m, err := h.Merchants.MerchantByEmail(t.Context(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	origins, _ := h.Merchants.RedirectOrigins(t.Context(), tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox})
	if len(origins) != 1 || origins[0] != "https://shop.example" {
		t.Errorf("origins = %v", origins)
	}
	wantPage(t, d.follow(d.post("/dashboard/settings/redirect-origins/remove", url.Values{"origin": {"https://shop.example"}})), http.StatusOK, "Removed https://shop.example.", "No origins yet")
	wantPage(t, d.follow(d.post("/dashboard/settings/redirect-origins/remove", url.Values{"origin": {"https://shop.example"}})), http.StatusOK, "not on the list")
}

func TestDashboardRefusesCrossSiteFormsAndHugeBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	p := d.do(http.MethodPost, "/dashboard/keys/roll", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	wantPage(t, p, http.StatusForbidden, "This form was sent from another site")
	p = d.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {"acme.books@example.com"}, "password": {"correct horse battery"}},
		map[string]string{"Origin": "https://evil.example"})
	wantPage(t, p, http.StatusForbidden)
	th.WantOK(t, h.Get("/v2/customers", key)) // the key was not rolled
	big := url.Values{"url": {strings.Repeat("a", 20<<10)}}
	if p := d.post("/dashboard/webhooks", big); p.Code >= 500 {
		t.Errorf("huge form: %d", p.Code)
	}
}

// TestDashboardDisabledEndpointBanner: the dashboard says an endpoint is
// backing off or disabled, and its button enables it again.
func TestDashboardDisabledEndpointBanner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	rc := th.NewReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	h.RegisterWebhook(key, rc.URL())
	body := wantPage(t, d.get("/dashboard/webhooks"), http.StatusOK)
	if strings.Contains(body, "disabled-banner") || strings.Contains(body, "backoff-banner") {
		t.Fatal("a healthy endpoint shows a warning")
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
	d.signIn("acme.books@example.com", "correct horse battery") // the session idled out meanwhile
	wantPage(t, d.get("/dashboard/webhooks"), http.StatusOK, `id="disabled-banner"`, "This endpoint is disabled", "Enable and deliver held events")
	wantPage(t, d.follow(d.post("/dashboard/webhooks/enable", url.Values{})), http.StatusOK, "Endpoint enabled")
	if s := th.WantOK(t, h.Get("/v2/webhooks", key)); s["status"] != "enabled" {
		t.Errorf("after the button: %s", th.MustJSON(s))
	}
}

func TestDashboardStartsAnInstantVerification(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, key := signedIn(t, h, "Acme Books")
	user := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)
	wantPage(t, d.get("/dashboard/funding-sources/"+src), http.StatusOK, "Send micro-deposits", "Send an instant $0.01 deposit")
	p := wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+src+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"Instant deposit sent", "over RTP", "Sandbox code: <strong>"+h.Code(key, src)+"</strong>")
	if strings.Contains(p, "Simulate return") {
		t.Error("an instant deposit offers a simulated ACH return")
	}
	refused := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "9900000003")))["funding_source_id"].(string)
	wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+refused+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		"The bank refused the instant deposit (AC03)")
	far := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456780")))["funding_source_id"].(string)
	wantPage(t, d.follow(d.post("/dashboard/funding-sources/"+far+"/initiate", url.Values{"method": {"instant"}})), http.StatusOK,
		`role="alert"`, "No instant rail reaches this bank")
}
