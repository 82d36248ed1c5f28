package api

import (
	"bytes"
	"maps"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/web/surface"
)

// handler is an API route's handler: it calls the domain services it is
// given, svc.
type handler func(c *gin.Context, svc Services)

// run runs h on the pool's services.
func (s *Surface) run(h handler) gin.HandlerFunc {
	return func(c *gin.Context) { h(c, s.Services) }
}

// once runs a POST with an Idempotency-Key at most once: h runs on the
// services of the request's transaction, in which the claim on the key,
// the request's writes and its answer commit together; a replay returns
// the first status and body with Idempotent-Replayed: true. Without a key,
// h runs on the pool's services.
func (s *Surface) once(h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, ok := s.idempotencyRequest(c)
		switch {
		case !ok:
		case req == nil:
			h(c, s.Services)
		default:
			s.runIdempotent(c, *req, h)
		}
	}
}

// onceAfter is once for a POST that must ask a service over the network
// first (a bank-linking provider): ask runs on the pool's services before
// any transaction, so no claim or lock waits on the network, and its
// answer, or its refusal, is what h then writes or answers in the
// request's transaction. A replay returns the first answer whatever ask
// said this time.
func onceAfter[T any](s *Surface, ask func(c *gin.Context) (T, error), h func(c *gin.Context, svc Services, asked T, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, ok := s.idempotencyRequest(c)
		if !ok {
			return
		}
		asked, err := ask(c)
		run := func(c *gin.Context, svc Services) { h(c, svc, asked, err) }
		if req == nil {
			run(c, s.Services)
			return
		}
		s.runIdempotent(c, *req, run)
	}
}

// idempotencyRequest is the request's Idempotency-Key, nil when it has none
// (or is no POST); false when the header is refused (answered already).
func (s *Surface) idempotencyRequest(c *gin.Context) (*idempotency.Request, bool) {
	key := c.GetHeader("Idempotency-Key")
	if c.Request.Method != http.MethodPost || key == "" {
		return nil, true
	}
	if len(key) > 255 || !printableASCII(key) {
		s.Fail(c, errs.Invalid("Idempotency-Key", "The Idempotency-Key header must be 1 to 255 printable ASCII characters."))
		return nil, false
	}
	return &idempotency.Request{Scope: surface.Scope(c), Key: key, Now: s.Now(),
		Hash: idempotency.RequestHash(s.Config.IdempotencyKey, c.Request.Method, c.Request.URL.Path, surface.Body(c))}, true
}

// runIdempotent runs h under req (IdempotencyStore.Idempotent) on the
// services of its transaction: h's answer is held until the transaction
// commits, a 5xx is not kept, and a refused claim is answered instead.
func (s *Surface) runIdempotent(c *gin.Context, req idempotency.Request, h handler) {
	before := c.Writer.Header().Clone() // the headers every answer carries
	var resp idempotency.Response
	replay, err := s.Idempotency.Idempotent(c.Request.Context(), req, func(tx Services) (idempotency.Response, bool) {
		resp = buffered(c, func() { h(c, tx) })
		return resp, resp.Status < 500
	})
	s.answerIdempotent(c, before, resp, replay, err)
}

// buffered runs write with c's response held back and returns the
// response it wrote, to be sent once the transaction behind it commits.
// The headers it sets go to c's writer at once (answerIdempotent drops them
// when nothing commits).
func buffered(c *gin.Context, write func()) idempotency.Response {
	orig := c.Writer
	buf := &bufferedWriter{ResponseWriter: orig, status: http.StatusOK}
	c.Writer = buf
	defer func() { c.Writer = orig }() // also on panic, so recovery writes for real
	write()
	return idempotency.Response{Status: buf.status, Body: buf.body.Bytes()}
}

// answerIdempotent sends the outcome of an idempotent request whose
// answer, resp, was rendered by buffered: err when the request was refused
// or did not commit, else the stored response's replay, else resp. before
// are the headers c carried before the request ran.
func (s *Surface) answerIdempotent(c *gin.Context, before http.Header, resp idempotency.Response, replay *idempotency.Response, err error) {
	switch {
	case err != nil:
		// Nothing was committed; whatever the handler wrote is void, but
		// not the headers set before it ran.
		h := c.Writer.Header()
		clear(h)
		maps.Copy(h, before)
		s.Fail(c, err)
	case replay != nil:
		s.replay(c, replay)
	default:
		c.Writer.WriteHeader(resp.Status)
		_, _ = c.Writer.Write(resp.Body)
	}
}

// replay answers with a stored first response.
func (s *Surface) replay(c *gin.Context, r *idempotency.Response) {
	c.Header("Idempotent-Replayed", "true")
	c.Data(r.Status, "application/json; charset=utf-8", r.Body)
	c.Abort()
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
