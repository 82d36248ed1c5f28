package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// MaxBodyBytes is the largest request body accepted.
const MaxBodyBytes = 64 << 10

// ReadBody is middleware for POST, PUT, PATCH and DELETE: it reads at most
// MaxBodyBytes (413), requires Content-Type application/json on a POST
// with a body (415), and keeps the bytes for decode and the idempotency
// hash.
func (k *Shared) ReadBody(c *gin.Context) {
	r := c.Request
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		c.Next()
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			k.Fail(c, errs.Newf(errs.RequestTooLarge, "The request body is larger than %d KiB.", MaxBodyBytes>>10))
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			k.Fail(c, errs.Newf(errs.InvalidRequest, "The request body did not arrive within %d s of the request's headers.", int(BodyReadTimeout/time.Second)))
			return
		}
		k.Fail(c, errs.New(errs.InvalidRequest, "The request body could not be read."))
		return
	}
	// A POST with a body must say it is JSON; one without a body (test,
	// roll, redeliver, cancel, enable) needs no Content-Type.
	if r.Method == http.MethodPost && len(body) > 0 {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			k.Fail(c, errs.New(errs.UnsupportedMediaType, "Send the request body as JSON with Content-Type: application/json."))
			return
		}
	}
	c.Set(ctxBody, body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.Next()
}

// Body is the request body ReadBody kept.
func Body(c *gin.Context) []byte {
	body, _ := c.Get(ctxBody)
	raw, _ := body.([]byte)
	return raw
}

// Decode parses the kept body strictly into dst (a pointer to a struct):
// one JSON object, no unknown fields, no trailing data, exact JSON types,
// and every key exact and once (see exactKeys).
func Decode(c *gin.Context, dst any) error {
	raw := Body(c)
	if len(bytes.TrimSpace(raw)) == 0 {
		return errs.New(errs.InvalidRequest, "The request body is empty; send a JSON object.")
	}
	if !utf8.Valid(raw) {
		return errs.New(errs.InvalidRequest, "The request body is not valid UTF-8.")
	}
	if err := exactKeys(raw, reflect.TypeOf(dst)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if rest := raw[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return errs.New(errs.InvalidRequest, "The request body has data after the JSON object; send exactly one object.")
	}
	if name, found := nulField(reflect.ValueOf(dst), ""); found {
		return errs.Invalid(name, name+" must not contain a NUL character (\\u0000).")
	}
	return nil
}

// nulField finds a decoded string holding NUL (JSON's \u0000), which no
// field may hold, and names its field as the JSON does.
func nulField(v reflect.Value, name string) (string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nulField(v.Elem(), name)
		}
	case reflect.String:
		return name, strings.IndexByte(v.String(), 0) >= 0
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage: parsed by its own rules
			return "", false
		}
		for i := range v.Len() {
			if n, ok := nulField(v.Index(i), name); ok {
				return n, true
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if n, ok := nulField(v.MapIndex(k), name); ok {
				return n, true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			field := name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
				field = tag
			} else if !f.Anonymous {
				field = f.Name
			}
			if n, ok := nulField(v.Field(i), field); ok {
				return n, true
			}
		}
	}
	return "", false
}

// CleanText reports whether s is valid UTF-8 without NUL: what ids, path
// segments, cursors and query values must be before they reach a query.
func CleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

func decodeError(err error) error {
	if e, ok := errs.As(err); ok { // a field's own UnmarshalJSON said why
		return e
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errs.Newf(errs.InvalidRequest, "The request body is not valid JSON (at byte %d).", syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.New(errs.InvalidRequest, "The request body is not valid JSON (it ends too early).")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errs.New(errs.InvalidRequest, "The request body must be a JSON object.")
		}
		want := jsonKind(typ.Type)
		msg := fmt.Sprintf("%s must be %s, not %s.", typ.Field, want, article(typ.Value))
		if want == "a string" && typ.Value == "number" {
			msg = fmt.Sprintf("%s must be a JSON string, not a number: send it in quotes, e.g. \"%s\": \"…\".", typ.Field, typ.Field)
		}
		return errs.Invalid(typ.Field, msg)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ := strconv.Unquote(f)
		return errs.Invalid(name, fmt.Sprintf("Unknown field %q.", name))
	}
	return errs.New(errs.InvalidRequest, "The request body could not be parsed as the expected JSON object.")
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}

func article(jsonType string) string {
	switch jsonType {
	case "object", "array":
		return "an " + jsonType
	case "":
		return "this type"
	}
	return "a " + jsonType
}

// DecodeNone accepts an empty body or an empty JSON object, for POSTs
// that take no parameters.
func DecodeNone(c *gin.Context) error {
	if len(bytes.TrimSpace(Body(c))) == 0 {
		return nil
	}
	var none struct{}
	return Decode(c, &none)
}

// writeOK writes a success response: HTTP 200 and OKBody(v), encoded in a
// pooled buffer (the writer copies what it is given).
func writeOK(c *gin.Context, v any) {
	writePooled(func(buf *bytes.Buffer) bool {
		encodeOK(buf, v)
		writeJSON(c, http.StatusOK, buf.Bytes(), true)
		return true
	})
}

// writePooled runs write with an empty buffer of okBuffers, and gives it
// back unless it grew past 64 KiB; write reports whether it used it.
func writePooled(write func(buf *bytes.Buffer) bool) bool {
	buf := okBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	ok := write(buf)
	if buf.Cap() <= 64<<10 {
		okBuffers.Put(buf)
	}
	return ok
}

var okBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// jsonType is the Content-Type of JSON answers, one slice for all as
// Gin's own JSON rendering shares it: the header map's value is replaced,
// never written into.
var jsonType = []string{"application/json; charset=utf-8"}

// writeJSON answers status with body, JSON, without making the
// Content-Type's value for each answer (one already set stays): as
// c.Data(status, "application/json; charset=utf-8", body) does with
// length, which sets Content-Length, and as c.JSON does without.
func writeJSON(c *gin.Context, status int, body []byte, length bool) {
	c.Status(status)
	h := c.Writer.Header()
	if len(h["Content-Type"]) == 0 {
		h["Content-Type"] = jsonType
	}
	if length && len(body) > 0 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if _, err := c.Writer.Write(body); err != nil {
		_ = c.Error(err)
		c.Abort()
	}
}

// OKBody is the body of a success response: "success": true and the fields
// of v (a struct or map) at the top level.
func OKBody(v any) []byte {
	var buf bytes.Buffer
	encodeOK(&buf, v)
	return buf.Bytes()
}

// encodeOK appends OKBody(v) to buf: v's object encoded after
// {"success":true, with its opening brace turned into the comma.
func encodeOK(buf *bytes.Buffer, v any) {
	buf.WriteString(`{"success":true`)
	start := buf.Len()
	err := json.NewEncoder(buf).Encode(v) // as json.Marshal, and a newline
	if err != nil || buf.Len()-start < 3 || buf.Bytes()[start] != '{' {
		panic(fmt.Sprintf("writeOK: response must be a JSON object, got %T (%v)", v, err))
	}
	buf.Truncate(buf.Len() - 1)
	if buf.Len()-start == 2 { // {}
		buf.Truncate(start)
		buf.WriteByte('}')
		return
	}
	buf.Bytes()[start] = ','
}

// ListPage is the body of a list response (with success added by Reply).
type ListPage[T any] struct {
	Data    []T  `json:"data"`
	HasMore bool `json:"has_more"`
}

// ListOf is a page of a list as its response; an empty page is [] rather
// than null.
func ListOf[T any](items []T, more bool) ListPage[T] {
	if items == nil {
		items = []T{}
	}
	return ListPage[T]{Data: items, HasMore: more}
}

// Reply is how every API handler answers: v with success, or the error
// envelope of err.
func Reply[T any](k *Shared, c *gin.Context, v T, err error) {
	if err != nil {
		k.Fail(c, err)
		return
	}
	writeOK(c, v)
}

// List answers a list endpoint: the page from the query, then one page of
// fetch.
func List[T any](k *Shared, c *gin.Context, fetch func(context.Context, tenant.Scope, paging.Page) ([]T, bool, error)) {
	p, err := paging.Parse(c.Query("limit"), c.Query("starting_after"))
	if err != nil {
		k.Fail(c, err)
		return
	}
	items, more, err := fetch(c.Request.Context(), Scope(c), p)
	Reply(k, c, ListOf(items, more), err)
}
