package hosted

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/internal/merchant"
)

// A merchant's brand reaches the page as two files from this origin, so
// the page's CSP stays as strict as without one (style-src and img-src
// 'self', no inline style): the accent as a stylesheet of custom
// properties, the logo as an image. Both addresses carry a version (the
// accent, the logo's hash); an address with the current version may be
// cached for good, since a change makes a new address.

// errNoBrandFile answers a brand file the merchant has not set.
var errNoBrandFile = errs.New(errs.NotFound, "No such file.")

// immutable is the Cache-Control of a brand file asked for by its current version.
const immutable = "public, max-age=31536000, immutable"

// brandCache answers a brand file's Cache-Control: for good when asked
// for by the current version, else revalidated on every use.
func brandCache(c *gin.Context, version string) {
	h := c.Writer.Header()
	if c.Query("v") == version {
		h.Set("Cache-Control", immutable)
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// theme serves the accent as custom properties that static/css/base.css
// reads: the button's colour, its text (white or black, whichever reads
// at 4.5:1), its hover, and the focus ring and links, which fall back to
// the page's ink where the accent is too light on white (3:1 for a ring,
// 4.5:1 for text).
func (s *Surface) theme(c *gin.Context) {
	b, err := s.links.Brand(c.Request.Context(), c.Param("public_key"))
	if err == nil && b.Accent == "" {
		err = errNoBrandFile
	}
	if err != nil {
		s.Fail(c, err)
		return
	}
	focus, link := b.Accent, b.Accent
	if merchant.Contrast(b.Accent, "#ffffff") < 3 {
		focus = "var(--ink)"
	}
	if merchant.Contrast(b.Accent, "#ffffff") < 4.5 {
		link = "var(--ink)"
	}
	css := fmt.Sprintf(":root {\n  --accent: %s;\n  --on-accent: %s;\n  --accent-hover: %s;\n  --focus: %s;\n  --link: %s;\n}\n",
		b.Accent, merchant.OnAccent(b.Accent), merchant.AccentHover(b.Accent), focus, link)
	brandCache(c, strings.TrimPrefix(b.Accent, "#"))
	c.Data(http.StatusOK, "text/css; charset=utf-8", []byte(css))
}

// logo serves the merchant's logo with the type its bytes showed at
// upload. Its own CSP keeps it inert if opened as a document.
func (s *Surface) logo(c *gin.Context) {
	l, err := s.links.Logo(c.Request.Context(), c.Param("public_key"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	brandCache(c, fmt.Sprintf("%x", l.SHA256)[:hostedlink.LogoVersionLen])
	c.Header("Content-Security-Policy", "default-src 'none'; sandbox")
	c.Data(http.StatusOK, l.Type, l.Data)
}
