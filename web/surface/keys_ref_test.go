package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// exactKeysByTokens is exactKeys with encoding/json's token reader in
// place of the byte scan, under the same key rules (objectKeys): the
// reference the scan is held to (FuzzExactKeysAsTheTokensSay).
func exactKeysByTokens(raw []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if e, ok := errs.As(walkTokens(dec, t, "", 0)); ok {
		return e
	}
	return nil
}

// walkTokens reads one value from dec; t is the Go type it decodes into
// (nil when unknown) and path names it as the error's param does.
func walkTokens(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	if depth > maxKeyDepth {
		return errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	t = decodedType(t)
	switch tok {
	case json.Delim('{'):
		return walkObjectTokens(dec, t, path, depth)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkTokens(dec, elem, path, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}

func walkObjectTokens(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	keys := keysOf(t)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		name, vt, err := keys.take(path, k)
		if err != nil {
			return err
		}
		if err := walkTokens(dec, vt, name, depth+1); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// FuzzExactKeysAsTheTokensSay: on any valid JSON body the byte scan
// refuses what the token reader refuses, with the same param and
// message, and passes what it passes; on any other body it never panics
// and refuses only as invalid_request.
func FuzzExactKeysAsTheTokensSay(f *testing.F) {
	for _, s := range []string{`{"amount":1}`, `{"amount":1,"amount":2}`, `{"Amount":1}`, `{"inner":{"value":1,"value":2}}`,
		`{"list":[{"value":1},{"Value":2}]}`, `{"meta":{"a":{"value":1},"a":{}}}`, `{"raw":{"x":1,"x":2}}`, `{"self":{"A":1,"A":2}}`,
		`{"\u0061mount":1,"amount":2}`, `{"a\"b":1,"a\"b":2}`, `[{"x":1,"x":1}]`, `{"shared":"s","Shared":"t"}`, `{"amount":tru}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"a":18}`,
		`{"list":[1,2,[3,{"x":1,"x":2}]]}`, ` { "amount" : 1 , "inner" : { } } `, `{`, `{"a"`, `{"a":`, `{"a":1,}`, `"x"`, `1e3`} {
		f.Add([]byte(s))
	}
	t := reflect.TypeFor[*keysBody]()
	f.Fuzz(func(tt *testing.T, body []byte) {
		got := exactKeys(body, t)
		if got != nil && errs.CodeOf(got) != errs.InvalidRequest {
			tt.Fatalf("exactKeys(%q) = %v, not invalid_request", body, got)
		}
		if !json.Valid(body) {
			return
		}
		want := exactKeysByTokens(body, t)
		if fmt.Sprint(got) != fmt.Sprint(want) { // code, message and param
			tt.Fatalf("exactKeys(%q) = %v, the token reader says %v", body, got, want)
		}
	})
}

// BenchmarkExactKeys: a creation's body through the byte scan and through
// the token reader kept as its reference.
func BenchmarkExactKeys(b *testing.B) {
	body := []byte(`{"user_id":"cus_3aiotg6jpl3tmyuri5uluzzcee","routing_number":"021000021","account_number":"1000000012345",` +
		`"account_type":"checking","nickname":"Payroll","inner":{"value":1}}`)
	t := reflect.TypeFor[*keysBody]()
	for _, c := range []struct {
		name string
		fn   func([]byte, reflect.Type) error
	}{{"bytes", exactKeys}, {"tokens", exactKeysByTokens}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.fn(body, t)
			}
		})
	}
}
