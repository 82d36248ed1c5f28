package hostedlink_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/wiring"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// linked is a merchant with a customer whose source has open deposits,
// and the link that opens it.
type linked struct {
	svc   *wiring.Services
	links *hostedlink.Service
	scope tenant.Scope
	link  hostedlink.Link
}

func newLinked(t *testing.T, name string, svc *wiring.Services) linked {
	t.Helper()
	ctx := context.Background()
	m, err := svc.Merchants.Create(ctx, name, name+"@example.com", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	cu, err := svc.Customers.Create(ctx, scope, customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]string{"acme": "1111222233", "other": "4444555566"}[name]
	src, err := svc.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: cu.ID, RoutingNumber: "021000021", AccountNumber: n})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Funding.InitiateVerification(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
	// A sandbox redirects off this computer only to origins it allowed.
	if _, err := svc.Merchants.AllowRedirectOrigin(ctx, scope, "https://shop.example", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return linked{svc: svc, links: hostedlink.NewService(svc.Merchants, svc.Funding, svc.Now), scope: scope,
		link: hostedlink.Link{PublicKey: m.Sandbox.PublicKey, CustomerID: cu.ID, SourceID: src.ID, SuccessURL: "https://shop.example/done"}}
}

func services(t *testing.T) *wiring.Services {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "DATA_DIR" {
			return t.TempDir()
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := wiring.Build(cfg, wiring.Deps{DB: pgtest.DB(t), Log: slog.New(slog.DiscardHandler), Now: wiring.Clock, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestEveryMismatchIsTheSameInvalidLink: another merchant's key, another
// customer, an unknown source and a removed source all give the one
// LinkInvalid, so a link reveals nothing about which part was wrong.
func TestEveryMismatchIsTheSameInvalidLink(t *testing.T) {
	t.Parallel()
	svc := services(t)
	acme, other := newLinked(t, "acme", svc), newLinked(t, "other", svc)
	ctx := context.Background()

	p, err := acme.links.Open(ctx, acme.link)
	if err != nil || p.State != hostedlink.Pending || p.MerchantName != "acme" || p.Success == nil {
		t.Fatalf("the link itself: %+v, %v", p, err)
	}
	for name, change := range map[string]func(*hostedlink.Link){
		"another merchant's key":        func(l *hostedlink.Link) { l.PublicKey = other.link.PublicKey },
		"an unknown key":                func(l *hostedlink.Link) { l.PublicKey = "pk_test_unknown" },
		"another customer":              func(l *hostedlink.Link) { l.CustomerID = other.link.CustomerID },
		"another merchant's source":     func(l *hostedlink.Link) { l.SourceID = other.link.SourceID },
		"an unknown source":             func(l *hostedlink.Link) { l.SourceID = "fs_unknown" },
		"an empty source":               func(l *hostedlink.Link) { l.SourceID = "" },
		"the other merchant's customer": func(l *hostedlink.Link) { l.PublicKey, l.CustomerID = other.link.PublicKey, acme.link.CustomerID },
	} {
		l := acme.link
		change(&l)
		_, err := acme.links.Open(ctx, l)
		if err == nil || err.Error() != hostedlink.LinkInvalid().Error() {
			t.Errorf("%s: %v, want the one invalid link", name, err)
		}
	}
	if _, err := svc.Consequences.Remove(ctx, acme.scope, acme.link.SourceID); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.links.Open(ctx, acme.link); !errs.Is(err, errs.NotFound) {
		t.Errorf("a removed source: %v, want the invalid link", err)
	}
}

// TestRedirectTargetsAreChecked: a target that is not an absolute http(s)
// URL, or not an allowed origin once the merchant listed some, is refused
// with invalid_url naming the parameter; Cancel needs a cancelUrl.
func TestRedirectTargetsAreChecked(t *testing.T) {
	t.Parallel()
	svc := services(t)
	acme := newLinked(t, "acme", svc)
	ctx := context.Background()
	refused := func(name string, l hostedlink.Link, param string) {
		t.Helper()
		_, err := acme.links.Open(ctx, l)
		if e, ok := errs.As(err); !ok || e.Code != errs.InvalidURL || e.Param != param {
			t.Errorf("%s: %v, want invalid_url on %s", name, err, param)
		}
	}
	l := acme.link
	l.SuccessURL = "javascript:alert(1)"
	refused("a script URL", l, "successUrl")
	l = acme.link
	l.CancelURL = "/relative"
	refused("a relative cancelUrl", l, "cancelUrl")

	if _, err := acme.links.Cancel(ctx, acme.link, nil); !errs.Is(err, errs.InvalidURL) {
		t.Errorf("Cancel without a cancelUrl: %v", err)
	}
	l = acme.link
	l.CancelURL = "https://shop.example/cancel"
	if to, err := acme.links.Cancel(ctx, l, nil); err != nil || to != "https://shop.example/cancel?funding_source_id="+l.SourceID {
		t.Errorf("Cancel: %q, %v", to, err)
	}

	if _, err := svc.Merchants.AllowRedirectOrigin(ctx, acme.scope, "https://allowed.example", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	l = acme.link
	l.SuccessURL = "https://elsewhere.example/done"
	refused("an origin not on the list", l, "successUrl")
	l = acme.link
	l.SuccessURL = "https://allowed.example/done"
	if _, err := acme.links.Open(ctx, l); err != nil {
		t.Errorf("an allowed origin: %v", err)
	}
}

// TestVerifyThroughTheLink: wrong amounts leave the page pending with an
// attempt fewer; the right ones verify the source.
func TestVerifyThroughTheLink(t *testing.T) {
	t.Parallel()
	svc := services(t)
	acme := newLinked(t, "acme", svc)
	ctx := context.Background()
	cents, _, err := svc.Funding.SandboxAmounts(ctx, acme.scope, acme.link.SourceID)
	if err != nil {
		t.Fatal(err)
	}
	wrong := "0.01"
	if cents[0] == 1 || cents[1] == 1 {
		wrong = "0.02"
	}
	p, err := acme.links.Verify(ctx, acme.link, wrong, wrong, nil)
	if !errs.Is(err, errs.VerificationFailed) || p.State != hostedlink.Pending || p.Source.Verification.AttemptsRemaining != 2 {
		t.Fatalf("wrong amounts: %v, state %s", err, p.State)
	}
	if _, err := acme.links.Verify(ctx, acme.link, "twelve", "0.1", nil); !errs.Is(err, errs.InvalidAmounts) {
		t.Errorf("unreadable amount: %v", err)
	}
	amount := func(c int) string { return fmt.Sprintf("0.%02d", c) }
	p, err = acme.links.Verify(ctx, acme.link, amount(cents[1]), amount(cents[0]), nil)
	if err != nil || p.State != hostedlink.Verified || p.Source.Status != funding.Verified {
		t.Fatalf("right amounts in either order: %v, state %s", err, p.State)
	}
	if got := p.SuccessAddress(); got != "https://shop.example/done?funding_source_id="+acme.link.SourceID+"&status=Verified" {
		t.Errorf("success address %q", got)
	}
}

// TestAdmitSeesOnlyResolvedLinks: a link that does not resolve is refused
// before admit is asked, so it cannot spend what admit counts; a link that
// resolves is admitted (or refused) before any attempt is used.
func TestAdmitSeesOnlyResolvedLinks(t *testing.T) {
	t.Parallel()
	svc := services(t)
	acme, other := newLinked(t, "acme", svc), newLinked(t, "other", svc)
	ctx := context.Background()
	var admitted []string
	count := func(p hostedlink.Page) error {
		admitted = append(admitted, p.Source.ID)
		return nil
	}
	forged := []hostedlink.Link{
		{PublicKey: "pk_sandbox_madeup", CustomerID: acme.link.CustomerID, SourceID: acme.link.SourceID},
		{PublicKey: other.link.PublicKey, CustomerID: acme.link.CustomerID, SourceID: acme.link.SourceID},
		{PublicKey: acme.link.PublicKey, CustomerID: "cus_madeup", SourceID: acme.link.SourceID},
		{PublicKey: acme.link.PublicKey, CustomerID: other.link.CustomerID, SourceID: acme.link.SourceID},
	}
	for i, l := range forged {
		if _, err := acme.links.Verify(ctx, l, "0.01", "0.02", count); !errs.Is(err, errs.NotFound) {
			t.Errorf("forged link %d: Verify gave %v, want the invalid link", i, err)
		}
		l.CancelURL = "https://shop.example/cancel"
		if _, err := acme.links.Cancel(ctx, l, count); !errs.Is(err, errs.NotFound) {
			t.Errorf("forged link %d: Cancel gave %v, want the invalid link", i, err)
		}
	}
	if len(admitted) != 0 {
		t.Fatalf("admit was asked for forged links: %v", admitted)
	}

	full := errs.New(errs.RateLimited, "no more")
	refuse := func(p hostedlink.Page) error {
		admitted = append(admitted, p.Source.ID)
		return full
	}
	if _, err := acme.links.Verify(ctx, acme.link, "0.01", "0.02", refuse); err != full {
		t.Errorf("Verify refused by admit: %v", err)
	}
	if len(admitted) != 1 || admitted[0] != acme.link.SourceID {
		t.Errorf("admit saw %v, want the link's source once", admitted)
	}
	src, err := svc.Funding.Get(ctx, acme.scope, acme.link.SourceID)
	if err != nil {
		t.Fatal(err)
	}
	if n := src.Verification.AttemptsRemaining; n != funding.MaxAttempts {
		t.Errorf("a refused submission used an attempt: %d left", n)
	}
}
