package webhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// MaxURLLength is the longest webhook URL accepted.
const MaxURLLength = 2048

// Timeout bounds one delivery attempt: connect, send, and the response
// headers and the first KiB of the body.
const Timeout = 15 * time.Second

// reserved are ranges beyond what netip's predicates cover that a webhook
// must never reach: "this network", CGNAT, IETF protocol assignments,
// documentation and benchmarking nets, the reserved class E (with broadcast),
// every IPv6 form that embeds an IPv4 address (IPv4-compatible ::/96,
// IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
// Teredo 2001::/32, 6to4 2002::/16) whatever the address it embeds,
// documentation IPv6, deprecated site-local, and the discard prefix.
// (IPv4-mapped ::ffff:0:0/96 is judged as the IPv4 address it maps.)
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT): ::ffff:0:a.b.c.d
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// Public reports whether a webhook may connect to a: a public unicast
// address. Loopback, private (RFC 1918, fc00::/7, which holds cloud metadata
// addresses such as fd00:ec2::254), link-local (169.254.0.0/16 with
// 169.254.169.254, fe80::/10), CGNAT, multicast, unspecified and reserved
// addresses are not; an IPv4-mapped IPv6 address is judged as its IPv4 address.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// RefusedError is a connection the guard refused: the address a host
// resolved to is not public.
type RefusedError struct {
	Addr string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: not a public address", e.Addr)
}

// refusePrivate is a net.Dialer Control hook. It runs after DNS resolution,
// for every address actually dialled, so a name that resolves to a private
// address at delivery time is refused even if it was public at registration.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !Public(ap.Addr()) {
		return &RefusedError{Addr: address}
	}
	return nil
}

// NewClient returns the HTTP client deliveries use: no proxy, no redirects
// followed (a 3xx is a failed attempt), the 15 s Timeout, and unless
// allowPrivate (the operator's development flag) a dialer that refuses every
// address that is not Public.
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = refusePrivate
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: Timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		},
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Resolver looks up a host's addresses (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// URLPolicy decides which webhook URLs are accepted at registration.
type URLPolicy struct {
	// AllowPrivate lets URLs point at loopback and private addresses: the
	// operator's development flag WEBHOOK_ALLOW_PRIVATE_TARGETS.
	AllowPrivate bool
	// Resolver resolves host names when AllowPrivate is off; nil means
	// net.DefaultResolver.
	Resolver Resolver
}

func invalidURL(format string, args ...any) error {
	return &errs.Error{Code: errs.InvalidURL, Message: fmt.Sprintf(format, args...), Param: "url"}
}

// Check validates a webhook URL for env and returns it normalised: absolute
// http or https (https only in production), at most MaxURLLength characters,
// no user-info, a valid port, and, unless AllowPrivate, a host that is or
// resolves only to public addresses. Errors are invalid_url.
func (p URLPolicy) Check(ctx context.Context, env tenant.Environment, raw string) (string, error) {
	if len(raw) > MaxURLLength {
		return "", invalidURL("The URL is longer than %d characters.", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" || u.Hostname() == "" ||
		(u.Scheme != "http" && u.Scheme != "https") || strings.ContainsAny(raw, "\\ \t\r\n") {
		return "", invalidURL("The URL must be an absolute http or https URL, like https://example.com/webhooks.")
	}
	if u.User != nil {
		return "", invalidURL("The URL must not contain a user name or password.")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", invalidURL("The URL's port must be between 1 and 65535.")
		}
	}
	if env.Live() && u.Scheme != "https" {
		return "", invalidURL("Production webhook URLs must use https.")
	}
	u.Fragment, u.RawFragment = "", ""
	if !p.AllowPrivate {
		if err := p.checkHost(ctx, u.Hostname()); err != nil {
			return "", err
		}
	}
	return u.String(), nil
}

func (p URLPolicy) checkHost(ctx context.Context, host string) error {
	refused := invalidURL("The URL's host %s is a private, loopback or reserved address; webhooks go only to public addresses.", host)
	if a, err := netip.ParseAddr(host); err == nil {
		if !Public(a) {
			return refused
		}
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || !strings.Contains(h, ".") {
		return refused
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		return invalidURL("The URL's host %s could not be resolved.", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return refused
		}
	}
	return nil
}
