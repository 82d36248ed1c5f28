package surface

import (
	"bytes"
	"net/http"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// MaxFormBytes bounds a form post of the dashboard or the hosted page.
const MaxFormBytes = 16 << 10

// PageHeaders sets the security headers of every HTML page (HSTS is on
// every answer: StrictTransport). formTargets
// are origins (already checked) that the page's forms may end up at
// through a redirect: browsers apply form-action to the redirect too.
func (k *Shared) PageHeaders(c *gin.Context, formTargets ...string) {
	h := c.Writer.Header()
	formAction := "'self'"
	for _, o := range formTargets {
		formAction += " " + o
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "+
		"form-action "+formAction+"; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Page renders a templ component into a buffer first, so a render error
// still becomes a proper 500 instead of half a page; formTargets are as
// for PageHeaders.
func (k *Shared) Page(c *gin.Context, status int, comp templ.Component, formTargets ...string) {
	var buf bytes.Buffer
	if err := comp.Render(c.Request.Context(), &buf); err != nil {
		k.Fail(c, err)
		return
	}
	k.PageHeaders(c, formTargets...)
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// Redirect answers a page's form with 303 to a checked address.
func (k *Shared) Redirect(c *gin.Context, to string) {
	k.PageHeaders(c)
	c.Redirect(http.StatusSeeOther, to)
}

// CrossSiteGuard refuses cross-origin form posts (Go's
// CrossOriginProtection: Sec-Fetch-Site, else Origin against Host) with
// the given page.
func (k *Shared) CrossSiteGuard(problem templ.Component) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := k.crossOrigin.Check(c.Request); err != nil {
			c.Set(ctxErrorCode, string(errs.PermissionDenied))
			k.Page(c, http.StatusForbidden, problem)
			c.Abort()
			return
		}
		c.Next()
	}
}

// BoundBody bounds a request's body to n bytes: a form that uploads a file.
func BoundBody(c *gin.Context, n int64) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
}

// BoundForm bounds a form post's body to MaxFormBytes.
func BoundForm(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxFormBytes)
}
