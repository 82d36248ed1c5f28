package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/ids"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/postgres"
	"github.com/fundsource/fundsource/internal/tenant"
)

// Keys of values kept on the gin context.
const (
	ctxRequestID = "fundsource.request_id"
	ctxPrincipal = "fundsource.principal"
	ctxBody      = "fundsource.body"
	ctxErrorCode = "fundsource.error_code"
)

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// principal is the authenticated merchant and environment of an API request.
func principal(c *gin.Context) merchant.Principal {
	p, _ := c.Get(ctxPrincipal)
	return p.(merchant.Principal)
}

func scope(c *gin.Context) tenant.Scope { return principal(c).Scope }

// withRequestID gives every request a fresh req_ id, echoed in X-Request-Id.
// An incoming X-Request-Id is not trusted (it would reach the logs).
func (s *server) withRequestID(c *gin.Context) {
	id := ids.New(ids.Request)
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	c.Next()
}

// observe logs one JSON line per request and records its metrics. It never
// logs headers or bodies, so keys, account numbers and tokens stay out.
func (s *server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	elapsed := time.Since(start)
	s.metrics.observe(c.Request.Method, route, status, elapsed)
	attrs := []slog.Attr{
		slog.String("request_id", requestID(c)),
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("latency_ms", float64(elapsed.Microseconds())/1000),
	}
	if p, ok := c.Get(ctxPrincipal); ok {
		pr := p.(merchant.Principal)
		attrs = append(attrs, slog.String("merchant_id", pr.Scope.MerchantID), slog.String("environment", string(pr.Scope.Env)))
	}
	if code := c.GetString(ctxErrorCode); code != "" {
		attrs = append(attrs, slog.String("error_code", code))
	}
	s.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request", attrs...)
}

// recoverPanic turns a panic into the 500 envelope and logs the stack.
func (s *server) recoverPanic(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.fail(c, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
		}
	}()
	c.Next()
}

// authenticate resolves the Bearer secret key. The environment comes from the
// key; a key presented on the other environment's host is refused.
func (s *server) authenticate(c *gin.Context) {
	h := c.GetHeader("Authorization")
	if h == "" {
		s.fail(c, errs.New(errs.Unauthorized, "No API key given: send Authorization: Bearer <secret key>."))
		return
	}
	scheme, key, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		s.fail(c, errs.New(errs.Unauthorized, "Use the Bearer scheme: Authorization: Bearer <secret key>."))
		return
	}
	key = strings.TrimSpace(key)
	env, err := merchant.ParseSecretKey(key)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.onOtherEnvironmentHost(c.Request, env) {
		s.fail(c, errs.Newf(errs.Unauthorized, "This is a %s key; send it to %s.", env, s.cfg.BaseURL(env).String()))
		return
	}
	p, err := s.merchants.Authenticate(c.Request.Context(), key)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

// onOtherEnvironmentHost reports whether r was sent to the host of the
// environment that is not env. When both environments share a host, no
// request is refused for its host.
func (s *server) onOtherEnvironmentHost(r *http.Request, env tenant.Environment) bool {
	other := tenant.Production
	if env == tenant.Production {
		other = tenant.Sandbox
	}
	mine, theirs := s.cfg.BaseURL(env).Hostname(), s.cfg.BaseURL(other).Hostname()
	if strings.EqualFold(mine, theirs) {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.EqualFold(strings.Trim(host, "[]"), theirs)
}

// rateLimit applies the per-key limit of the key's environment.
func (s *server) rateLimit(c *gin.Context) {
	p := principal(c)
	if wait, ok := s.limiter.allow(p.KeyID, p.Scope.Env, s.now()); !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		if secs < 1 {
			secs = 1
		}
		s.fail(c, errs.Newf(errs.RateLimited, "Too many requests for this API key; retry after %d s.", secs).
			WithDetail("retry_after", strconv.Itoa(secs)))
		return
	}
	c.Next()
}

// idempotency makes a POST with an Idempotency-Key run at most once: the
// response and the request's writes commit in one transaction, and a replay
// returns the first status and body with Idempotent-Replayed: true.
func (s *server) idempotency(c *gin.Context) {
	key := c.GetHeader("Idempotency-Key")
	if c.Request.Method != http.MethodPost || key == "" {
		c.Next()
		return
	}
	if len(key) > 255 || !printableASCII(key) {
		s.fail(c, errs.Invalid("Idempotency-Key", "The Idempotency-Key header must be 1 to 255 printable ASCII characters."))
		return
	}
	body, _ := c.Get(ctxBody)
	raw, _ := body.([]byte)
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", c.Request.Method, c.Request.URL.Path)
	h.Write(raw)

	orig, origReq := c.Writer, c.Request
	buf := &bufferedWriter{ResponseWriter: orig, status: http.StatusOK}
	defer func() { c.Writer, c.Request = orig, origReq }() // also on panic, so recovery writes for real
	replay, err := s.idem.Idempotent(c.Request.Context(), scope(c), key, h.Sum(nil), s.now(),
		func(ctx context.Context) (postgres.Response, bool) {
			c.Request = origReq.WithContext(ctx)
			c.Writer = buf
			c.Next()
			return postgres.Response{Status: buf.status, Body: buf.body.Bytes()}, buf.status < 500
		})
	c.Writer, c.Request = orig, origReq
	switch {
	case err != nil:
		// Nothing was committed; whatever the handler wrote is void.
		for k := range orig.Header() {
			if k != "X-Request-Id" {
				orig.Header().Del(k)
			}
		}
		s.fail(c, err)
	case replay != nil:
		c.Header("Idempotent-Replayed", "true")
		c.Data(replay.Status, "application/json; charset=utf-8", replay.Body)
		c.Abort()
	default:
		orig.WriteHeader(buf.status)
		_, _ = orig.Write(buf.body.Bytes())
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// bufferedWriter holds a response until the transaction behind it commits.
type bufferedWriter struct {
	gin.ResponseWriter
	status  int
	written bool
	body    bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(code int) {
	if !w.written {
		w.status = code
	}
}
func (w *bufferedWriter) WriteHeaderNow()             { w.written = true }
func (w *bufferedWriter) Write(b []byte) (int, error) { w.written = true; return w.body.Write(b) }
func (w *bufferedWriter) WriteString(s string) (int, error) {
	w.written = true
	return w.body.WriteString(s)
}
func (w *bufferedWriter) Status() int   { return w.status }
func (w *bufferedWriter) Size() int     { return w.body.Len() }
func (w *bufferedWriter) Written() bool { return w.written }
func (w *bufferedWriter) Flush()        {}
