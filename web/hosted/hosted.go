// Package hosted is the hosted verification page: the page a merchant
// links its customer to, which shows a funding source's micro-deposit
// verification and checks the two amounts through the same funding
// service as the API. Every refusal goes through web/surface's one error path
// and becomes one of the page's problem pages.
//
// The page is server-rendered. The spec's link puts everything after a '#',
// which never reaches a server; a ten-line script (static/js/hosted.js)
// turns it into a real path and query, and from there the page is plain
// HTML forms: it works without JavaScript, and nothing about the source is
// fetched by script. The script accepts only [A-Za-z0-9_] ids, so it can
// only navigate within the site. Browsers apply CSP form-action to the
// redirect after a form post, so the form page allows exactly its link's
// checked return origins. Submissions are limited by token buckets keyed
// by client IP and by source, refilled over 10 minutes; a bucket is
// forgotten only once full again, so eviction never resets a limit. Every
// post spends its IP's allowance; only a post whose link resolves (public
// key, customer and source all match) spends the source's, so a made-up
// link naming a known source id cannot lock its customer out.
package hosted

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/hosted"
	"github.com/fundsource/fundsource/web/surface"
)

// submitWindow is the time over which the per-IP and per-source
// submission allowances refill.
const submitWindow = 10 * time.Minute

// Surface is the hosted page's handlers.
type Surface struct {
	*surface.Shared
	links     *hostedlink.Service
	perIP     *surface.KeyLimiter
	perSource *surface.KeyLimiter
}

// New returns the hosted page on k: links resolves and verifies; perIP and
// perSource bound the form posts over 10 minutes.
func New(k *surface.Shared, links *hostedlink.Service, perIP, perSource int) *Surface {
	return &Surface{Shared: k, links: links,
		perIP: surface.NewKeyLimiter(submitWindow, perIP), perSource: surface.NewKeyLimiter(submitWindow, perSource)}
}

// Mount adds the page's routes to r.
func (s *Surface) Mount(r *gin.Engine) {
	r.GET("/", s.index)
	r.GET("/brand/:public_key/theme.css", s.theme)
	r.GET("/brand/:public_key/logo", s.logo)
	g := r.Group("/bank-account/:public_key/:user_id/:funding_source_id")
	g.GET("", s.show)
	sameOrigin := s.CrossSiteGuard(view.Problem("This form was sent from another site",
		"For your safety we only accept this form from its own page. Open your verification link again.", ""))
	g.POST("", sameOrigin, s.limitIP, s.verify)
	g.POST("/cancel", sameOrigin, s.limitIP, s.cancel)
}

// index serves the page whose script turns the #/bank-account/… link
// into the page's own address.
func (s *Surface) index(c *gin.Context) {
	s.Page(c, http.StatusOK, view.Index())
}

func link(c *gin.Context) hostedlink.Link {
	return hostedlink.Link{
		PublicKey:  c.Param("public_key"),
		CustomerID: c.Param("user_id"),
		SourceID:   c.Param("funding_source_id"),
		SuccessURL: c.Query("successUrl"),
		CancelURL:  c.Query("cancelUrl"),
	}
}

func (s *Surface) show(c *gin.Context) {
	p, err := s.links.Open(c.Request.Context(), link(c))
	if err != nil {
		s.Fail(c, err)
		return
	}
	s.render(c, http.StatusOK, p, view.View{})
}

// verify checks the two amounts through the funding service the API
// uses. Success goes to successUrl (303); a refusal shows the page again
// with the error and the attempts left.
func (s *Surface) verify(c *gin.Context) {
	surface.BoundForm(c)
	typed := [2]string{c.PostForm("amount1"), c.PostForm("amount2")}
	code, byCode := c.GetPostForm("code")
	var p hostedlink.Page
	var err error
	if byCode {
		p, err = s.links.VerifyCode(c.Request.Context(), link(c), code, s.admitSource)
	} else {
		p, err = s.links.Verify(c.Request.Context(), link(c), typed[0], typed[1], s.admitSource)
	}
	if err == nil {
		if p.State == hostedlink.Verified && p.Success != nil {
			s.Redirect(c, p.SuccessAddress())
			return
		}
		s.render(c, http.StatusOK, p, view.View{})
		return
	}
	e, ok := errs.As(err)
	if !ok || p.Source.ID == "" {
		s.Fail(c, err)
		return
	}
	s.Resolve(c, err) // the code for the access log
	v := view.View{Amounts: typed, Code: code, Error: e.Message}
	switch {
	case e.Code == errs.InvalidAmounts:
		v.ErrorField = e.Param
	case e.Code == errs.InvalidRequest && byCode && p.Instant():
		v.ErrorField, v.Error = "code", "That is not a code from the deposit: type "+funding.CodeFormat()+"."
	case e.Code == errs.InvalidRequest:
		// The page changed method meanwhile (a stale form): show it anew.
		v = view.View{}
	case e.Code == errs.VerificationFailed:
		v.Amounts, v.Code = [2]string{}, ""
		if n := p.Source.Verification; n != nil && n.AttemptsRemaining > 0 {
			what := "Those amounts don't match the deposits."
			if byCode {
				what = "That code doesn't match the one on the deposit."
			}
			v.Error = fmt.Sprintf("%s You have %d %s left.", what,
				n.AttemptsRemaining, components.Plural(n.AttemptsRemaining, "attempt", "attempts"))
		}
	}
	s.render(c, http.StatusUnprocessableEntity, p, v)
}

func (s *Surface) cancel(c *gin.Context) {
	to, err := s.links.Cancel(c.Request.Context(), link(c), s.admitSource)
	if err != nil {
		s.Fail(c, err)
		return
	}
	s.Redirect(c, to)
}

// render shows the page for p's state; v carries what the customer
// typed and the error, if any. The page's form may redirect to the link's
// success and cancel origins, so its CSP form-action allows them.
func (s *Surface) render(c *gin.Context, status int, p hostedlink.Page, v view.View) {
	src := p.Source
	v.Merchant, v.State, v.Account = p.MerchantName, string(p.State), components.AccountLabel(string(src.AccountType), src.LastFour)
	v.Sandbox = !p.Scope.Env.Live()
	v.Logo, v.Theme = hostedlink.LogoPath(p.PublicKey, p.Brand), hostedlink.ThemePath(p.PublicKey, p.Brand)
	v.Bank = "Your bank"
	if src.BankName != nil && *src.BankName != "" {
		v.Bank = *src.BankName
	}
	if vf := src.Verification; vf != nil {
		if arrival, err := time.Parse(time.DateOnly, vf.ExpectedArrivalDate); err == nil {
			v.Arrival = arrival.Format("Monday, January 2, 2006")
			today := calendar.DateOf(s.Now())
			v.Arrived, v.ArrivesToday = today.After(arrival), today.Equal(arrival)
		}
		v.Expires = vf.ExpiresAt.UTC().Format("January 2, 2006")
		v.Attempts = vf.AttemptsRemaining
		v.Instant = vf.Method == funding.MethodInstant
		v.CodePrefix, v.CodeFormat, v.CodeExample = funding.CodePrefix, funding.CodeFormat(), funding.CodeExample
		v.Rail = map[string]string{funding.RailRTP: "RTP", funding.RailFedNow: "FedNow"}[vf.Rail]
		v.RailUnknown = vf.RailStatus() == funding.RailStatusUnknown
	}
	// The forms post to the page's own address, query included, so the
	// link's successUrl and cancelUrl travel with them.
	path, query := c.Request.URL.EscapedPath(), ""
	if q := c.Request.URL.RawQuery; q != "" {
		query = "?" + q
	}
	v.Action = path + query
	if p.Cancel != nil {
		v.CancelAction = path + "/cancel" + query
	}
	if p.State == hostedlink.Verified {
		v.ContinueURL = p.SuccessAddress()
	}
	s.Page(c, status, view.Page(v), p.RedirectOrigins()...)
}

// Fail shows why the link cannot be used, through the one error path.
// Every mismatch of key, customer, source, merchant or environment is the
// same 404 page.
func (s *Surface) Fail(c *gin.Context, err error) {
	o := s.Resolve(c, err)
	if o.Gone {
		return
	}
	var page = view.Problem("This page cannot continue", o.Message, "")
	switch {
	case o.Code == errs.Internal:
		page = view.Problem("Something went wrong",
			"We could not open this page. Please try again in a few minutes.", "Request id: "+surface.RequestID(c))
	case o.Code == errs.NotFound:
		page = view.Problem("This link is not valid",
			"Check that you opened the whole link you received, or ask the business that sent it for a new one.", "")
	case o.Code == errs.InvalidURL:
		page = view.Problem("This link cannot be used",
			"The address this page would send you back to is not allowed, so we stopped here to keep you safe. "+
				"Please contact the business that sent you this link.",
			"For developers: "+o.Param+" was refused: "+o.Message+".")
	case o.Code == errs.ServiceUnavailable:
		page = view.Problem("Please try again shortly",
			"This page is briefly unavailable. Your deposits and attempts are unchanged.", "")
	case o.Code == errs.RateLimited:
		mins := (o.RetryAfter + 59) / 60
		page = view.Problem("Too many attempts",
			fmt.Sprintf("Please wait about %d %s and try again. Your remaining attempts are unchanged.",
				mins, components.Plural(mins, "minute", "minutes")), "")
	}
	s.Page(c, o.Status, page)
	c.Abort()
}

// limitIP bounds submissions per client IP (per /64 for IPv6), whatever
// the link.
func (s *Surface) limitIP(c *gin.Context) {
	if wait, ok := s.perIP.Allow(surface.ClientNetwork(c), s.Now()); !ok {
		s.Fail(c, surface.RateLimited("Too many attempts from this device.", wait))
		return
	}
	c.Next()
}

// admitSource bounds submissions per funding source. It runs only once the
// link has resolved, so only a valid link spends the source's allowance.
func (s *Surface) admitSource(p hostedlink.Page) error {
	if wait, ok := s.perSource.Allow(p.Source.ID, s.Now()); !ok {
		return surface.RateLimited("Too many attempts for this account.", wait)
	}
	return nil
}
