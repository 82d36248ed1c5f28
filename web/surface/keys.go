package surface

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// exactKeys refuses a body that encoding/json would read differently from
// a reader that takes keys literally: a key that appears twice in one
// object (encoding/json keeps the last, others the first) and a key that
// names a field of t only when case is ignored (encoding/json folds case,
// others do not). It scans the body alongside t, so nested objects are
// held to the same rule; where t says nothing (a map, json.RawMessage, a
// type with its own decoding) only duplicates are refused. A body that is
// not valid JSON passes here and is refused by the decoder with its
// position.
//
// The scan reads bytes, not encoding/json's tokens: every request with a
// body passes here, and a token reader allocates for each key and value.
// Only a key with an escape is decoded, by encoding/json itself.
func exactKeys(raw []byte, t reflect.Type) error {
	s := keyScanner{raw: raw}
	if e, ok := errs.As(s.value(t, "", 0)); ok {
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

	errTooDeep   = errors.New("nested too deep")
	errMalformed = errors.New("not JSON") // the decoder says where
)

// keyScanner reads one JSON value from raw at i.
type keyScanner struct {
	raw []byte
	i   int
}

// space skips JSON's whitespace.
func (s *keyScanner) space() {
	for s.i < len(s.raw) {
		switch s.raw[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// at reports whether the next byte, after whitespace, is c, and takes it.
func (s *keyScanner) at(c byte) bool {
	s.space()
	if s.i < len(s.raw) && s.raw[s.i] == c {
		s.i++
		return true
	}
	return false
}

// value reads one value; t is the Go type it decodes into (nil when
// unknown) and path names it as the error's param does.
func (s *keyScanner) value(t reflect.Type, path string, depth int) error {
	if depth > maxKeyDepth {
		return errTooDeep
	}
	s.space()
	if s.i >= len(s.raw) {
		return errMalformed
	}
	t = decodedType(t)
	switch s.raw[s.i] {
	case '{':
		s.i++
		return s.object(t, path, depth)
	case '[':
		s.i++
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		if s.at(']') {
			return nil
		}
		for {
			if err := s.value(elem, path, depth+1); err != nil {
				return err
			}
			if s.at(']') {
				return nil
			}
			if !s.at(',') {
				return errMalformed
			}
		}
	case '"':
		_, err := s.str()
		return err
	}
	// A number or a literal: its end is the next delimiter.
	for s.i < len(s.raw) {
		switch s.raw[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		s.i++
	}
	return nil
}

// str reads a string at i (its opening quote) and returns it with its
// quotes, as written.
func (s *keyScanner) str() ([]byte, error) {
	start := s.i
	for s.i++; s.i < len(s.raw); s.i++ {
		switch s.raw[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return s.raw[start:s.i], nil
		}
	}
	return nil, errMalformed
}

// key is a key as encoding/json reads it: escapes decoded, and bytes that
// are not UTF-8 replaced.
func key(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return "", errMalformed
	}
	return k, nil
}

// objectKeys checks the keys of one object decoded into t, in order: each
// once, and, for a struct, none that names a field only when case is
// ignored.
type objectKeys struct {
	fields map[string]reflect.Type // a struct's
	elem   reflect.Type            // a map's values'
	seen   keySet
}

func keysOf(t reflect.Type) objectKeys {
	var o objectKeys
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			o.fields = structFields(t)
		case reflect.Map:
			o.elem = t.Elem()
		}
	}
	return o
}

// take checks the object's next key k (path names the object); it
// returns the key's path and the type its value decodes into (nil when
// unknown).
func (o *objectKeys) take(path, k string) (string, reflect.Type, error) {
	name := k
	if path != "" {
		name = path + "." + k
	}
	if o.seen.add(k) {
		return "", nil, errs.Invalid(name, fmt.Sprintf("The key %q appears more than once; send each key once.", name))
	}
	if o.fields == nil {
		return name, o.elem, nil
	}
	ft, exact := o.fields[k]
	if !exact {
		if want, ok := foldMatch(o.fields, k); ok {
			if path != "" {
				want = path + "." + want
			}
			return "", nil, errs.Invalid(name, fmt.Sprintf("Unknown field %q: keys are case-sensitive; did you mean %q?", name, want))
		}
	}
	return name, ft, nil
}

// smallObject is how many keys a keySet finds duplicates among by a scan;
// a larger object's keys go into a map.
const smallObject = 16

// keySet is the keys of one object so far.
type keySet struct {
	few  [smallObject]string
	n    int
	many map[string]bool
}

// add adds k and reports whether the set held it already.
func (ks *keySet) add(k string) bool {
	if ks.many == nil {
		if slices.Contains(ks.few[:ks.n], k) {
			return true
		}
		if ks.n < smallObject {
			ks.few[ks.n] = k
			ks.n++
			return false
		}
		ks.many = make(map[string]bool, 2*smallObject)
		for _, x := range ks.few {
			ks.many[x] = true
		}
	}
	if ks.many[k] {
		return true
	}
	ks.many[k] = true
	return false
}

func (s *keyScanner) object(t reflect.Type, path string, depth int) error {
	if s.at('}') {
		return nil
	}
	keys := keysOf(t)
	for {
		s.space()
		if s.i >= len(s.raw) || s.raw[s.i] != '"' {
			return errMalformed
		}
		quoted, err := s.str()
		if err != nil {
			return err
		}
		k, err := key(quoted)
		if err != nil {
			return err
		}
		name, vt, err := keys.take(path, k)
		if err != nil {
			return err
		}
		if !s.at(':') {
			return errMalformed
		}
		if err := s.value(vt, name, depth+1); err != nil {
			return err
		}
		if s.at('}') {
			return nil
		}
		if !s.at(',') {
			return errMalformed
		}
	}
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

// fieldsOf keeps each struct type's structFields: the types are few and
// fixed, and every body is checked against one.
var fieldsOf sync.Map // reflect.Type → map[string]reflect.Type

// structFields are the JSON keys of struct type t as encoding/json names
// them (tag name, else field name; fields of untagged embedded structs
// promoted) with their types. The map is shared: never write to it.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldsOf.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := readStructFields(t)
	fieldsOf.Store(t, m)
	return m
}

func readStructFields(t reflect.Type) map[string]reflect.Type {
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
