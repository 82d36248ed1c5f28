// Package hostedlink is the use case behind the hosted verification page:
// it resolves a link to one merchant environment, customer and funding
// source, checks the redirect targets, and verifies micro-deposit amounts or
// an instant deposit's code through the same funding service as the API.
//
// It holds no rules of its own: it combines the merchant service (public
// key to merchant environment, its name and redirect origins) with the
// funding service's own Get, VerifyMicroDeposits and VerifyCode, so attempt counting
// and events are the API's by construction. Every failed lookup becomes the
// same not-found error before anything else is checked, so the "link not
// valid" page cannot be used to probe which part of a link exists.
package hostedlink

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/redirect"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
)

// State is where the verification stands, as the customer sees it.
type State string

// States of the page; each has its own message.
const (
	Pending      State = "pending"       // deposits sent: the form
	NotInitiated State = "not_initiated" // no deposits sent yet
	Verified     State = "verified"      // nothing left to do: continue
	Failed       State = "failed"        // attempts used up
	Refused      State = "refused"       // the bank refused the instant deposit (closed, blocked, no such account)
	Expired      State = "expired"       // deposits too old
)

// Link is the address the customer opened, as given (untrusted).
type Link struct {
	PublicKey  string
	CustomerID string
	SourceID   string
	SuccessURL string // "" when absent
	CancelURL  string // "" when absent
}

// Merchants is what the page needs from the merchant service.
type Merchants interface {
	LinkOwner(ctx context.Context, publicKey string) (merchant.LinkOwner, error)
	Logo(ctx context.Context, merchantID string) (merchant.Logo, error)
}

// Sources is the funding service: the same methods the API calls. A
// refused verification comes with the source as the refusal left it,
// which the page shows without reading it again.
type Sources interface {
	Get(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error)
	VerifyMicroDeposits(ctx context.Context, scope tenant.Scope, id string, amounts [2]int) (funding.Source, error)
	VerifyCode(ctx context.Context, scope tenant.Scope, id, code string) (funding.Source, error)
}

// Service resolves links and verifies through them.
type Service struct {
	merchants Merchants
	sources   Sources
	now       func() time.Time
}

// NewService returns a Service.
func NewService(m Merchants, s Sources, now func() time.Time) *Service {
	return &Service{merchants: m, sources: s, now: now}
}

// Page is a resolved link: everything the page shows and where it may send
// the customer.
type Page struct {
	Scope        tenant.Scope
	MerchantName string // the brand's display name, else the merchant's name
	Brand        merchant.Brand
	PublicKey    string // the link's public key, which addresses the brand's logo and stylesheet
	Source       funding.Source
	State        State
	Success      *url.URL // checked successUrl; nil when absent
	Cancel       *url.URL // checked cancelUrl; nil when absent
}

// SuccessAddress is successUrl with funding_source_id and status=Verified
// appended; "" without a successUrl.
func (p Page) SuccessAddress() string {
	if p.Success == nil {
		return ""
	}
	return redirect.Append(p.Success, url.Values{"funding_source_id": {p.Source.ID}, "status": {string(funding.Verified)}})
}

// CancelAddress is cancelUrl with funding_source_id appended; "" without one.
func (p Page) CancelAddress() string {
	if p.Cancel == nil {
		return ""
	}
	return redirect.Append(p.Cancel, url.Values{"funding_source_id": {p.Source.ID}})
}

// Instant reports whether the source's verification is an instant deposit
// with a code (else micro-deposits, or none).
func (p Page) Instant() bool {
	v := p.Source.Verification
	return v != nil && v.Method == funding.MethodInstant
}

// RedirectOrigins are the origins the page may send the customer to (for
// the page's Content-Security-Policy form-action).
func (p Page) RedirectOrigins() []string {
	var out []string
	for _, u := range []*url.URL{p.Success, p.Cancel} {
		if u != nil && !slices.Contains(out, redirect.OriginOf(u)) {
			out = append(out, redirect.OriginOf(u))
		}
	}
	return out
}

// Admit is asked once a link has resolved, before a submission through it
// is acted on; an error refuses the submission and comes back as is. The
// hosted page spends the source's submission allowance here, so a link that
// does not resolve cannot spend it. A nil Admit admits every submission.
type Admit func(Page) error

func (a Admit) check(p Page) error {
	if a == nil {
		return nil
	}
	return a(p)
}

// LinkInvalid is the one error for every mismatch of key, customer, source,
// merchant or environment: nothing tells which part was wrong.
func LinkInvalid() error {
	return errs.New(errs.NotFound, "This verification link is not valid.")
}

// Brand is the brand of the merchant whose environment has publicKey,
// through the key cache; LinkInvalid when no environment has it.
func (s *Service) Brand(ctx context.Context, publicKey string) (merchant.Brand, error) {
	owner, err := s.merchants.LinkOwner(ctx, publicKey)
	return owner.Brand, notFoundAsInvalid(err)
}

// Logo is the logo of the merchant whose environment has publicKey;
// LinkInvalid when no environment has the key or its merchant no logo.
func (s *Service) Logo(ctx context.Context, publicKey string) (merchant.Logo, error) {
	owner, err := s.merchants.LinkOwner(ctx, publicKey)
	if err != nil {
		return merchant.Logo{}, notFoundAsInvalid(err)
	}
	if !owner.Brand.HasLogo() {
		return merchant.Logo{}, LinkInvalid()
	}
	l, err := s.merchants.Logo(ctx, owner.Env.Scope.MerchantID)
	return l, notFoundAsInvalid(err)
}

// Open resolves l. Errors: LinkInvalid (errs.NotFound), or errs.InvalidURL
// with Param successUrl or cancelUrl for a refused redirect target.
func (s *Service) Open(ctx context.Context, l Link) (Page, error) {
	owner, err := s.merchants.LinkOwner(ctx, l.PublicKey)
	if err != nil {
		return Page{}, notFoundAsInvalid(err)
	}
	scope := owner.Env.Scope
	// The source names its customer, so one lookup checks both.
	src, err := s.sources.Get(ctx, scope, l.SourceID)
	if err != nil {
		return Page{}, notFoundAsInvalid(err)
	}
	if src.CustomerID != l.CustomerID || src.Removed {
		return Page{}, LinkInvalid()
	}
	p := Page{Scope: scope, MerchantName: cmp.Or(owner.Brand.DisplayName, owner.MerchantName), Brand: owner.Brand,
		PublicKey: l.PublicKey, Source: src, State: stateOf(src, s.now())}
	if p.Success, err = target("successUrl", l.SuccessURL, owner.Rules); err != nil {
		return Page{}, err
	}
	if p.Cancel, err = target("cancelUrl", l.CancelURL, owner.Rules); err != nil {
		return Page{}, err
	}
	return p, nil
}

// Verify checks the two amounts the customer typed, once admit has let
// the resolved link through. On success the page is in state Verified. A
// refusal (invalid_amounts with Param amount1 or amount2,
// verification_failed with attempts_remaining, or the verification having
// failed or expired meanwhile) comes back with the page as it now stands,
// so it can be shown again.
func (s *Service) Verify(ctx context.Context, l Link, first, second string, admit Admit) (Page, error) {
	return s.verify(ctx, l, admit, func(p Page) (funding.Source, error) {
		var amounts [2]int
		var err error
		if amounts[0], err = funding.ParseStatementAmount("amount1", first); err != nil {
			return funding.Source{}, err
		}
		if amounts[1], err = funding.ParseStatementAmount("amount2", second); err != nil {
			return funding.Source{}, err
		}
		return s.sources.VerifyMicroDeposits(ctx, p.Scope, p.Source.ID, amounts)
	})
}

// VerifyCode checks the code of an instant verification as Verify checks
// amounts; a malformed code is invalid_request with Param code.
func (s *Service) VerifyCode(ctx context.Context, l Link, code string, admit Admit) (Page, error) {
	return s.verify(ctx, l, admit, func(p Page) (funding.Source, error) {
		return s.sources.VerifyCode(ctx, p.Scope, p.Source.ID, code)
	})
}

// verify resolves l, admits it and, while the verification is pending,
// runs check.
func (s *Service) verify(ctx context.Context, l Link, admit Admit, check func(Page) (funding.Source, error)) (Page, error) {
	p, err := s.Open(ctx, l)
	if err != nil {
		return Page{}, err
	}
	if err := admit.check(p); err != nil {
		return Page{}, err
	}
	if p.State != Pending {
		return p, nil
	}
	src, verr := check(p)
	if verr == nil {
		p.Source, p.State = src, Verified
		return p, nil
	}
	e, ok := errs.As(verr)
	if !ok {
		return Page{}, verr
	}
	if e.Code == errs.InvalidAmounts || e.Code == errs.InvalidRequest {
		return p, verr // nothing changed
	}
	if src.ID == "" {
		// Refused before the funding service read the source: a
		// concurrent request verified or removed it. Only a new look
		// tells what the link now shows.
		if p, err = s.Open(ctx, l); err != nil {
			return Page{}, err
		}
		return p, verr
	}
	// Attempts and expiry are the funding service's, which answers a
	// refusal with the source as the refusal left it.
	p.Source, p.State = src, stateOf(src, s.now())
	return p, verr
}

// Cancel returns where to send a customer who gives up: cancelUrl with
// funding_source_id appended, once admit has let the resolved link through.
func (s *Service) Cancel(ctx context.Context, l Link, admit Admit) (string, error) {
	p, err := s.Open(ctx, l)
	if err != nil {
		return "", err
	}
	if err := admit.check(p); err != nil {
		return "", err
	}
	if p.Cancel == nil {
		return "", &errs.Error{Code: errs.InvalidURL, Param: "cancelUrl", Message: "This link has no cancelUrl to return to."}
	}
	return p.CancelAddress(), nil
}

func stateOf(src funding.Source, now time.Time) State {
	v := src.Verification
	switch {
	case src.Status == funding.Verified:
		return Verified
	case v == nil:
		return NotInitiated
	case v.Status == funding.DepositFailed && v.FailureCode != "":
		return Refused
	case v.Status == funding.DepositFailed:
		return Failed
	case v.Status == funding.DepositExpired, v.Lapsed(now):
		return Expired
	case v.Status == funding.DepositPending:
		return Pending
	}
	return NotInitiated
}

func target(param, raw string, rules redirect.Rules) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := redirect.Target(raw, rules)
	if err != nil {
		return nil, &errs.Error{Code: errs.InvalidURL, Param: param, Message: err.Error()}
	}
	return u, nil
}

// notFoundAsInvalid hides which lookup failed.
func notFoundAsInvalid(err error) error {
	var e *errs.Error
	if errors.As(err, &e) && (e.Code == errs.NotFound || e.Code == errs.FundingSourceNotFound) {
		return LinkInvalid()
	}
	return err
}

// LogoVersionLen is how many hex digits of the logo's SHA-256 version its address.
const LogoVersionLen = 16

// ThemePath is the address of brand b's stylesheet for the page of
// publicKey; "" when b has no accent.
func ThemePath(publicKey string, b merchant.Brand) string {
	if b.Accent == "" {
		return ""
	}
	return "/brand/" + publicKey + "/theme.css?v=" + strings.TrimPrefix(b.Accent, "#")
}

// LogoPath is the address of brand b's logo for the page of publicKey;
// "" when b has no logo.
func LogoPath(publicKey string, b merchant.Brand) string {
	if !b.HasLogo() {
		return ""
	}
	return "/brand/" + publicKey + "/logo?v=" + b.LogoVersion[:LogoVersionLen]
}
