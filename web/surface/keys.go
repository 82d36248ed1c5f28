package surface

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// exactKeys refuses a body that encoding/json would read differently from
// a reader that takes keys literally: a key that appears twice in one
// object (encoding/json keeps the last, others the first) and a key that
// names a field of t only when case is ignored (encoding/json folds case,
// others do not). It walks the tokens alongside t, so nested objects are
// held to the same rule; where t says nothing (a map, json.RawMessage, a
// type with its own decoding) only duplicates are refused. A body that is
// not valid JSON passes here and is refused by the decoder with its
// position.
func exactKeys(raw []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if e, ok := errs.As(walkValue(dec, t, "", 0)); ok {
		return e
	}
	return nil
}

// maxKeyDepth matches encoding/json's nesting limit: deeper bodies are
// the decoder's to refuse.
const maxKeyDepth = 10000

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// walkValue reads one value from dec; t is the Go type it decodes into
// (nil when unknown) and path names it as the error's param does.
func walkValue(dec *json.Decoder, t reflect.Type, path string, depth int) error {
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
		return walkObject(dec, t, path, depth)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkValue(dec, elem, path, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}

var errTooDeep = errors.New("nested too deep")

func walkObject(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = structFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		name := key
		if path != "" {
			name = path + "." + key
		}
		if seen[key] {
			return errs.Invalid(name, fmt.Sprintf("The key %q appears more than once; send each key once.", name))
		}
		seen[key] = true
		vt := elem
		if fields != nil {
			ft, exact := fields[key]
			if !exact {
				if want, ok := foldMatch(fields, key); ok {
					wanted := want
					if path != "" {
						wanted = path + "." + want
					}
					return errs.Invalid(name, fmt.Sprintf("Unknown field %q: keys are case-sensitive; did you mean %q?", name, wanted))
				}
			}
			vt = ft
		}
		if err := walkValue(dec, vt, name, depth+1); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// decodedType is the type whose shape the JSON takes: pointers followed,
// and nil for a type that decodes itself, whose keys are its own affair.
func decodedType(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
			t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
			return nil
		}
		if t.Kind() != reflect.Pointer {
			return t
		}
		t = t.Elem()
	}
	return nil
}

// structFields are the JSON keys of struct type t as encoding/json names
// them (tag name, else field name; fields of untagged embedded structs
// promoted) with their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct && depth < 8 {
					add(ft, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, taken := out[name]; !taken || depth == 0 {
				out[name] = f.Type
			}
		}
	}
	add(t, 0)
	return out
}

// foldMatch finds the field that key names only when case is ignored, as
// encoding/json ignores it (Unicode simple folding, as strings.EqualFold).
func foldMatch(fields map[string]reflect.Type, key string) (string, bool) {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return name, true
		}
	}
	return "", false
}
