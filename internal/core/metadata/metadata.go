// Package metadata is the merchant's own key-value data on its customers,
// funding sources, payments and subscriptions: at most MaxKeys string keys
// of at most MaxKeyLength characters, each with a string value of at most
// MaxValueLength characters. The service never reads it; it keeps it,
// returns it with the object and filters payments by it.
//
// A request's metadata is a patch: at creation it is the object's
// metadata, at an update it is merged into what the object has, and a key
// set to "" is removed in both. The limits are judged on the result, so an
// update that removes a key may add another to an object already at
// MaxKeys. Characters are counted as Unicode code points, as the API's
// other lengths are.
package metadata

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// Limits of an object's metadata.
const (
	MaxKeys        = 20
	MaxKeyLength   = 40
	MaxValueLength = 500
)

// Metadata is an object's metadata; nil and empty are the same and both
// are written as {}.
type Metadata map[string]string

// MarshalJSON writes {} for no metadata, never null.
func (m Metadata) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]string(m))
}

// Value is the jsonb column's value.
func (m Metadata) Value() (driver.Value, error) {
	b, err := m.MarshalJSON()
	return string(b), err
}

// Scan reads the jsonb column.
func (m *Metadata) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*m = nil
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("metadata: cannot scan %T", src)
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if len(out) == 0 {
		out = nil
	}
	*m = out
	return nil
}

// New is the metadata of a new object from the request's patch: its keys
// with a value, checked against the limits.
func New(patch Metadata) (Metadata, error) {
	return Apply(nil, patch)
}

// Apply merges patch into current: a key set to "" is removed, any other
// set. The result is checked against the limits; current is not changed.
func Apply(current, patch Metadata) (Metadata, error) {
	out := maps.Clone(current)
	for k, v := range patch {
		if err := checkKey(k); err != nil {
			return nil, err
		}
		if v == "" {
			delete(out, k)
			continue
		}
		if utf8.RuneCountInString(v) > MaxValueLength {
			return nil, errs.Invalid("metadata", "metadata value of "+strconv.Quote(k)+" is longer than "+strconv.Itoa(MaxValueLength)+" characters")
		}
		if out == nil {
			out = Metadata{}
		}
		out[k] = v
	}
	if len(out) > MaxKeys {
		return nil, errs.Invalid("metadata", "metadata holds at most "+strconv.Itoa(MaxKeys)+" keys")
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func checkKey(k string) error {
	switch {
	case k == "":
		return errs.Invalid("metadata", "metadata keys must not be empty")
	case utf8.RuneCountInString(k) > MaxKeyLength:
		return errs.Invalid("metadata", "metadata keys are at most "+strconv.Itoa(MaxKeyLength)+" characters")
	}
	return nil
}

// Filter is a list's metadata condition: every key's value must be as
// given. It is checked like a patch's keys, and a value may not be "".
func Filter(f map[string]string) (Metadata, error) {
	if len(f) > MaxKeys {
		return nil, errs.Invalid("metadata", "a list filters by at most "+strconv.Itoa(MaxKeys)+" metadata keys")
	}
	for k, v := range f {
		if err := checkKey(k); err != nil {
			return nil, err
		}
		if v == "" || utf8.RuneCountInString(v) > MaxValueLength {
			return nil, errs.Invalid("metadata", "metadata["+k+"] must be a value of 1 to "+strconv.Itoa(MaxValueLength)+" characters")
		}
	}
	if len(f) == 0 {
		return nil, nil
	}
	return Metadata(f), nil
}
