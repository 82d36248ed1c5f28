package surface

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
)

// FuzzDecode: any body either decodes or yields invalid_request; never a panic.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"first_name":"A"}`, `{"first_name":1}`, `[]`, `{} {}`, `{"x":1}`, ``, `{"email":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
		c.Set(ctxBody, body)
		var in customer.Input
		if err := Decode(c, &in); err != nil && errs.CodeOf(err) != errs.InvalidRequest {
			t.Fatalf("Decode(%q) error without invalid_request: %v", body, err)
		}
	})
}
