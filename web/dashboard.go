package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/paging"
	"github.com/fundsource/fundsource/internal/tenant"
	"github.com/fundsource/fundsource/templates/components"
	"github.com/fundsource/fundsource/templates/dashboard"
)

// dashboardRoutes are the merchant dashboard (CONTRACT 8). Pages call the
// same services as the API. Every form post is refused when it comes from
// another site, and is bounded in size.
func (s *server) dashboardRoutes(r *gin.Engine) {
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
	g.GET("/events/:id", s.eventPage)
	g.POST("/events/:id/resend", s.resendEvent)
	g.GET("/customers", s.customersPage)
	g.GET("/customers/:id", s.customerPage)
	g.GET("/funding-sources", s.sourcesPage)
	g.GET("/funding-sources/:id", s.sourcePage)
	g.POST("/funding-sources/:id/initiate", s.initiateFromPage)
	g.POST("/funding-sources/:id/remove", s.removeFromPage)
	g.GET("/settings", s.settingsPage)
	g.POST("/settings/redirect-origins", s.addRedirectOrigin)
	g.POST("/settings/redirect-origins/remove", s.removeRedirectOrigin)
}

// formPosts guards the dashboard's form posts before anything else runs:
// a post from another site is refused with the problem page (whether or
// not it carries a session), and a post's body is bounded.
func (s *server) formPosts(problem templ.Component) gin.HandlerFunc {
	guard := s.crossSiteGuard(problem)
	return func(c *gin.Context) {
		if c.Request.Method != http.MethodPost {
			c.Next()
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxFormBytes)
		guard(c)
	}
}

// crossSiteGuard refuses cross-origin form posts (Go's
// CrossOriginProtection: Sec-Fetch-Site, else Origin against Host) with
// the given page.
func (s *server) crossSiteGuard(problem templ.Component) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := s.crossOrigin.Check(c.Request); err != nil {
			c.Set(ctxErrorCode, string(errs.PermissionDenied))
			s.page(c, http.StatusForbidden, problem)
			c.Abort()
			return
		}
		c.Next()
	}
}

// signInNotices are the messages the sign-in page shows for ?reason=.
var signInNotices = map[string]string{
	"expired":    "Your session expired. Sign in again to continue.",
	"signed-out": "You have been signed out.",
}

func (s *server) signUpPage(c *gin.Context) {
	s.page(c, http.StatusOK, dashboard.SignUp(dashboard.AuthForm{}))
}

// signUp creates the merchant with its sandbox keys, signs it in, and
// shows the secret key once.
func (s *server) signUp(c *gin.Context) {
	v := dashboard.AuthForm{Name: c.PostForm("name"), Email: c.PostForm("email")}
	if !s.allowAttempt(c, &v) {
		s.page(c, http.StatusTooManyRequests, dashboard.SignUp(v))
		return
	}
	created, err := s.merchants.Create(c.Request.Context(), v.Name, v.Email, c.PostForm("password"))
	if err != nil {
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidRequest {
			s.dashboardError(c, err)
			return
		}
		v.Error, v.ErrorField = sentence(e.Message), e.Param
		s.page(c, http.StatusUnprocessableEntity, dashboard.SignUp(v))
		return
	}
	if err := s.startSession(c, created.Merchant); err != nil {
		s.dashboardError(c, err)
		return
	}
	s.log.InfoContext(c.Request.Context(), "merchant signed up", slog.String("merchant_id", created.Merchant.ID))
	s.renderHome(c, created.Sandbox.SecretKey)
}

func (s *server) signInPage(c *gin.Context) {
	s.page(c, http.StatusOK, dashboard.SignIn(dashboard.AuthForm{
		Next: localNext(c.Query("next")), Notice: signInNotices[c.Query("reason")],
	}))
}

// signIn checks the password (attempts bounded per IP and per email) and
// starts a fresh session.
func (s *server) signIn(c *gin.Context) {
	v := dashboard.AuthForm{Email: c.PostForm("email"), Next: localNext(c.PostForm("next"))}
	if !s.allowAttempt(c, &v) {
		s.page(c, http.StatusTooManyRequests, dashboard.SignIn(v))
		return
	}
	m, err := s.merchants.SignIn(c.Request.Context(), v.Email, c.PostForm("password"))
	if err != nil {
		if !errs.Is(err, errs.Unauthorized) {
			s.dashboardError(c, err)
			return
		}
		s.log.InfoContext(c.Request.Context(), "dashboard sign-in refused",
			slog.String("request_id", requestID(c)), slog.String("client_ip", c.ClientIP()))
		c.Set(ctxErrorCode, string(errs.Unauthorized))
		v.Error = "That email and password don't match an account."
		s.page(c, http.StatusUnauthorized, dashboard.SignIn(v))
		return
	}
	if err := s.startSession(c, m); err != nil {
		s.dashboardError(c, err)
		return
	}
	s.pageHeaders(c)
	c.Redirect(http.StatusSeeOther, v.Next)
}

// allowAttempt takes one sign-in or sign-up attempt from the client's IP
// and the typed email; when either has none left it sets the error and
// Retry-After and reports false.
func (s *server) allowAttempt(c *gin.Context, v *dashboard.AuthForm) bool {
	wait, ok := s.signInLimiter.allow(c.ClientIP(), strings.ToLower(strings.TrimSpace(v.Email)), s.now())
	if ok {
		return true
	}
	mins := max(int((wait+time.Minute-1)/time.Minute), 1)
	c.Header("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
	c.Set(ctxErrorCode, string(errs.RateLimited))
	v.Error = fmt.Sprintf("Too many attempts. Wait about %d %s and try again.", mins, components.Plural(mins, "minute", "minutes"))
	return false
}

func (s *server) signOut(c *gin.Context) {
	s.endSession(c)
	s.pageHeaders(c)
	c.Redirect(http.StatusSeeOther, "/dashboard/sign-in?reason=signed-out")
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
func (s *server) frame(c *gin.Context, title, section string) dashboard.Frame {
	in := current(c)
	ok, bad := s.takeFlashes(c)
	return dashboard.Frame{
		Title: title, Section: section, Merchant: in.Merchant.Name, Email: in.Merchant.Email,
		Env: string(in.Scope.Env), CanProduction: in.Merchant.Can(tenant.Production),
		Path: c.Request.URL.RequestURI(), Notices: ok, Errors: bad,
	}
}

// dashboardError answers a failed dashboard request: 404 for anything not
// found, the message of any other contract error, and a logged 500 for
// the rest.
func (s *server) dashboardError(c *gin.Context, err error) {
	if s.clientGone(c, err) {
		return
	}
	e, ok := errs.As(err)
	status := http.StatusInternalServerError
	if ok {
		if st, known := statusOf[e.Code]; known {
			status = st
		}
	}
	if status == http.StatusNotFound {
		s.dashboardNotFound(c)
		return
	}
	heading, text := "That didn't work", ""
	if status >= 500 {
		s.log.ErrorContext(c.Request.Context(), "internal error", slog.String("request_id", requestID(c)),
			slog.String("route", c.FullPath()), slog.Any("error", err))
		heading = "Something went wrong"
		text = "We could not complete this request. It has been logged as " + requestID(c) + "; please try again."
	} else {
		text = sentence(e.Message)
		c.Set(ctxErrorCode, string(e.Code))
	}
	if _, in := c.Get(ctxSignedIn); !in {
		s.page(c, status, components.MessagePage(heading, text))
	} else {
		s.page(c, status, dashboard.Problem(s.frame(c, heading, ""), heading, text))
	}
	c.Abort()
}

// dashboardNotFound is the one 404 page of the dashboard: another
// merchant's object, the other environment's, and an unknown id all look
// the same.
func (s *server) dashboardNotFound(c *gin.Context) {
	c.Set(ctxErrorCode, string(errs.NotFound))
	s.page(c, http.StatusNotFound, dashboard.NotFound(s.frame(c, "Not found", "")))
	c.Abort()
}

// done finishes a form action: a message for the next page and a 303 to
// it. A refusal by the rules (no webhook URL included) becomes an error
// message there; a missing object the 404 page.
func (s *server) done(c *gin.Context, err error, okMsg, back string) {
	if err != nil {
		e, ok := errs.As(err)
		missing := ok && statusOf[e.Code] == http.StatusNotFound && e.Code != errs.WebhookNotFound
		if !ok || statusOf[e.Code] >= 500 || missing {
			s.dashboardError(c, err)
			return
		}
		s.flash(c, flashError, sentence(e.Message))
	} else if okMsg != "" {
		s.flash(c, flashOK, okMsg)
	}
	s.pageHeaders(c)
	c.Redirect(http.StatusSeeOther, back)
}

func (s *server) home(c *gin.Context) { s.renderHome(c, "") }

// renderHome shows the overview; newSecret is the secret key just created
// or rolled, shown this once.
func (s *server) renderHome(c *gin.Context, newSecret string) {
	in := current(c)
	ctx, scope := c.Request.Context(), in.Scope
	env, err := s.merchants.Environment(ctx, scope)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	hint, err := s.merchants.SecretKeyHint(ctx, scope)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	_, hookErr := s.webhooks.Get(ctx, scope)
	if hookErr != nil && !errs.Is(hookErr, errs.WebhookNotFound) {
		s.dashboardError(c, hookErr)
		return
	}
	one := paging.Page{Limit: 1}
	customers, _, err := s.customers.List(ctx, scope, one)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	sources, _, err := s.funding.Search(ctx, scope, funding.Filter{}, one)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	base := s.cfg.SandboxBaseURL
	if scope.Env == tenant.Production {
		base = s.cfg.ProductionBaseURL
	}
	v := dashboard.Overview{
		APIBase: strings.TrimSuffix(base.String(), "/") + "/v2", PublicKey: env.PublicKey,
		SecretHint: hint.String(), KeyCreated: shortTime(hint.CreatedAt), NewSecret: newSecret,
		HasWebhook: hookErr == nil, HasCustomer: len(customers) > 0, HasSource: len(sources) > 0,
	}
	s.page(c, http.StatusOK, dashboard.Home(s.frame(c, "Home", "overview"), v))
}

// rollKey replaces the environment's secret key and shows the new one once.
func (s *server) rollKey(c *gin.Context) {
	in := current(c)
	secret, err := s.merchants.RollKey(c.Request.Context(), in.Scope)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	s.log.InfoContext(c.Request.Context(), "secret key rolled from the dashboard",
		slog.String("merchant_id", in.Scope.MerchantID), slog.String("environment", string(in.Scope.Env)))
	s.renderHome(c, secret)
}

// switchEnvironment shows the other environment's data from now on;
// production only once an operator activated it. The merchant lands on
// the same section, not the same object (ids differ per environment).
func (s *server) switchEnvironment(c *gin.Context) {
	in := current(c)
	env := tenant.Environment(c.PostForm("env"))
	back := sectionOf(localNext(c.PostForm("next")))
	if !in.Merchant.Can(env) {
		s.done(c, errs.New(errs.PermissionDenied, "Production is not activated for this account yet. Contact us to go live."), "", back)
		return
	}
	in.session.Values[sessEnv] = string(env)
	if err := in.session.Save(c.Request, c.Writer); err != nil {
		s.dashboardError(c, err)
		return
	}
	s.done(c, nil, "Now showing "+strings.ToLower(dashboard.Frame{Env: string(env)}.EnvLabel())+" data.", back)
}

// sectionOf is the list page of a dashboard path: /dashboard/customers for
// /dashboard/customers/cus_….
func sectionOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.SplitN(strings.TrimPrefix(path, "/dashboard"), "/", 3)
	switch {
	case len(parts) < 2 || parts[1] == "":
		return "/dashboard"
	case parts[1] == "events":
		return "/dashboard/webhooks"
	}
	return "/dashboard/" + parts[1]
}

func (s *server) settingsPage(c *gin.Context) {
	s.renderSettings(c, http.StatusOK, dashboard.Settings{})
}

func (s *server) renderSettings(c *gin.Context, status int, v dashboard.Settings) {
	origins, err := s.merchants.RedirectOrigins(c.Request.Context(), current(c).Scope)
	if err != nil {
		s.dashboardError(c, err)
		return
	}
	v.Origins = origins
	s.page(c, status, dashboard.SettingsPage(s.frame(c, "Settings", "settings"), v))
}

func (s *server) addRedirectOrigin(c *gin.Context) {
	typed := c.PostForm("origin")
	origin, err := s.merchants.AllowRedirectOrigin(c.Request.Context(), current(c).Scope, typed)
	if e, ok := errs.As(err); ok && e.Code == errs.InvalidRequest {
		s.renderSettings(c, http.StatusUnprocessableEntity, dashboard.Settings{Typed: typed, Error: sentence(e.Message)})
		return
	}
	s.done(c, err, "Added "+origin+".", "/dashboard/settings")
}

func (s *server) removeRedirectOrigin(c *gin.Context) {
	origin, err := s.merchants.RemoveRedirectOrigin(c.Request.Context(), current(c).Scope, c.PostForm("origin"))
	if errs.Is(err, errs.NotFound) || errs.Is(err, errs.InvalidRequest) {
		err = errs.New(errs.Conflict, "That origin was not on the list.")
	}
	s.done(c, err, "Removed "+origin+".", "/dashboard/settings")
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
func rowsOf[T, R any](c *gin.Context, items []T, more bool, row func(T) R, id func(T) string) ([]R, dashboard.Pager) {
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
func pager(c *gin.Context, lastID string, more bool) dashboard.Pager {
	var p dashboard.Pager
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
