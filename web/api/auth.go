package api

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/web/surface"
)

// authenticate resolves the Bearer secret key. The environment comes from the
// key; a key presented on the other environment's host is refused.
func (s *Surface) authenticate(c *gin.Context) {
	h := c.GetHeader("Authorization")
	if h == "" {
		s.Fail(c, errs.New(errs.Unauthorized, "No API key given: send Authorization: Bearer <secret key>."))
		return
	}
	scheme, key, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		s.Fail(c, errs.New(errs.Unauthorized, "Use the Bearer scheme: Authorization: Bearer <secret key>."))
		return
	}
	// Parsed once: its shape, its environment and its hash.
	sk, err := merchant.ParseKey(strings.TrimSpace(key))
	if err != nil {
		s.Fail(c, err)
		return
	}
	if env := sk.Env; s.onOtherEnvironmentHost(c.Request, env) {
		s.Fail(c, errs.Newf(errs.Unauthorized, "This is a %s key; send it to %s.", env, s.Config.BaseURL(env).String()))
		return
	}
	p, err := s.Services.Merchants.AuthenticateKey(c.Request.Context(), sk)
	if err != nil {
		s.Fail(c, err)
		return
	}
	surface.SetPrincipal(c, p)
	c.Next()
}

// onOtherEnvironmentHost reports whether r was sent to the host of the
// environment that is not env. When both environments share a host, no
// request is refused for its host.
func (s *Surface) onOtherEnvironmentHost(r *http.Request, env tenant.Environment) bool {
	other := tenant.Production
	if env == tenant.Production {
		other = tenant.Sandbox
	}
	mine, theirs := hostName(s.Config.BaseURL(env).Host), hostName(s.Config.BaseURL(other).Host)
	return mine != theirs && hostName(r.Host) == theirs
}

// hostName is the name of a Host header or URL host, normalised so that
// spellings of one name compare equal: lower case, without the port (a
// default port or any other: the environments are told apart by name),
// without IPv6 brackets, and without the trailing dot of a fully
// qualified name ("API.example.:443" is "api.example").
func hostName(host string) string {
	// Without a colon there is no port: SplitHostPort would fail, and
	// make an error to say so.
	if strings.IndexByte(host, ':') >= 0 {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// rateLimit applies the per-key limit of the key's environment.
func (s *Surface) rateLimit(c *gin.Context) {
	p := surface.Principal(c)
	if wait, ok := s.limiter.Allow(p.KeyID, p.Scope.Env, s.Now()); !ok {
		s.Fail(c, surface.RateLimited(fmt.Sprintf("Too many requests for this API key; retry after %d s.", surface.RetryAfter(wait)), wait))
		return
	}
	c.Next()
}
