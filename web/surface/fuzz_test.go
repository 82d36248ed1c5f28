package surface

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
)

// FuzzDecode: any body either decodes or yields invalid_request; never a
// panic. A body that decodes has each key once and exactly as its field
// is named.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"first_name":"A"}`, `{"first_name":1}`, `[]`, `{} {}`, `{"x":1}`, ``, `{"email":null}`,
		`{"first_name":"A","first_name":"B"}`, `{"First_name":"A"}`, `{"EMAIL":"a@example.com"}`, `{"first_name":"A","x":{"y":1,"y":2}}`} {
		f.Add([]byte(s))
	}
	var fields []string
	for f := range reflect.TypeFor[customer.Input]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
		c.Set(ctxBody, body)
		var in customer.Input
		err := Decode(c, &in)
		if err != nil && errs.CodeOf(err) != errs.InvalidRequest {
			t.Fatalf("Decode(%q) error without invalid_request: %v", body, err)
		}
		if err == nil {
			// customer.Input's values are scalars, so its object's tokens
			// alternate key and value.
			dec := json.NewDecoder(bytes.NewReader(body))
			seen := map[string]bool{}
			dec.Token() // '{'
			for n := 0; ; n++ {
				tok, err := dec.Token()
				if err != nil || tok == json.Delim('}') {
					break
				}
				k, _ := tok.(string)
				if n%2 == 1 {
					continue
				}
				if seen[k] || !slices.Contains(fields, k) {
					t.Fatalf("Decode(%q) took key %q (fields %v, seen %v)", body, k, fields, seen)
				}
				seen[k] = true
			}
		}
	})
}
