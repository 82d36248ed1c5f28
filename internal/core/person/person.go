// Package person validates the contact details people type: names and email
// addresses of merchants and customers.
package person

import (
	"net/mail"
	"strconv"
	"strings"
	"unicode"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// MaxEmailLen is the longest email address accepted (RFC 5321 path limit).
const MaxEmailLen = 254

// ValidEmail reports whether s is a bare address (no display name, no
// surrounding spaces) whose domain has a dot, at most MaxEmailLen bytes.
func ValidEmail(s string) bool {
	if s == "" || len(s) > MaxEmailLen {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	domain := s[strings.LastIndexByte(s, '@')+1:]
	return strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".") && !strings.HasPrefix(domain, ".")
}

// Email trims s and checks it, returning invalid_request on param otherwise.
func Email(param, s string) (string, error) {
	s = strings.TrimSpace(s)
	if !ValidEmail(s) {
		return "", errs.Invalid(param, param+" must be a valid address like name@example.com")
	}
	return s, nil
}

// Presence says whether a name may be empty.
type Presence int

// The two presences.
const (
	Required Presence = iota
	Optional
)

// Name trims v and checks it: at most max characters, no control
// characters, and not empty when Required.
func Name(param, v string, max int, presence Presence) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" && presence == Required:
		return "", errs.Invalid(param, param+" is required")
	case len([]rune(v)) > max:
		return "", errs.Invalid(param, param+" must be at most "+strconv.Itoa(max)+" characters")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", errs.Invalid(param, param+" must not contain control characters")
	}
	return v, nil
}
