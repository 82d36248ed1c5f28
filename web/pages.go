package web

import (
	"bytes"
	iofs "io/fs"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/static"
	"github.com/fundsource/fundsource/templates/components"
)

// pageHeaders are the security headers of every HTML page. formTargets are
// origins (already checked) that the page's forms may end up at through a
// redirect: browsers apply form-action to the redirect too.
func (s *server) pageHeaders(c *gin.Context, formTargets ...string) {
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
	if s.cfg.Mode == "production" {
		h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
	}
}

// page renders a templ component into a buffer first, so a render error
// still becomes a proper 500 instead of half a page.
func (s *server) page(c *gin.Context, status int, comp templ.Component) {
	s.pageFor(c, status, comp)
}

// pageFor is page with the origins the page's forms may redirect to.
func (s *server) pageFor(c *gin.Context, status int, comp templ.Component, formTargets ...string) {
	var buf bytes.Buffer
	if err := comp.Render(c.Request.Context(), &buf); err != nil {
		s.fail(c, err)
		return
	}
	s.pageHeaders(c, formTargets...)
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// notFound answers an unknown address: the JSON envelope for the API and
// for clients that do not ask for HTML, a page for browsers.
func (s *server) notFound(c *gin.Context) {
	if !strings.HasPrefix(c.Request.URL.Path, "/v2/") && strings.Contains(c.GetHeader("Accept"), "text/html") {
		s.page(c, http.StatusNotFound, components.NotFoundPage())
		return
	}
	s.fail(c, errs.Newf(errs.RouteNotFound, "No route %s %s.", c.Request.Method, c.Request.URL.Path))
}

// staticFiles serves the embedded assets; they change only with a release.
// Missing files and directories get the usual 404 (no listings).
func (s *server) staticFiles() gin.HandlerFunc {
	return func(c *gin.Context) {
		name := strings.TrimPrefix(c.Param("filepath"), "/")
		if st, err := iofs.Stat(static.FS, name); err != nil || st.IsDir() {
			s.notFound(c)
			return
		}
		c.Header("Cache-Control", "public, max-age=3600")
		c.Header("X-Content-Type-Options", "nosniff")
		http.ServeFileFS(c.Writer, c.Request, static.FS, name)
	}
}
