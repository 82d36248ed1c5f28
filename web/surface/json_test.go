package surface

import (
	"encoding/json"
	"testing"
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
