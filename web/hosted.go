package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hosted"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/hosted"
)

// maxFormBytes bounds a hosted form post.
const maxFormBytes = 16 << 10

// hostedRoutes are the hosted verification page (spec 4.5, CONTRACT 7).
func (s *server) hostedRoutes(r *gin.Engine) {
	r.GET("/", s.hostedIndex)
	g := r.Group("/bank-account/:public_key/:user_id/:funding_source_id")
	g.GET("", s.hostedPage)
	sameOrigin := s.crossSiteGuard(view.Problem("This form was sent from another site",
		"For your safety we only accept this form from its own page. Open your verification link again.", ""))
	g.POST("", sameOrigin, s.hostedLimit, s.hostedVerify)
	g.POST("/cancel", sameOrigin, s.hostedLimit, s.hostedCancel)
}

// hostedIndex serves the page whose script turns the #/bank-account/… link
// into the page's own address.
func (s *server) hostedIndex(c *gin.Context) {
	s.page(c, http.StatusOK, view.Index())
}

func link(c *gin.Context) hosted.Link {
	return hosted.Link{
		PublicKey:  c.Param("public_key"),
		UserID:     c.Param("user_id"),
		SourceID:   c.Param("funding_source_id"),
		SuccessURL: c.Query("successUrl"),
		CancelURL:  c.Query("cancelUrl"),
	}
}

func (s *server) hostedPage(c *gin.Context) {
	p, err := s.hosted.Open(c.Request.Context(), link(c))
	if err != nil {
		s.hostedProblem(c, err)
		return
	}
	s.hostedRender(c, http.StatusOK, p, view.View{})
}

// hostedVerify checks the two amounts through the funding service the API
// uses. Success goes to successUrl (303); a refusal shows the page again
// with the error and the attempts left.
func (s *server) hostedVerify(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxFormBytes)
	typed := [2]string{c.PostForm("amount1"), c.PostForm("amount2")}
	p, err := s.hosted.Verify(c.Request.Context(), link(c), typed[0], typed[1])
	if err == nil {
		if p.State == hosted.Verified && p.Success != nil {
			s.pageHeaders(c)
			c.Redirect(http.StatusSeeOther, p.SuccessAddress())
			return
		}
		s.hostedRender(c, http.StatusOK, p, view.View{})
		return
	}
	e, ok := errs.As(err)
	if !ok || p.Source.ID == "" {
		s.hostedProblem(c, err)
		return
	}
	v := view.View{Amounts: typed, Error: e.Message}
	switch e.Code {
	case errs.InvalidAmounts:
		v.ErrorField = e.Param
	case errs.VerificationFailed:
		v.Amounts = [2]string{}
		if n := p.Source.Verification; n != nil && n.AttemptsRemaining > 0 {
			v.Error = fmt.Sprintf("Those amounts don't match the deposits. You have %d %s left.",
				n.AttemptsRemaining, components.Plural(n.AttemptsRemaining, "attempt", "attempts"))
		}
	}
	s.hostedRender(c, http.StatusUnprocessableEntity, p, v)
}

func (s *server) hostedCancel(c *gin.Context) {
	to, err := s.hosted.Cancel(c.Request.Context(), link(c))
	if err != nil {
		s.hostedProblem(c, err)
		return
	}
	s.pageHeaders(c)
	c.Redirect(http.StatusSeeOther, to)
}

// hostedRender shows the page for p's state; v carries what the customer
// typed and the error, if any. The page's form may redirect to the link's
// success and cancel origins, so its CSP form-action allows them.
func (s *server) hostedRender(c *gin.Context, status int, p hosted.Page, v view.View) {
	src := p.Source
	v.Merchant, v.State, v.Account = p.MerchantName, string(p.State), accountLabel(src)
	v.Bank = "Your bank"
	if src.BankName != nil && *src.BankName != "" {
		v.Bank = *src.BankName
	}
	if vf := src.Verification; vf != nil {
		if arrival, err := time.Parse(time.DateOnly, vf.ExpectedArrivalDate); err == nil {
			v.Arrival = arrival.Format("Monday, January 2, 2006")
			v.Arrived = !s.now().UTC().Before(arrival)
		}
		v.Expires = vf.ExpiresAt.UTC().Format("January 2, 2006")
		v.Attempts = vf.AttemptsRemaining
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
	if p.State == hosted.Verified {
		v.ContinueURL = p.SuccessAddress()
	}
	s.pageFor(c, status, view.Page(v), p.RedirectOrigins()...)
}

// accountLabel is "Checking •••• 6789".
func accountLabel(src funding.Source) string {
	kind := "Account"
	switch src.AccountType {
	case funding.Checking:
		kind = "Checking"
	case funding.Savings:
		kind = "Savings"
	}
	return kind + " •••• " + src.LastFour
}

// hostedProblem shows why the link cannot be used. Every mismatch of key,
// customer, source, merchant or environment is the same 404 page.
func (s *server) hostedProblem(c *gin.Context, err error) {
	var e *errs.Error
	if !errors.As(err, &e) {
		if s.clientGone(c, err) {
			return
		}
		s.log.ErrorContext(c.Request.Context(), "internal error",
			slog.String("request_id", requestID(c)), slog.String("route", c.FullPath()), slog.Any("error", err))
		s.page(c, http.StatusInternalServerError, view.Problem("Something went wrong",
			"We could not open this page. Please try again in a few minutes.", "Request id: "+requestID(c)))
		return
	}
	c.Set(ctxErrorCode, string(e.Code))
	switch e.Code {
	case errs.NotFound:
		s.page(c, http.StatusNotFound, view.Problem("This link is not valid",
			"Check that you opened the whole link you received, or ask the business that sent it for a new one.", ""))
	case errs.InvalidURL:
		s.page(c, http.StatusBadRequest, view.Problem("This link cannot be used",
			"The address this page would send you back to is not allowed, so we stopped here to keep you safe. "+
				"Please contact the business that sent you this link.",
			"For developers: "+e.Param+" was refused: "+e.Message+"."))
	case errs.ServiceUnavailable:
		c.Header("Retry-After", "5")
		s.page(c, http.StatusServiceUnavailable, view.Problem("Please try again shortly",
			"This page is briefly unavailable. Your deposits and attempts are unchanged.", ""))
	default:
		status, ok := statusOf[e.Code]
		if !ok || status < 400 {
			status = http.StatusBadRequest
		}
		s.page(c, status, view.Problem("This page cannot continue", e.Message, ""))
	}
}

// hostedLimit bounds submissions per client IP and per funding source.
func (s *server) hostedLimit(c *gin.Context) {
	if wait, ok := s.hostedLimiter.allow(c.ClientIP(), c.Param("funding_source_id"), s.now()); !ok {
		secs := max(int((wait+time.Second-1)/time.Second), 1)
		c.Header("Retry-After", strconv.Itoa(secs))
		c.Set(ctxErrorCode, string(errs.RateLimited))
		mins := (secs + 59) / 60
		s.page(c, http.StatusTooManyRequests, view.Problem("Too many attempts",
			fmt.Sprintf("Please wait about %d %s and try again. Your remaining attempts are unchanged.",
				mins, components.Plural(mins, "minute", "minutes")), ""))
		c.Abort()
		return
	}
	c.Next()
}
