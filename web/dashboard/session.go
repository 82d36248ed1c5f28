package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/sessions"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
)

// sessionCookie is the dashboard's session cookie. It holds the session's
// secret id, the environment shown and the flash messages, signed and
// encrypted. The session itself lives in PostgreSQL (merchant.Session), so
// sign-out, "sign out of all other sessions" and a password change end it
// on the server: a copied cookie opens nothing afterwards.
const sessionCookie = "fundsource_session"

// Session value keys.
const (
	sessEnv = "env"
	sessID  = "sid"
	// sessNewSecret is a just-rolled secret key masked with a pad only the
	// server's session row holds, until the page after the roll's
	// redirect shows it once (merchant.Service.HoldReveal).
	sessNewSecret = "new_secret"
)

// newSessionStore derives, from each SESSION_KEYS key, an authentication
// key and an AES-256 encryption key; the first pair writes, all read, so
// keys can rotate.
func newSessionStore(cfg *config.Config) *sessions.CookieStore {
	var pairs [][]byte
	for _, k := range cfg.SessionKeys {
		pairs = append(pairs, derive(k, "session authentication"), derive(k, "session encryption"))
	}
	st := sessions.NewCookieStore(pairs...)
	st.Options = &sessions.Options{
		Path:     "/dashboard",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   cfg.Mode == config.Production,
	}
	st.MaxAge(int(cfg.DashboardSessionMaxAge / time.Second))
	return st
}

func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// signedIn is the dashboard request's merchant and environment.
type signedIn struct {
	Merchant  merchant.Merchant
	Scope     tenant.Scope
	sessionID string // the secret id of the server's session
	session   *sessions.Session
}

const ctxSignedIn = "dashboard.signed_in"

func current(c *gin.Context) *signedIn { return c.MustGet(ctxSignedIn).(*signedIn) }

// actor is who makes a signed-in request, for the audit log.
func actor(c *gin.Context) audit.Actor {
	return audit.DashboardUser(current(c).Merchant.ID, c.ClientIP())
}

// startSession replaces whatever session the browser had with a new one
// for m in the sandbox (a fresh session on every sign-in), and makes this
// request a signed-in one.
func (s *Surface) startSession(c *gin.Context, m merchant.Merchant) error {
	id, err := s.merchants.StartSession(c.Request.Context(), m.ID, c.ClientIP(), c.Request.UserAgent())
	if err != nil {
		return err
	}
	sess := s.newSession(int(s.cfg.DashboardSessionMaxAge / time.Second))
	sess.Values[sessEnv] = string(tenant.Sandbox)
	sess.Values[sessID] = id
	if err := sess.Save(c.Request, c.Writer); err != nil {
		return err
	}
	c.Set(ctxSignedIn, &signedIn{Merchant: m, Scope: tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox}, sessionID: id, session: sess})
	return nil
}

// endSession deletes the session cookie.
func (s *Surface) endSession(c *gin.Context) {
	_ = s.newSession(-1).Save(c.Request, c.Writer)
}

// cookieSessionID is the session id the browser's cookie carries, "" when
// it carries none that this server can read.
func (s *Surface) cookieSessionID(c *gin.Context) string {
	sess, err := s.sessions.Get(c.Request, sessionCookie)
	if err != nil {
		return ""
	}
	id, _ := sess.Values[sessID].(string)
	return id
}

// newSession is an empty session, not the browser's, whose cookie lives
// maxAge seconds (-1 deletes it).
func (s *Surface) newSession(maxAge int) *sessions.Session {
	sess := sessions.NewSession(s.sessions, sessionCookie)
	opts := *s.sessions.Options
	opts.MaxAge = maxAge
	sess.Options = &opts
	return sess
}

// dashboardAuth lets a request through with a live session; otherwise it
// sends the browser to sign in, back to this page afterwards. Sessions end
// after DASHBOARD_IDLE_TIMEOUT without a request and DASHBOARD_SESSION_MAX_AGE
// after sign-in.
func (s *Surface) dashboardAuth(c *gin.Context) {
	sess, err := s.sessions.Get(c.Request, sessionCookie)
	id, _ := sess.Values[sessID].(string)
	env, _ := sess.Values[sessEnv].(string)
	if err != nil || id == "" {
		s.toSignIn(c, "")
		return
	}
	_, m, err := s.merchants.ResumeSession(c.Request.Context(), id,
		merchant.SessionLimits{IdleTimeout: s.cfg.DashboardIdleTimeout, MaxAge: s.cfg.DashboardSessionMaxAge})
	switch {
	case errors.Is(err, merchant.ErrSessionExpired):
		s.endSession(c)
		s.toSignIn(c, "expired")
		return
	case errs.Is(err, errs.Unauthorized), errs.Is(err, errs.NotFound):
		// Signed out, revoked, or the merchant is gone.
		s.endSession(c)
		s.toSignIn(c, "")
		return
	case err != nil:
		s.Fail(c, err)
		return
	}
	scope := tenant.Scope{MerchantID: m.ID, Env: tenant.Environment(env)}
	if !m.Can(scope.Env) {
		scope.Env = tenant.Sandbox
	}
	c.Set(ctxSignedIn, &signedIn{Merchant: m, Scope: scope, sessionID: id, session: sess})
	c.Next()
}

// toSignIn redirects to the sign-in page; GET requests come back to where
// they were going afterwards.
func (s *Surface) toSignIn(c *gin.Context, reason string) {
	q := url.Values{}
	if c.Request.Method == http.MethodGet {
		q.Set("next", c.Request.URL.RequestURI())
	}
	if reason != "" {
		q.Set("reason", reason)
	}
	to := "/dashboard/sign-in"
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	s.Redirect(c, to)
	c.Abort()
}

// localNext is where to go after signing in: a dashboard path on this
// site, never another site.
func localNext(next string) string {
	if !strings.HasPrefix(next, "/dashboard") || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "/dashboard/sign-") {
		return "/dashboard"
	}
	return next
}

// Flash kinds.
const (
	flashOK    = "ok"
	flashError = "error"
)

// takeNewSecret returns and clears the secret key a roll left for the
// next page: it rides the encrypted session cookie for one redirect,
// masked with a pad the server keeps for one showing, so a replay of that
// cookie shows nothing.
func (s *Surface) takeNewSecret(c *gin.Context) string {
	in := current(c)
	masked, _ := in.session.Values[sessNewSecret].([]byte)
	if len(masked) == 0 {
		return ""
	}
	delete(in.session.Values, sessNewSecret)
	if err := in.session.Save(c.Request, c.Writer); err != nil {
		return ""
	}
	secret, err := s.merchants.TakeReveal(c.Request.Context(), in.sessionID, masked)
	if err != nil {
		s.Log.WarnContext(c.Request.Context(), "rolled secret not shown", slog.Any("error", err))
		return ""
	}
	return secret
}

// flash queues a message for the next page the merchant sees.
func (s *Surface) flash(c *gin.Context, kind, msg string) {
	in := current(c)
	in.session.AddFlash(kind + ":" + msg)
	_ = in.session.Save(c.Request, c.Writer)
}

// takeFlashes returns and clears the queued messages.
func (s *Surface) takeFlashes(c *gin.Context) (ok, bad []string) {
	in := current(c)
	fs := in.session.Flashes()
	if len(fs) == 0 {
		return nil, nil
	}
	_ = in.session.Save(c.Request, c.Writer)
	for _, f := range fs {
		str, _ := f.(string)
		kind, msg, _ := strings.Cut(str, ":")
		if kind == flashError {
			bad = append(bad, msg)
		} else {
			ok = append(ok, msg)
		}
	}
	return ok, bad
}
