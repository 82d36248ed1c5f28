package surface

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
)

type keysInner struct {
	Value int    `json:"value"`
	Note  string `json:"note,omitempty"`
}

type keysEmbedded struct {
	Shared string `json:"shared"`
}

type selfDecoding struct{ raw string }

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	s.raw = string(b)
	return nil
}

type keysBody struct {
	keysEmbedded
	Amount   int                  `json:"amount"`
	Inner    keysInner            `json:"inner"`
	Ptr      *keysInner           `json:"ptr"`
	List     []keysInner          `json:"list"`
	Meta     map[string]keysInner `json:"meta"`
	Raw      json.RawMessage      `json:"raw"`
	Self     selfDecoding         `json:"self"`
	Untagged string
	Skipped  string `json:"-"`
}

func decodeBody(t *testing.T, body string) error {
	t.Helper()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	c.Set(ctxBody, []byte(body))
	var in keysBody
	return Decode(c, &in)
}

// TestDecodeRefusesDuplicateAndCaseFoldedKeys: a key twice in any object,
// and a key that names a struct field only when case is ignored, at any
// depth, are invalid_request naming the key by its path; exact keys once
// each decode.
func TestDecodeRefusesDuplicateAndCaseFoldedKeys(t *testing.T) {
	ok := `{"shared":"s","amount":1,"inner":{"value":2,"note":"n"},"ptr":{"value":3},"list":[{"value":4},{"value":5}],` +
		`"meta":{"a":{"value":6},"A":{"value":7}},"raw":{"x":1,"X":2},"self":{"Any":1,"any":2},"Untagged":"u"}`
	if err := decodeBody(t, ok); err != nil {
		t.Fatalf("exact keys once each: %v", err)
	}
	for _, c := range []struct{ body, param string }{
		{`{"amount":1,"amount":2}`, "amount"},
		{`{"amount":1,"am\u006funt":1}`, "amount"},
		{`{"Amount":1}`, "Amount"},
		{`{"AMOUNT":1}`, "AMOUNT"},
		{`{"Shared":"s"}`, "Shared"},
		{`{"untagged":"u"}`, "untagged"},
		{`{"inner":{"value":1,"value":2}}`, "inner.value"},
		{`{"inner":{"Value":1}}`, "inner.Value"},
		{`{"inner":{"note":"a","NOTE":"b"}}`, "inner.NOTE"},
		{`{"ptr":{"VALUE":1}}`, "ptr.VALUE"},
		{`{"list":[{"value":1},{"vAlue":2}]}`, "list.vAlue"},
		{`{"list":[{"value":1,"value":1}]}`, "list.value"},
		{`{"meta":{"a":{"value":1},"a":{"value":2}}}`, "meta.a"},
		{`{"meta":{"a":{"Value":1}}}`, "meta.a.Value"},
		{`{"raw":{"x":{"y":1,"y":2}}}`, "raw.x.y"},
		{`{"self":{"k":1,"k":2}}`, "self.k"},
		{"{\"\u017Fhared\":\"s\"}", "\u017Fhared"}, // the long s folds to s, as encoding/json folds it
	} {
		err := decodeBody(t, c.body)
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidRequest {
			t.Errorf("%s: %v, want invalid_request", c.body, err)
			continue
		}
		if e.Param != c.param {
			t.Errorf("%s: param %q, want %q (%s)", c.body, e.Param, c.param, e.Message)
		}
	}
	// A body that is not valid JSON keeps the decoder's own message.
	err := decodeBody(t, `{"amount":1,"inner":`)
	if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || !strings.Contains(e.Message, "not valid JSON") {
		t.Errorf("truncated body: %v", err)
	}
}
