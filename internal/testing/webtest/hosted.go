package webtest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/playwright-community/playwright-go"
)

// HostedSetup is a sandbox merchant with a customer and an Unverified
// source, and the hosted-page path for them. The merchant allowed
// https://shop.example as a redirect origin, as a sandbox must before
// sending customers anywhere but localhost.
type HostedSetup struct {
	H                  *Harness
	Scope              tenant.Scope
	Key, PK, User, Src string
}

// NewHostedSetup makes the merchant, customer and source of a hosted page.
func NewHostedSetup(t testing.TB, opts ...th.Option) *HostedSetup {
	h := NewHarness(t, opts...)
	m := h.Merchant("Acme Books")
	s := &HostedSetup{H: h, Key: m.Sandbox.SecretKey, PK: m.Sandbox.PublicKey,
		Scope: tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}}
	s.User = h.Customer(s.Key)
	s.Src = h.Source(s.Key, s.User, "123456789")
	if _, err := h.Merchants.AllowRedirectOrigin(context.Background(), s.Scope, "https://shop.example", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return s
}

// Path is the page's address with the given query ("" for none).
func (s *HostedSetup) Path(query string) string {
	p := "/bank-account/" + s.PK + "/" + s.User + "/" + s.Src
	if query != "" {
		p += "?" + query
	}
	return p
}

// OkQuery is a hosted-page query with allowed success and cancel URLs.
func OkQuery() string {
	return "successUrl=" + url.QueryEscape("https://shop.example/done?order=7") +
		"&cancelUrl=" + url.QueryEscape("https://shop.example/cart")
}

// Page opens a hosted page as a browser would.
func (h *Harness) Page(path string) *th.Response {
	h.T.Helper()
	return h.Do(th.Req{Method: http.MethodGet, Path: path, Header: map[string]string{"Accept": "text/html"}})
}

// Submit posts the hosted form as the page itself would (same origin).
func (h *Harness) Submit(path string, form url.Values, header ...map[string]string) *th.Response {
	h.T.Helper()
	r := th.Req{Method: http.MethodPost, Path: path, Body: form.Encode(), Header: map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin",
	}}
	for _, hd := range header {
		for k, v := range hd {
			if k == "remote" {
				r.Remote = v
				continue
			}
			r.Header[k] = v
		}
	}
	return h.Do(r)
}

// WantPage fails unless r is an HTML page with status and every string; it returns the body.
func WantPage(t *testing.T, r *th.Response, status int, contains ...string) string {
	t.Helper()
	body := string(r.Body)
	if r.Code != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("got %d %s, want %d text/html\n%s", r.Code, r.Header.Get("Content-Type"), status, body)
	}
	for _, want := range contains {
		if !strings.Contains(body, want) {
			t.Errorf("page (%d) lacks %q\n%s", status, want, body)
		}
	}
	return body
}

// LocalOnly takes the allowed origin away again: a sandbox merchant
// developing on this computer, whose links may return only to loopback
// addresses (the browser tests' shop runs on 127.0.0.1).
func (s *HostedSetup) LocalOnly() *HostedSetup {
	if _, err := s.H.Merchants.RemoveRedirectOrigin(context.Background(), s.Scope, "https://shop.example", audit.Operator("test")); err != nil {
		s.H.T.Fatal(err)
	}
	return s
}

// FragmentLink is the link a merchant builds: {hosted_url}/#/bank-account/….
func (s *HostedSetup) FragmentLink(base, success, cancel string) string {
	q := url.Values{}
	if success != "" {
		q.Set("successUrl", success)
	}
	if cancel != "" {
		q.Set("cancelUrl", cancel)
	}
	link := base + "/#/bank-account/" + s.PK + "/" + s.User + "/" + s.Src
	if len(q) > 0 {
		link += "?" + q.Encode()
	}
	return link
}

// Verify fills the two amounts, found by their labels, and presses Verify.
func (tb *Tab) Verify(first, second string) {
	tb.t.Helper()
	if err := tb.Page.GetByLabel("First deposit").Fill(first); err != nil {
		tb.Fatalf("%v", err)
	}
	if err := tb.Page.GetByLabel("Second deposit").Fill(second); err != nil {
		tb.Fatalf("%v", err)
	}
	if err := tb.Page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Verify account"}).Click(); err != nil {
		tb.Fatalf("%v", err)
	}
}

// InstantSource is a new source of the setup's customer at routing with
// account, its instant verification initiated.
func (s *HostedSetup) InstantSource(routing, account string) *HostedSetup {
	c := *s
	c.Src = th.WantOK(s.H.T, s.H.Post("/v2/funding-source", s.Key, th.SourceBody(s.User, routing, account)))["funding_source_id"].(string)
	th.WantOK(s.H.T, s.H.InitiateBy(s.Key, c.Src, "instant"))
	return &c
}
