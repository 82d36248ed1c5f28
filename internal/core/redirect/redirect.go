// Package redirect decides where the hosted page may send a customer: the
// merchant's successUrl and cancelUrl. A redirect target is an absolute
// http(s) URL without user-info, backslashes or control characters; in a
// production environment it must be https and its origin must be one the
// merchant allowed. In sandbox, where anyone can sign up, an origin must be
// allowed too, except loopback ones while the merchant has allowed none: a
// free sandbox link can never send a customer to another site.
package redirect

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MaxLen is the longest redirect target or origin accepted, in bytes.
const MaxLen = 2048

// Errors a refused target wraps; the messages are shown to the customer and
// to the merchant's developers.
var (
	ErrMalformed  = errors.New("the address is not an absolute http or https URL")
	ErrNotHTTPS   = errors.New("production redirects must use https")
	ErrNotAllowed = errors.New("the address's origin is not one of the merchant's allowed redirect origins")
	ErrNotLocal   = errors.New("until the merchant allows redirect origins in the dashboard's Settings, " +
		"sandbox redirects go only to this computer (localhost, 127.0.0.0/8 or [::1])")
)

// Rules say which targets one merchant environment accepts.
type Rules struct {
	// RequireHTTPS refuses plain http (production environments).
	RequireHTTPS bool
	// RequireAllowed refuses origins not in Allowed. Production always
	// requires it; sandbox once the merchant listed an origin. Without it
	// only loopback origins are accepted (a sandbox with none listed).
	RequireAllowed bool
	// Allowed are normalized origins (see Origin).
	Allowed []string
}

// Target parses and checks a redirect target against r.
func Target(raw string, r Rules) (*url.URL, error) {
	u, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if r.RequireHTTPS && u.Scheme != "https" {
		return nil, ErrNotHTTPS
	}
	if r.RequireAllowed && !slices.Contains(r.Allowed, OriginOf(u)) {
		return nil, ErrNotAllowed
	}
	if !r.RequireAllowed && !Loopback(u.Hostname()) {
		return nil, ErrNotLocal
	}
	return u, nil
}

// Loopback reports whether host names this computer: localhost, an
// address in 127.0.0.0/8, or ::1.
func Loopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// Origin normalizes an origin ("https://Shop.Example:443" →
// "https://shop.example"). It refuses anything with a path, query, fragment
// or user-info, so a merchant cannot allow more than an origin.
func Origin(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", errors.New("an origin is only scheme, host and port, like https://shop.example")
	}
	return OriginOf(u), nil
}

// Append adds params to u's query, keeping the merchant's own query as it
// was written, and returns the new address.
func Append(u *url.URL, params url.Values) string {
	c := *u
	if c.RawQuery == "" {
		c.RawQuery = params.Encode()
	} else {
		c.RawQuery += "&" + params.Encode()
	}
	c.ForceQuery = false
	return c.String()
}

// parse is the shared syntax check: absolute http(s), a host, no user-info,
// no backslashes, whitespace or control characters anywhere.
func parse(raw string) (*url.URL, error) {
	if raw == "" || len(raw) > MaxLen {
		return nil, ErrMalformed
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return nil, ErrMalformed
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || hasUserInfo(raw) {
		return nil, ErrMalformed
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || !strings.HasPrefix(strings.ToLower(raw), scheme+"://") {
		return nil, ErrMalformed
	}
	u.Scheme = scheme
	host := u.Hostname()
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, ErrMalformed
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, ErrMalformed
	}
	if net.ParseIP(host) == nil && !validHostname(host) {
		return nil, ErrMalformed
	}
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

// hasUserInfo reports whether the authority part of raw carries an "@".
func hasUserInfo(raw string) bool {
	_, rest, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	return strings.Contains(rest[:end], "@")
}

// validHostname accepts DNS names made of letters, digits, hyphens and
// dots (and punycode), which is what browsers send after IDNA.
func validHostname(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// OriginOf is the origin of a checked address: scheme://host[:port] with
// the default port dropped.
func OriginOf(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host
}
