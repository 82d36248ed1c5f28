// Package dashboard is the merchant dashboard: sign-up and sign-in with
// server-side sessions, and pages for customers, funding sources,
// payments, webhooks, keys and settings. Pages are templ components fed
// small view structs (templates/dashboard); every write is a form post
// behind cross-origin protection and goes through the same domain
// services as the API.
//
// Sessions are rows; the cookie only names one. A session must be able to
// end on the server: sign-out, "sign out of all other sessions" and a
// password change delete rows, and a copied cookie then opens nothing. The
// gorilla/sessions cookie (signed and encrypted with keys derived from
// SESSION_KEYS) carries the session's 256-bit random id, the environment
// shown and flash messages; the database keeps only the id's SHA-256 with
// the merchant, when it began and was last seen, the IP address and the
// browser. Every request reads its row by primary key, so processes stay
// stateless, and records the last use at most once a minute; idle and
// absolute expiry are checked against those times. Rolling SESSION_KEYS
// ends every session at once.
//
// Sign-in and sign-up attempts share one allowance per client IP (per /64
// for IPv6) and one per email from one IP, so attempts from other
// addresses never lock a merchant out; attempts at one email from
// everywhere together are only slowed (SIGNIN_SLOWDOWN). An unknown email
// and a wrong password get the same answer after the same bcrypt work.
// Sign-up says honestly when an email already has an account; the per-IP
// allowance is what keeps that answer from testing a list of addresses.
//
// The dashboard adds only read models for people to the services the API
// uses: searches across customers and sources (customer.Service.Search,
// funding.Service.Search), the delivery log with each event's latest
// delivery and attempt in one query (webhook.Service.Log), and a source's
// event history through an expression index on the event data's
// funding_source_id, so it never scans the outbox. The activity pages
// list payments, subscriptions and events with the API's own list queries
// (status, direction and customer filters added to them), each page of
// payments named by its customers and bank accounts in one more read by
// primary key (funding.Service.Labels), and API requests from the
// request log (requestlog); the Test clocks page names each clock's
// newest customers and counts them in one read for all the clocks
// (customer.Service.OnClocks), and a list naming the clocks of its rows
// (customers, sources, payments, subscriptions, events, the delivery
// log) reads the merchant's clocks (at most testclock.MaxClocks) once, the subscriptions
// list after its sources' labels (funding.Service.Labels); Home's charts come from
// one aggregate read (overview) and are drawn on the server as SVG with a table each. The
// Security log pages through the audit log (audit.Service.List); every
// form action that changes a key, the webhook, a setting, the sessions or
// the password passes the signed-in merchant and the client's address to
// its service method as the audit actor.
package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"
	"github.com/gorilla/sessions"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/evidence"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/overview"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/dashboard"
	"github.com/fundsource/fundsource/web/surface"
)

// signInWindow is the time over which the sign-in allowances refill.
const signInWindow = 15 * time.Minute

// emailAloneFactor is how many more attempts an email gets from all
// addresses together than from one address.
const emailAloneFactor = 20

// signInLimits bound sign-in and sign-up attempts. The refusing limits
// are per client IP and per (email, IP): nobody can lock a merchant out
// from the merchant's own address. Per email alone, from any number of
// addresses, a much larger allowance only slows attempts down once spent.
type signInLimits struct {
	perIP, perEmailAtIP *surface.KeyLimiter
	perEmail            *surface.KeyLimiter // slows, never refuses
	slowdown            time.Duration       // the wait of an attempt past perEmail
}

// Deps are what the dashboard needs.
type Deps struct {
	Config    *config.Config
	Merchants *merchant.Service
	Customers *customer.Service
	Funding   *funding.Service
	Payments  *payment.Service
	// Consequences are the actions whose effects cross domains (a
	// removal, a sandbox return).
	Consequences *consequence.Service
	Webhooks     *webhook.Service
	Requests     *requestlog.Log
	Overview     *overview.Service
	Audit        *audit.Service
	// Evidence gathers a disputed payment's evidence.
	Evidence *evidence.Service
	// Originators show Settings the environment's originator; nil shows none.
	Originators *originator.Service
	// Answers are the bank's answers kept unmatched; nil shows none.
	Answers Answers
	// TestClocks are the sandbox's test clocks; nil shows none.
	TestClocks *testclock.Service
}

// Answers reads the bank's answers (returns, notifications of change)
// that matched none of the service's entries and wait for an operator.
type Answers interface {
	UnmatchedAnswersOfCompany(ctx context.Context, companyID string, limit int) ([]ach.UnmatchedAnswer, error)
}

// Surface is the dashboard's handlers.
type Surface struct {
	*surface.Shared
	cfg       *config.Config
	merchants *merchant.Service
	customers *customer.Service
	funding   *funding.Service
	payments  *payment.Service
	// consequences run the actions whose effects cross domains.
	consequences *consequence.Service
	webhooks     *webhook.Service
	requests     *requestlog.Log
	overview     *overview.Service
	audit        *audit.Service
	evidence     *evidence.Service
	// originators: nil shows no originator in Settings.
	originators *originator.Service
	answers     Answers            // nil: none shown
	clocks      *testclock.Service // nil: no clocks

	sessions    *sessions.CookieStore
	attempts    signInLimits
	logoUploads *surface.KeyLimiter // by merchant id
}

// New returns the dashboard on k.
func New(k *surface.Shared, d Deps) *Surface {
	return &Surface{Shared: k, cfg: d.Config, merchants: d.Merchants, customers: d.Customers, funding: d.Funding, payments: d.Payments, consequences: d.Consequences, webhooks: d.Webhooks, requests: d.Requests, overview: d.Overview, audit: d.Audit,
		evidence: d.Evidence, originators: d.Originators, answers: d.Answers, clocks: d.TestClocks, sessions: newSessionStore(d.Config),
		attempts: signInLimits{
			perIP:        surface.NewKeyLimiter(signInWindow, d.Config.SignInAttemptsPerIP),
			perEmailAtIP: surface.NewKeyLimiter(signInWindow, d.Config.SignInAttemptsPerEmail),
			perEmail:     surface.NewKeyLimiter(signInWindow, d.Config.SignInAttemptsPerEmail*emailAloneFactor),
			slowdown:     d.Config.SignInSlowdown,
		},
		logoUploads: surface.NewKeyLimiter(logoUploadWindow, logoUploadsPerWindow),
	}
}

// Mount adds the dashboard's routes to r. Pages call the same services as
// the API. Every form post is refused when it comes from another site, and
// is bounded in size.
func (s *Surface) Mount(r *gin.Engine) {
	forms := s.formPosts(components.MessagePage("This form was sent from another site",
		"For your safety the dashboard only accepts forms from its own pages. Go back to the dashboard and try again."))
	r.GET("/dashboard/sign-up", s.signUpPage)
	r.POST("/dashboard/sign-up", forms, s.signUp)
	r.GET("/dashboard/sign-in", s.signInPage)
	r.POST("/dashboard/sign-in", forms, s.signIn)
	r.POST("/dashboard/sign-out", forms, s.signOut)

	g := r.Group("/dashboard", forms, s.dashboardAuth)
	g.GET("", s.home)
	g.POST("/environment", s.switchEnvironment)
	g.POST("/keys/roll", s.rollKey)
	g.GET("/webhooks", s.webhooksPage)
	g.POST("/webhooks", s.setWebhook)
	g.POST("/webhooks/delete", s.deleteWebhookPage)
	g.POST("/webhooks/secret/reveal", s.revealWebhookSecret)
	g.POST("/webhooks/secret/roll", s.rollWebhookSecretPage)
	g.POST("/webhooks/test", s.testWebhookPage)
	g.POST("/webhooks/enable", s.enableWebhookPage)
	g.GET("/payments", s.paymentsPage)
	g.GET("/settlements.csv", s.settlementsCSV)
	g.GET("/payments/:id", s.paymentPage)
	g.GET("/payments/:id/evidence", s.evidencePage)
	g.GET("/subscriptions", s.subscriptionsPage)
	g.GET("/events", s.eventsPage)
	if s.requests != nil {
		g.GET("/requests", s.requestsPage)
	}
	g.GET("/events/:id", s.eventPage)
	g.POST("/events/:id/resend", s.resendEvent)
	g.GET("/customers", s.customersPage)
	g.GET("/customers/:id", s.customerPage)
	g.GET("/funding-sources", s.sourcesPage)
	g.GET("/funding-sources/:id", s.sourcePage)
	g.POST("/funding-sources/:id/initiate", s.initiateFromPage)
	g.POST("/funding-sources/:id/remove", s.removeFromPage)
	g.POST("/funding-sources/:id/sandbox/return", s.simulateDepositReturn)
	g.POST("/funding-sources/:id/sandbox/expire", s.simulateDepositExpiry)
	g.POST("/payments/:id/sandbox/return", s.simulatePaymentReturn)
	g.POST("/payments/:id/cancel", s.cancelPayment)
	g.POST("/payments/:id/retry", s.retryPayment)
	g.POST("/payments/:id/reverse", s.reversePayment)
	g.POST("/funding-sources/:id/sandbox/notification-of-change", s.simulateChange)
	g.POST("/subscriptions/:id/sandbox/advance", s.advanceSubscription)
	g.GET("/settings", s.settingsPage)
	g.POST("/settings/redirect-origins", s.addRedirectOrigin)
	g.POST("/settings/policies", s.setPolicies)
	g.POST("/settings/redirect-origins/remove", s.removeRedirectOrigin)
	g.POST("/settings/sessions/end-others", s.endOtherSessions)
	g.POST("/settings/password", s.changePassword)
	g.POST("/settings/brand", s.setBrand)
	g.GET("/security", s.securityPage)
	g.GET("/test-clocks", s.testClocksPage)
	g.POST("/test-clocks", s.createTestClock)
	g.POST("/test-clocks/:id/advance", s.advanceTestClock)
	g.POST("/test-clocks/:id/delete", s.deleteTestClock)
}

// formPosts guards the dashboard's form posts before anything else runs:
// a post from another site is refused with the problem page (whether or
// not it carries a session), and a post's body is bounded.
func (s *Surface) formPosts(problem templ.Component) gin.HandlerFunc {
	guard := s.CrossSiteGuard(problem)
	return func(c *gin.Context) {
		if c.Request.Method != http.MethodPost {
			c.Next()
			return
		}
		if c.FullPath() == brandPath {
			surface.BoundBody(c, maxBrandBody)
		} else {
			surface.BoundForm(c)
		}
		guard(c)
	}
}

// signInNotices are the messages the sign-in page shows for ?reason=.
var signInNotices = map[string]string{
	"expired":    "Your session expired. Sign in again to continue.",
	"signed-out": "You have been signed out.",
}

func (s *Surface) signUpPage(c *gin.Context) {
	s.Page(c, http.StatusOK, view.SignUp(view.AuthForm{}))
}

// signUp creates the merchant with its sandbox keys, signs it in, and
// shows the secret key once.
func (s *Surface) signUp(c *gin.Context) {
	v := view.AuthForm{Name: c.PostForm("name"), Email: c.PostForm("email")}
	if !s.allowAttempt(c, &v) {
		s.Page(c, http.StatusTooManyRequests, view.SignUp(v))
		return
	}
	created, err := s.merchants.Create(c.Request.Context(), v.Name, v.Email, c.PostForm("password"))
	if err != nil {
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidRequest {
			s.Fail(c, err)
			return
		}
		v.Error, v.ErrorField = sentence(e.Message), e.Param
		s.Page(c, http.StatusUnprocessableEntity, view.SignUp(v))
		return
	}
	if err := s.startSession(c, created.Merchant); err != nil {
		s.Fail(c, err)
		return
	}
	s.Log.InfoContext(c.Request.Context(), "merchant signed up", slog.String("merchant_id", created.Merchant.ID))
	s.renderHome(c, created.Sandbox.SecretKey)
}

func (s *Surface) signInPage(c *gin.Context) {
	s.Page(c, http.StatusOK, view.SignIn(view.AuthForm{
		Next: localNext(c.Query("next")), Notice: signInNotices[c.Query("reason")],
	}))
}

// signIn checks the password (attempts bounded per IP and per email) and
// starts a fresh session.
func (s *Surface) signIn(c *gin.Context) {
	v := view.AuthForm{Email: c.PostForm("email"), Next: localNext(c.PostForm("next"))}
	if !s.allowAttempt(c, &v) {
		s.Page(c, http.StatusTooManyRequests, view.SignIn(v))
		return
	}
	m, err := s.merchants.SignIn(c.Request.Context(), v.Email, c.PostForm("password"), c.ClientIP())
	if err != nil {
		if !errs.Is(err, errs.Unauthorized) {
			s.Fail(c, err)
			return
		}
		s.Log.InfoContext(c.Request.Context(), "dashboard sign-in refused",
			slog.String("request_id", surface.RequestID(c)), slog.String("client_ip", c.ClientIP()))
		s.Resolve(c, err)
		v.Error = "That email and password don't match an account."
		s.Page(c, http.StatusUnauthorized, view.SignIn(v))
		return
	}
	if err := s.startSession(c, m); err != nil {
		s.Fail(c, err)
		return
	}
	s.Redirect(c, v.Next)
}

// allowAttempt takes one sign-in or sign-up attempt from the client's IP
// (surface.ClientNetwork) and the typed email; when either has none left it sets the error and
// Retry-After and reports false.
func (s *Surface) allowAttempt(c *gin.Context, v *view.AuthForm) bool {
	ip, email, now := surface.ClientNetwork(c), strings.ToLower(strings.TrimSpace(v.Email)), s.Now()
	wait, ok := s.attempts.perIP.Allow(ip, now)
	if ok {
		wait, ok = s.attempts.perEmailAtIP.Allow(email+"\x00"+ip, now)
	}
	if ok {
		if _, fresh := s.attempts.perEmail.Allow(email, now); !fresh {
			// Many addresses at one email: slow them all, lock nobody out.
			select {
			case <-time.After(s.attempts.slowdown):
			case <-c.Request.Context().Done():
			}
		}
		return true
	}
	s.Resolve(c, surface.RateLimited("Too many sign-in attempts.", wait))
	mins := max(int((wait+time.Minute-1)/time.Minute), 1)
	v.Error = fmt.Sprintf("Too many attempts. Wait about %d %s and try again.", mins, components.Plural(mins, "minute", "minutes"))
	return false
}

// signOut ends the session on the server, then deletes the cookie.
func (s *Surface) signOut(c *gin.Context) {
	if id := s.cookieSessionID(c); id != "" {
		if err := s.merchants.EndSession(c.Request.Context(), id, c.ClientIP()); err != nil {
			s.Fail(c, err)
			return
		}
	}
	s.endSession(c)
	s.Redirect(c, "/dashboard/sign-in?reason=signed-out")
}

// sentence starts a message with a capital letter and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// frame is the frame of a signed-in page, with the messages queued for it.
func (s *Surface) frame(c *gin.Context, title, section string) view.Frame {
	in := current(c)
	ok, bad := s.takeFlashes(c)
	return view.Frame{
		Title: title, Section: section, Merchant: in.Merchant.Name, Email: in.Merchant.Email,
		Env: string(in.Scope.Env), CanProduction: in.Merchant.Can(tenant.Production),
		Path: c.Request.URL.RequestURI(), Notices: ok, Errors: bad,
	}
}

// Fail answers a failed dashboard request through the one error path: the
// 404 page for anything not found, the message of any other contract
// error, and a page naming the request id for the rest.
func (s *Surface) Fail(c *gin.Context, err error) {
	o := s.Resolve(c, err)
	if o.Gone {
		return
	}
	if o.Status == http.StatusNotFound {
		s.notFound(c)
		return
	}
	heading, text := "That didn't work", sentence(o.Message)
	if o.Status >= 500 {
		heading = "Something went wrong"
		text = "We could not complete this request. It has been logged as " + surface.RequestID(c) + "; please try again."
	}
	if _, in := c.Get(ctxSignedIn); !in {
		s.Page(c, o.Status, components.MessagePage(heading, text))
	} else {
		s.Page(c, o.Status, view.Problem(s.frame(c, heading, ""), heading, text))
	}
	c.Abort()
}

// notFound is the one 404 page of the dashboard: another merchant's
// object, the other environment's, and an unknown id all look the same.
func (s *Surface) notFound(c *gin.Context) {
	s.Resolve(c, errs.New(errs.NotFound, "Not found."))
	if _, in := c.Get(ctxSignedIn); !in {
		s.Page(c, http.StatusNotFound, components.NotFoundPage())
	} else {
		s.Page(c, http.StatusNotFound, view.NotFound(s.frame(c, "Not found", "")))
	}
	c.Abort()
}

// done finishes a form action: a message for the next page and a 303 to
// it. A refusal by the rules (no webhook URL included) becomes an error
// message there; a missing object the 404 page.
func (s *Surface) done(c *gin.Context, err error, okMsg, back string) {
	if err != nil {
		e, ok := errs.As(err)
		missing := ok && surface.StatusOf(e.Code) == http.StatusNotFound && e.Code != errs.WebhookNotFound
		if !ok || surface.StatusOf(e.Code) >= 500 || missing {
			s.Fail(c, err)
			return
		}
		s.flash(c, flashError, sentence(e.Message))
	} else if okMsg != "" {
		s.flash(c, flashOK, okMsg)
	}
	s.Redirect(c, back)
}

// home shows the overview, with the secret key a roll just made when the
// roll's redirect leads here.
func (s *Surface) home(c *gin.Context) { s.renderHome(c, s.takeNewSecret(c)) }

// renderHome shows the overview; newSecret is the secret key just created
// or rolled, shown this once.
func (s *Surface) renderHome(c *gin.Context, newSecret string) {
	in := current(c)
	ctx, scope := c.Request.Context(), in.Scope
	env, err := s.merchants.Environment(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	hint, err := s.merchants.SecretKeyHint(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	_, hookErr := s.webhooks.Get(ctx, scope)
	if hookErr != nil && !errs.Is(hookErr, errs.WebhookNotFound) {
		s.Fail(c, hookErr)
		return
	}
	one := paging.Page{Limit: 1}
	customers, _, err := s.customers.List(ctx, scope, one)
	if err != nil {
		s.Fail(c, err)
		return
	}
	sources, _, err := s.funding.Search(ctx, scope, funding.Filter{}, one)
	if err != nil {
		s.Fail(c, err)
		return
	}
	rates, err := s.payments.ReturnRates(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	held, err := s.payments.Held(ctx, &scope, 101)
	if err != nil {
		s.Fail(c, err)
		return
	}
	guard, err := s.payments.Guardrail(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	base := s.cfg.SandboxBaseURL
	if scope.Env == tenant.Production {
		base = s.cfg.ProductionBaseURL
	}
	v := view.Overview{
		APIBase: strings.TrimSuffix(base.String(), "/") + "/v2", PublicKey: env.PublicKey,
		SecretHint: hint.String(), KeyCreated: shortTime(hint.CreatedAt), NewSecret: newSecret,
		HasWebhook: hookErr == nil, HasCustomer: len(customers) > 0, HasSource: len(sources) > 0,
		ReturnRates: []view.ReturnRate{
			rateRow(codesLabel("Unauthorized", achcode.UnauthorizedCodes), rates.Unauthorized),
			rateRow(codesLabel("Administrative", achcode.AdministrativeCodes), rates.Administrative),
			rateRow("All returns", rates.Overall),
		},
	}
	if v.Balances, err = s.balances(ctx, scope); err != nil {
		s.Fail(c, err)
		return
	}
	v.Held = heldCount(len(held))
	twice, err := s.payments.ReversedThenReturned(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	if twice > 0 {
		v.ReversedThenReturned = strconv.Itoa(twice)
	}
	refunded, err := s.payments.RefundedThenReturned(ctx, scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	if refunded > 0 {
		v.RefundedThenReturned = strconv.Itoa(refunded)
	}
	v.RateBanner = rateBanner(rates)
	v.DebitsHeld = guard.HoldReason != ""
	if s.overview != nil {
		st, err := s.overview.Stats(ctx, scope)
		if err != nil {
			s.Fail(c, err)
			return
		}
		v.Charts = charts(st)
	}
	s.Page(c, http.StatusOK, view.Home(s.frame(c, "Home", "overview"), v))
}

// heldCount says how many payments wait for review; "" for none.
func heldCount(n int) string {
	switch {
	case n == 0:
		return ""
	case n == 1:
		return "1 payment"
	case n > 100:
		return "More than 100 payments"
	}
	return strconv.Itoa(n) + " payments"
}

// rateBanner names the rates at or past half their threshold, once the
// window holds enough debits for a rate to count.
func rateBanner(r payment.ReturnRates) string {
	if r.Overall.Debits < payment.MinRateDebits {
		return ""
	}
	var high []string
	for _, x := range []struct {
		name string
		rate payment.Rate
	}{{"unauthorized", r.Unauthorized}, {"administrative", r.Administrative}, {"overall", r.Overall}} {
		if x.rate.Warning() {
			high = append(high, fmt.Sprintf("%s %.2f%% (threshold %s%%)", x.name, 100*x.rate.Rate,
				strconv.FormatFloat(100*x.rate.Threshold, 'f', -1, 64)))
		}
	}
	return strings.Join(high, ", ")
}

// rateRow is a return rate as the home page shows it: judged against its
// threshold only once the window holds payment.MinRateDebits debits, as
// the hold on new debits is (below that, "too_few", with how many count).
func rateRow(name string, r payment.Rate) view.ReturnRate {
	level := "ok"
	switch {
	case r.Debits < payment.MinRateDebits:
		level = "too_few"
	case r.Exceeded():
		level = "exceeded"
	case r.Warning():
		level = "warning"
	}
	return view.ReturnRate{Name: name, Rate: fmt.Sprintf("%.2f%%", 100*r.Rate),
		Counts:    fmt.Sprintf("%d of %d debits", r.Returns, r.Debits),
		Threshold: strconv.FormatFloat(100*r.Threshold, 'f', -1, 64) + "%", Level: level,
		TooFew: fmt.Sprintf("Not enough debits yet (%d of %d)", r.Debits, payment.MinRateDebits)}
}

// codesLabel names a rate by the return codes it counts.
func codesLabel(name string, codes []string) string {
	return name + " (" + strings.Join(codes, " ") + ")"
}

// rollKey replaces the environment's secret key and redirects to the home
// page, which shows the new one once (POST/redirect/GET: reloading the
// page never rolls again).
func (s *Surface) rollKey(c *gin.Context) {
	in := current(c)
	secret, err := s.merchants.RollKey(c.Request.Context(), in.Scope, actor(c))
	if err != nil {
		s.Fail(c, err)
		return
	}
	s.Log.InfoContext(c.Request.Context(), "secret key rolled from the dashboard",
		slog.String("merchant_id", in.Scope.MerchantID), slog.String("environment", string(in.Scope.Env)))
	masked, err := s.merchants.HoldReveal(c.Request.Context(), in.sessionID, secret)
	if err != nil {
		s.Fail(c, err)
		return
	}
	in.session.Values[sessNewSecret] = masked
	if err := in.session.Save(c.Request, c.Writer); err != nil {
		s.Fail(c, err)
		return
	}
	s.Redirect(c, "/dashboard")
}

// switchEnvironment shows the other environment's data from now on;
// production only once an operator activated it. The merchant lands on
// the same section, not the same object (ids differ per environment).
func (s *Surface) switchEnvironment(c *gin.Context) {
	in := current(c)
	env := tenant.Environment(c.PostForm("env"))
	back := sectionOf(localNext(c.PostForm("next")))
	if !in.Merchant.Can(env) {
		s.done(c, errs.New(errs.PermissionDenied, "Production is not activated for this account yet. Contact us to go live."), "", back)
		return
	}
	in.session.Values[sessEnv] = string(env)
	if err := in.session.Save(c.Request, c.Writer); err != nil {
		s.Fail(c, err)
		return
	}
	s.done(c, nil, "Now showing "+strings.ToLower(view.Frame{Env: string(env)}.EnvLabel())+" data.", back)
}

// sectionOf is the list page of a dashboard path: /dashboard/customers for
// /dashboard/customers/cus_….
func sectionOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.SplitN(strings.TrimPrefix(path, "/dashboard"), "/", 3)
	switch {
	case len(parts) < 2 || parts[1] == "":
		return "/dashboard"
	}
	return "/dashboard/" + parts[1]
}

func (s *Surface) settingsPage(c *gin.Context) {
	s.renderSettings(c, http.StatusOK, view.Settings{})
}

func (s *Surface) renderSettings(c *gin.Context, status int, v view.Settings) {
	in := current(c)
	origins, err := s.merchants.RedirectOrigins(c.Request.Context(), in.Scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	sessions, err := s.merchants.Sessions(c.Request.Context(), in.Merchant.ID)
	if err != nil {
		s.Fail(c, err)
		return
	}
	env, err := s.merchants.Environment(c.Request.Context(), in.Scope)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v.MerchantID, v.ThirdParty = in.Merchant.ID, env.ThirdPartyVerification
	v.AccountCheckPolicy, v.OwnershipPolicy = env.AccountCheck, env.Ownership
	mine := merchant.SessionHash(in.sessionID)
	for _, ses := range sessions {
		v.Sessions = append(v.Sessions, view.SessionRow{Created: shortTime(ses.CreatedAt), LastSeen: shortTime(ses.LastSeenAt),
			IP: ses.IP, Agent: ses.UserAgent, Current: bytes.Equal(ses.IDHash, mine)})
	}
	v.Origins = origins
	brand, err := s.merchants.Brand(c.Request.Context(), in.Merchant.ID)
	if err != nil {
		s.Fail(c, err)
		return
	}
	if v.BrandError == "" {
		v.BrandName, v.BrandAccent = brand.DisplayName, brand.Accent
	}
	v.LogoURL = hostedlink.LogoPath(env.PublicKey, brand)
	if v.Originator, err = s.originatorView(c.Request.Context(), in.Scope); err != nil {
		s.Fail(c, err)
		return
	}
	s.Page(c, status, view.SettingsPage(s.frame(c, "Settings", "settings"), v))
}

// setPolicies saves the environment's checks of new funding sources.
func (s *Surface) setPolicies(c *gin.Context) {
	p, err := s.merchants.SetPolicies(c.Request.Context(), current(c).Scope, merchant.Policies{
		AccountCheck: c.PostForm("account_check_policy"), Ownership: c.PostForm("ownership_policy")}, actor(c))
	s.done(c, err, "Saved: account check "+p.AccountCheck+", ownership "+p.Ownership+".", "/dashboard/settings")
}

func (s *Surface) addRedirectOrigin(c *gin.Context) {
	typed := c.PostForm("origin")
	origin, err := s.merchants.AllowRedirectOrigin(c.Request.Context(), current(c).Scope, typed, actor(c))
	if e, ok := errs.As(err); ok && e.Code == errs.InvalidRequest {
		s.renderSettings(c, http.StatusUnprocessableEntity, view.Settings{Typed: typed, Error: sentence(e.Message)})
		return
	}
	s.done(c, err, "Added "+origin+".", "/dashboard/settings")
}

func (s *Surface) removeRedirectOrigin(c *gin.Context) {
	origin, err := s.merchants.RemoveRedirectOrigin(c.Request.Context(), current(c).Scope, c.PostForm("origin"), actor(c))
	if errs.Is(err, errs.NotFound) || errs.Is(err, errs.InvalidRequest) {
		err = errs.New(errs.Conflict, "That origin was not on the list.")
	}
	s.done(c, err, "Removed "+origin+".", "/dashboard/settings")
}

// endOtherSessions signs out every other browser of this account.
func (s *Surface) endOtherSessions(c *gin.Context) {
	in := current(c)
	n, err := s.merchants.EndOtherSessions(c.Request.Context(), in.Merchant.ID, in.sessionID, actor(c))
	s.done(c, err, fmt.Sprintf("Signed out of %d other %s.", n, components.Plural(int(n), "session", "sessions")), "/dashboard/settings")
}

// changePassword replaces the password after checking the current one,
// and signs out every other session.
func (s *Surface) changePassword(c *gin.Context) {
	in := current(c)
	err := s.merchants.ChangePassword(c.Request.Context(), in.Merchant.ID, in.sessionID,
		c.PostForm("current_password"), c.PostForm("new_password"), actor(c))
	if e, ok := errs.As(err); ok && e.Code == errs.InvalidRequest {
		s.Resolve(c, err)
		s.renderSettings(c, http.StatusUnprocessableEntity, view.Settings{PasswordError: sentence(e.Message), PasswordField: e.Param})
		return
	}
	if err == nil {
		s.Log.InfoContext(c.Request.Context(), "dashboard password changed; other sessions ended",
			slog.String("merchant_id", in.Merchant.ID))
	}
	s.done(c, err, "Password changed. Every other session was signed out.", "/dashboard/settings")
}

// shortTime formats a time for the dashboard, in UTC.
func shortTime(t time.Time) string {
	return t.UTC().Format("Jan 2, 2006, 15:04 UTC")
}

// pageOf reads the page of a dashboard list from ?after=.
func pageOf(c *gin.Context, limit int) paging.Page {
	after := c.Query("after")
	if len(after) > 100 {
		after = ""
	}
	return paging.Page{Limit: limit, StartingAfter: after}
}

// rowsOf turns a page of a list into its rows for people, and links the
// first page and the one after the page's last item (id names an item).
func rowsOf[T, R any](c *gin.Context, items []T, more bool, row func(T) R, id func(T) string) ([]R, view.Pager) {
	rows := make([]R, len(items))
	for i, it := range items {
		rows[i] = row(it)
	}
	last := ""
	if len(items) > 0 {
		last = id(items[len(items)-1])
	}
	return rows, pager(c, last, more)
}

// pager links the first and next pages of a list shown at c's address.
func pager(c *gin.Context, lastID string, more bool) view.Pager {
	var p view.Pager
	q := c.Request.URL.Query()
	if q.Get("after") != "" {
		q.Del("after")
		p.First = addQuery(c.Request.URL.Path, q)
	}
	if more && lastID != "" {
		q.Set("after", lastID)
		p.Next = addQuery(c.Request.URL.Path, q)
	}
	return p
}

func addQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
