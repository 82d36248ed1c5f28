package surface

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/merchant"
)

// WithRequestID gives every request a fresh req_ id, echoed in
// X-Request-Id. An incoming X-Request-Id is not trusted (it would reach
// the logs).
func (k *Shared) WithRequestID(c *gin.Context) {
	id := ids.Batched(ids.Request)
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	c.Next()
}

// NoStore marks every answer as not to be cached or sniffed: API answers
// carry secrets (a webhook signing secret, sandbox amounts) and pages
// carry account details. The static files override Cache-Control.
func (k *Shared) NoStore(c *gin.Context) {
	h := c.Writer.Header()
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	c.Next()
}

// The values of NoStore's headers, shared by every answer rather than made
// for each: Header.Set replaces a value and Header.Add appends to a slice
// of capacity one, which copies it, so neither changes these.
var (
	noStore = []string{"no-store"}
	noSniff = []string{"nosniff"}
)

// hsts is the Strict-Transport-Security of production mode: two years,
// subdomains included.
const hsts = "max-age=63072000; includeSubDomains"

// hstsValue is hsts as the header's value, shared as NoStore's are.
var hstsValue = []string{hsts}

// StrictTransport sets Strict-Transport-Security on every answer in
// production mode (JSON, pages, redirects, errors and 404s alike): a
// browser that has seen any answer from the host keeps to HTTPS, whichever
// answer it saw first. Development serves plain HTTP on localhost, where
// HSTS would stick to every other local service on the host name.
func (k *Shared) StrictTransport(c *gin.Context) {
	if k.Production {
		c.Writer.Header()["Strict-Transport-Security"] = hstsValue
	}
	c.Next()
}

// BodyReadTimeout is how long a client has to send a request's body once
// its headers are in. Bodies are small (MaxBodyBytes, MaxFormBytes), so
// an honest client sends one at once; a client that trickles one holds a
// connection and a goroutine for this long, not for the server's whole
// ReadTimeout.
const BodyReadTimeout = 5 * time.Second

// aLongTimeAgo is a read deadline that has passed: it fails the next read
// at once.
var aLongTimeAgo = time.Unix(1, 0)

// GuardBody bounds how long a request's body may take (BodyReadTimeout)
// and keeps a body nobody reads from holding the connection. Over HTTP/1
// Go's server reads an unread body after the answer to reuse the
// connection, so a refused request (no key, rate limit, 404) would wait
// for a slow body before its answer went out. GuardBody marks each answer
// "Connection: close" until the body has been read to its end; an answer
// sent before then goes out at once, and the connection closes without
// reading further. Once the body is in, the deadline is lifted, so a
// background read during a long handler never cancels the request.
func (k *Shared) GuardBody(c *gin.Context) {
	r := c.Request
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		c.Next()
		return
	}
	rc := http.NewResponseController(c.Writer)
	// Writers without deadlines (httptest's recorder) have no connection to hold.
	_ = rc.SetReadDeadline(time.Now().Add(BodyReadTimeout))
	http1 := r.ProtoMajor == 1
	if http1 {
		c.Writer.Header().Set("Connection", "close")
	}
	b := &watchedBody{ReadCloser: r.Body, atEOF: func() {
		_ = rc.SetReadDeadline(time.Time{})
		if http1 {
			c.Writer.Header().Del("Connection")
		}
	}}
	r.Body = b
	c.Next()
	if !b.done {
		// The connection closes after this answer: fail the server's
		// drain of the rest at once instead of waiting for the client.
		_ = rc.SetReadDeadline(aLongTimeAgo)
	}
}

// watchedBody calls atEOF once, when the body has been read to its end.
type watchedBody struct {
	io.ReadCloser
	atEOF func()
	done  bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.atEOF()
	}
	return n, err
}

// Observe logs one JSON line per request and records its metrics. It never
// logs headers or bodies, so keys, account numbers and tokens stay out.
func (k *Shared) Observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	elapsed := time.Since(start)
	k.metrics.observe(c.Request.Method, route, status, elapsed)
	ctx := c.Request.Context()
	if !k.Log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	a := access{requestID: RequestID(c), method: c.Request.Method, route: route, status: status, latency: elapsed,
		errorCode: c.GetString(ctxErrorCode)}
	if p, found := c.Get(ctxPrincipal); found {
		pr := p.(merchant.Principal)
		a.principal, a.merchantID, a.environment = true, pr.Scope.MerchantID, string(pr.Scope.Env)
	}
	if route == "unmatched" {
		// Which address nobody serves; the path only (a query may hold
		// anything), valid UTF-8, at most 200 bytes.
		path := strings.ToValidUTF8(c.Request.URL.EscapedPath(), "?")
		a.unmatched, a.path = true, path[:min(len(path), 200)]
	}
	logAccess(ctx, k.Log.Handler(), &a, time.Now())
}

// Recover turns a panic into the 500 envelope and logs the stack.
func (k *Shared) Recover(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			k.Fail(c, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
		}
	}()
	c.Next()
}

// Metrics serves the Prometheus series.
func (k *Shared) Metrics() gin.HandlerFunc {
	return gin.WrapH(k.metrics.Handler())
}
