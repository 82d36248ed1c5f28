package surface

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestOKBodyIsSuccessAndTheObjectsFields: the success body is
// "success": true followed by the fields of the object, byte for byte as
// json.Marshal writes them (HTML escaped), for a struct, a map and an
// empty object; anything but an object panics.
func TestOKBodyIsSuccessAndTheObjectsFields(t *testing.T) {
	type view struct {
		ID   string            `json:"id"`
		Note string            `json:"note"`
		Tags map[string]string `json:"tags"`
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{view{ID: "fs_1", Note: "<a & b>", Tags: map[string]string{"k": "v"}},
			`{"success":true,"id":"fs_1","note":"\u003ca \u0026 b\u003e","tags":{"k":"v"}}`},
		{map[string]int{"b": 2, "a": 1}, `{"success":true,"a":1,"b":2}`},
		{struct{}{}, `{"success":true}`},
	} {
		got := string(OKBody(c.v))
		if got != c.want {
			t.Errorf("OKBody(%#v) = %s, want %s", c.v, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("OKBody(%#v) is not JSON: %s", c.v, got)
		}
	}
	for _, bad := range []any{[]int{1}, "text", nil} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("OKBody(%#v) did not panic", bad)
				}
			}()
			OKBody(bad)
		}()
	}
}

// TestAnswersAreGinsBytes: a success and an error envelope are written
// byte for byte as c.Data and c.AbortWithStatusJSON write them, with the
// same status and Content-Type, HTML-escaped text and details included.
func TestAnswersAreGinsBytes(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	k := New(slog.New(slog.DiscardHandler), time.Now, false, nil)
	serve := func(h gin.HandlerFunc) *httptest.ResponseRecorder {
		r := gin.New()
		r.GET("/x", func(c *gin.Context) { c.Set(ctxRequestID, "req_1") }, h)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
		return w
	}
	same := func(name string, got, want *httptest.ResponseRecorder) {
		t.Helper()
		if got.Code != want.Code || got.Body.String() != want.Body.String() || fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) {
			t.Errorf("%s: %d %v %s, want %d %v %s", name, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
	}
	for _, e := range []error{
		errs.New(errs.FundingSourceNotFound, "No funding source <fs_1> & no other."),
		errs.Invalid("amount", "amount must be \"positive\" \u2028 é"),
		RateLimited("Too many requests.", 3*time.Second),
		errs.New(errs.AccountCheckFailed, "failed").WithDetail("reasons", []string{"a<b", "c"}).
			WithDetail("nested", map[string]any{"z": 1.5, "a": nil}).WithDetail("code", "overridden"),
		fmt.Errorf("wrapped: %w", errs.New(errs.Conflict, "busy")),
		fmt.Errorf("no code at all"),
	} {
		got := serve(func(c *gin.Context) { k.Fail(c, e) })
		want := serve(func(c *gin.Context) {
			o := k.Resolve(c, e)
			body := map[string]any{"code": o.Code, "message": o.Message, "request_id": RequestID(c)}
			if o.Param != "" {
				body["param"] = o.Param
			}
			for key, v := range o.Details {
				body[key] = v
			}
			c.AbortWithStatusJSON(o.Status, errorEnvelope{Success: false, Error: body})
		})
		same(e.Error(), got, want)
	}
	v := map[string]any{"id": "fs_<1>", "amount": "1.00", "at": time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC)}
	want := serve(func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", OKBody(v)) })
	same("success", serve(func(c *gin.Context) { Reply(k, c, v, nil) }), want)
}
