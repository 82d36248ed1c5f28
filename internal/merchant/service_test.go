package merchant_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

// password is the one the fixture gives every merchant it creates.
const password = "correct horse battery"

// wantCode fails unless err carries code and, when param is not "", names
// param.
func wantCode(t *testing.T, err error, code errs.Code, param string) *errs.Error {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
	if param != "" && e.Param != param {
		t.Errorf("param = %q, want %q (%v)", e.Param, param, err)
	}
	return e
}

func TestCreateRefusesAnInvalidNameEmailOrPassword(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	for _, c := range []struct {
		name, merchantName, email, password, param string
	}{
		{"no name", "  ", "a@example.com", password, "name"},
		{"a name of 201 characters", strings.Repeat("n", 201), "a@example.com", password, "name"},
		{"a name with a control character", "Acme\x07", "a@example.com", password, "name"},
		{"no email", "Acme", "", password, "email"},
		{"an email without a domain", "Acme", "acme@", password, "email"},
		{"a password of 11 characters", "Acme", "a@example.com", strings.Repeat("p", merchant.MinPasswordLen-1), "password"},
		{"a password of 73 bytes", "Acme", "a@example.com", strings.Repeat("p", merchant.MaxPasswordBytes+1), "password"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Merchants.Create(ctx, c.merchantName, c.email, c.password)
			wantCode(t, err, errs.InvalidRequest, c.param)
		})
	}
	if _, err := f.Merchants.MerchantByEmail(ctx, "a@example.com"); !errs.Is(err, errs.NotFound) {
		t.Errorf("a refused creation left a merchant behind: %v", err)
	}
	// The bounds themselves are accepted.
	if _, err := f.Merchants.Create(ctx, "Acme", "a@example.com", strings.Repeat("p", merchant.MaxPasswordBytes)); err != nil {
		t.Errorf("a 72-byte password: %v", err)
	}
}

func TestCreateRefusesAnEmailAlreadyInUseWhateverItsCase(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	if _, err := f.Merchants.Create(ctx, "Acme", "owner@acme.example", password); err != nil {
		t.Fatal(err)
	}
	_, err := f.Merchants.Create(ctx, "Acme Again", "Owner@ACME.example", password)
	wantCode(t, err, errs.InvalidRequest, "email")
}

func TestAuthenticateRefusesMalformedPublicUnknownAndRolledKeys(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
	if p, err := f.Merchants.Authenticate(ctx, m.Sandbox.SecretKey); err != nil || p.Scope != scope {
		t.Fatalf("the merchant's own key: %+v, %v", p, err)
	}
	for name, key := range map[string]string{
		"malformed":        "sk_test_short",
		"a public key":     m.Sandbox.PublicKey,
		"unknown":          ids.Secret("sk_test_"),
		"unknown, in live": ids.Secret("sk_live_"),
		"empty":            "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.Merchants.Authenticate(ctx, key)
			wantCode(t, err, errs.Unauthorized, "")
		})
	}

	rolled, err := f.Merchants.RollKey(ctx, scope, audit.Operator("test"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Merchants.Authenticate(ctx, m.Sandbox.SecretKey)
	if e := wantCode(t, err, errs.Unauthorized, ""); !strings.Contains(e.Message, "rolled") {
		t.Errorf("a rolled key's message %q does not say it was rolled", e.Message)
	}
	if p, err := f.Merchants.Authenticate(ctx, rolled); err != nil || p.Scope != scope || !p.Can(merchant.PermOnDemand) {
		t.Errorf("the new key: %+v, %v; want the sandbox scope with the old key's permissions", p, err)
	}
}

// TestSignInGivesOneAnswerForEveryRefusal: an unknown email, a wrong
// password and an over-long password are refused alike, so the answer
// tells nobody which emails have accounts.
func TestSignInGivesOneAnswerForEveryRefusal(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	if _, err := f.Merchants.Create(ctx, "Acme", "owner@acme.example", password); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for name, c := range map[string]struct{ email, password string }{
		"an unknown email":       {"nobody@acme.example", password},
		"a wrong password":       {"owner@acme.example", password + "!"},
		"a password past bcrypt": {"owner@acme.example", password + strings.Repeat("x", merchant.MaxPasswordBytes)},
		"no password":            {"owner@acme.example", ""},
	} {
		_, err := f.Merchants.SignIn(ctx, c.email, c.password, "192.0.2.1")
		e, ok := errs.As(err)
		if !ok || e.Code != errs.Unauthorized {
			t.Errorf("%s: %v, want unauthorized", name, err)
			continue
		}
		messages = append(messages, e.Message)
	}
	for _, msg := range messages[1:] {
		if msg != messages[0] {
			t.Errorf("refusals differ: %q and %q", messages[0], msg)
		}
	}
	if m, err := f.Merchants.SignIn(ctx, "  Owner@Acme.Example ", password, "192.0.2.1"); err != nil || m.Email != "owner@acme.example" {
		t.Errorf("the right email (any case, spaces) and password: %+v, %v", m, err)
	}
}

func TestChangePasswordChecksTheCurrentAndTheNewPassword(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	id := m.Merchant.ID
	for _, c := range []struct {
		name, current, next, param string
	}{
		{"a wrong current password", "not the password", "a brand new password", "current_password"},
		{"a new password of 11 characters", password, strings.Repeat("n", merchant.MinPasswordLen-1), "new_password"},
		{"a new password of 73 bytes", password, strings.Repeat("n", merchant.MaxPasswordBytes+1), "new_password"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := f.Merchants.ChangePassword(ctx, id, "ses_current", c.current, c.next, audit.Operator("test"))
			wantCode(t, err, errs.InvalidRequest, c.param)
		})
	}
	if _, err := f.Merchants.SignIn(ctx, m.Merchant.Email, password, "192.0.2.1"); err != nil {
		t.Fatalf("a refused change changed the password: %v", err)
	}
	err := f.Merchants.ChangePassword(ctx, "mer_unknown", "ses_current", password, "a brand new password", audit.Operator("test"))
	wantCode(t, err, errs.NotFound, "")
	wantCode(t, f.Merchants.SetPassword(ctx, id, "short", audit.Operator("test")), errs.InvalidRequest, "password")

	// A change ends every other session and keeps the caller's.
	keep, err := f.Merchants.StartSession(ctx, id, "192.0.2.1", "this browser")
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.Merchants.StartSession(ctx, id, "192.0.2.2", "another browser")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Merchants.ChangePassword(ctx, id, keep, password, "a brand new password", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	limits := merchant.SessionLimits{IdleTimeout: time.Hour, MaxAge: 24 * time.Hour}
	if _, _, err := f.Merchants.ResumeSession(ctx, keep, limits); err != nil {
		t.Errorf("the caller's session after the change: %v", err)
	}
	_, _, err = f.Merchants.ResumeSession(ctx, other, limits)
	wantCode(t, err, errs.Unauthorized, "")
	if _, err := f.Merchants.SignIn(ctx, m.Merchant.Email, password, "192.0.2.1"); err == nil {
		t.Error("the old password still signs in")
	}
}

func TestResumeSessionRefusesMissingEndedAndExpiredSessions(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	id := f.Merchant("Acme").Merchant.ID
	limits := merchant.SessionLimits{IdleTimeout: 30 * time.Minute, MaxAge: 2 * time.Hour}
	start := func() string {
		t.Helper()
		s, err := f.Merchants.StartSession(ctx, id, "192.0.2.1", "browser")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	resume := func(s string) error {
		_, _, err := f.Merchants.ResumeSession(ctx, s, limits)
		return err
	}

	wantCode(t, resume("not a session id"), errs.Unauthorized, "")
	wantCode(t, resume(""), errs.Unauthorized, "")
	wantCode(t, resume(merchant.SessionPrefix+"unknown"), errs.Unauthorized, "")

	ended := start()
	if err := f.Merchants.EndSession(ctx, ended, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, resume(ended), errs.Unauthorized, "")
	if err := f.Merchants.EndSession(ctx, ended, "192.0.2.1"); err != nil {
		t.Errorf("ending an ended session: %v", err)
	}

	// Idle past the timeout: expired, and ended with it.
	idle := start()
	f.Clock.Advance(limits.IdleTimeout + time.Second)
	if err := resume(idle); !errors.Is(err, merchant.ErrSessionExpired) {
		t.Errorf("an idle session: %v, want ErrSessionExpired", err)
	}
	if err := resume(idle); errors.Is(err, merchant.ErrSessionExpired) || !errs.Is(err, errs.Unauthorized) {
		t.Errorf("an expired session resumed again: %v, want it ended", err)
	}

	// In use all along, it still ends at its maximum age.
	busy := start()
	for range 4 {
		f.Clock.Advance(limits.IdleTimeout - time.Minute)
		if err := resume(busy); err != nil {
			t.Fatalf("a session in use within its limits: %v", err)
		}
	}
	f.Clock.Advance(limits.MaxAge - 4*(limits.IdleTimeout-time.Minute) + time.Second)
	if err := resume(busy); !errors.Is(err, merchant.ErrSessionExpired) {
		t.Errorf("a session past its maximum age: %v, want ErrSessionExpired", err)
	}
}

// TestProductionNeedsActivation: before an operator activates production,
// every production operation answers permission_denied; for a merchant
// that does not exist they answer resource_not_found.
func TestProductionNeedsActivation(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	id := f.Merchant("Acme").Merchant.ID
	ops := map[string]func(tenant.Scope) error{
		"RollKey":       func(s tenant.Scope) error { _, err := f.Merchants.RollKey(ctx, s, audit.Operator("test")); return err },
		"GrantOnDemand": func(s tenant.Scope) error { return f.Merchants.GrantOnDemand(ctx, s, audit.Operator("test")) },
		"EnableThirdPartyVerification": func(s tenant.Scope) error {
			return f.Merchants.EnableThirdPartyVerification(ctx, s, audit.Operator("test"))
		},
		"Environment":     func(s tenant.Scope) error { _, err := f.Merchants.Environment(ctx, s); return err },
		"SecretKeyHint":   func(s tenant.Scope) error { _, err := f.Merchants.SecretKeyHint(ctx, s); return err },
		"RedirectOrigins": func(s tenant.Scope) error { _, err := f.Merchants.RedirectOrigins(ctx, s); return err },
		"AllowRedirectOrigin": func(s tenant.Scope) error {
			_, err := f.Merchants.AllowRedirectOrigin(ctx, s, "https://shop.example", audit.Operator("test"))
			return err
		},
		"RemoveRedirectOrigin": func(s tenant.Scope) error {
			_, err := f.Merchants.RemoveRedirectOrigin(ctx, s, "https://shop.example", audit.Operator("test"))
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			wantCode(t, op(tenant.Scope{MerchantID: id, Env: tenant.Production}), errs.PermissionDenied, "")
			wantCode(t, op(tenant.Scope{MerchantID: "mer_unknown", Env: tenant.Sandbox}), errs.NotFound, "")
		})
	}
	if _, err := f.Merchants.ActivateProduction(ctx, id, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	for name, op := range ops {
		if err := op(tenant.Scope{MerchantID: id, Env: tenant.Production}); err != nil && name != "RemoveRedirectOrigin" {
			t.Errorf("%s after activation: %v", name, err)
		}
	}
}

func TestActivateProductionOnlyOnceAndOnlyForAMerchant(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	id := f.Merchant("Acme").Merchant.ID
	first, err := f.Merchants.ActivateProduction(ctx, id, audit.Operator("test"))
	if err != nil || !strings.HasPrefix(first.SecretKey, "sk_live_") {
		t.Fatalf("activate: %+v, %v", first, err)
	}
	_, err = f.Merchants.ActivateProduction(ctx, id, audit.Operator("test"))
	wantCode(t, err, errs.Conflict, "")
	if _, err := f.Merchants.Authenticate(ctx, first.SecretKey); err != nil {
		t.Errorf("a refused second activation broke the first key: %v", err)
	}
	_, err = f.Merchants.ActivateProduction(ctx, "mer_unknown", audit.Operator("test"))
	wantCode(t, err, errs.NotFound, "")
	_, err = f.Merchants.Merchant(ctx, "mer_unknown")
	wantCode(t, err, errs.NotFound, "")
}

func TestLinkOwnerOfAnUnknownPublicKeyIsNotFound(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	m := f.Merchant("Acme")
	for name, key := range map[string]string{
		"empty":        "",
		"too long":     "pk_test_" + strings.Repeat("a", 100),
		"unknown":      ids.Secret("pk_test_"),
		"a secret key": m.Sandbox.SecretKey,
	} {
		_, err := f.Merchants.LinkOwner(ctx, key)
		if !errs.Is(err, errs.NotFound) {
			t.Errorf("%s: %v, want resource_not_found", name, err)
		}
	}
	if o, err := f.Merchants.LinkOwner(ctx, m.Sandbox.PublicKey); err != nil || o.MerchantName != "Acme" {
		t.Errorf("the merchant's own public key: %+v, %v", o, err)
	}
}

func TestRedirectOriginsMustBeOriginsHTTPSInProductionAndAtMost50(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	id := f.Merchant("Acme").Merchant.ID
	sandbox := tenant.Scope{MerchantID: id, Env: tenant.Sandbox}
	production := tenant.Scope{MerchantID: id, Env: tenant.Production}
	if _, err := f.Merchants.ActivateProduction(ctx, id, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"", "shop.example", "ftp://shop.example", "https://shop.example/path", "https://shop.example/?q=1",
		"https://user@shop.example", "https://shop.example#top"} {
		_, err := f.Merchants.AllowRedirectOrigin(ctx, sandbox, raw, audit.Operator("test"))
		wantCode(t, err, errs.InvalidRequest, "origin")
		_, err = f.Merchants.RemoveRedirectOrigin(ctx, sandbox, raw, audit.Operator("test"))
		wantCode(t, err, errs.InvalidRequest, "origin")
	}
	_, err := f.Merchants.AllowRedirectOrigin(ctx, production, "http://shop.example", audit.Operator("test"))
	wantCode(t, err, errs.InvalidRequest, "origin")
	if got, err := f.Merchants.AllowRedirectOrigin(ctx, production, "HTTPS://Shop.Example:443/", audit.Operator("test")); err != nil || got != "https://shop.example" {
		t.Errorf("a production https origin: %q, %v", got, err)
	}

	_, err = f.Merchants.RemoveRedirectOrigin(ctx, sandbox, "https://never.example", audit.Operator("test"))
	wantCode(t, err, errs.NotFound, "")

	for i := range merchant.MaxRedirectOrigins {
		if _, err := f.Merchants.AllowRedirectOrigin(ctx, sandbox, "https://shop"+strings.Repeat("x", i)+".example", audit.Operator("test")); err != nil {
			t.Fatalf("origin %d: %v", i+1, err)
		}
	}
	_, err = f.Merchants.AllowRedirectOrigin(ctx, sandbox, "https://one-too-many.example", audit.Operator("test"))
	wantCode(t, err, errs.InvalidRequest, "origin")
	// Allowing one already allowed adds nothing, so the limit does not refuse it.
	if _, err := f.Merchants.AllowRedirectOrigin(ctx, sandbox, "https://shop.example", audit.Operator("test")); err != nil {
		t.Errorf("an origin already allowed, at the limit: %v", err)
	}
	if got, err := f.Merchants.RedirectOrigins(ctx, sandbox); err != nil || len(got) != merchant.MaxRedirectOrigins {
		t.Errorf("origins = %d, %v; want %d", len(got), err, merchant.MaxRedirectOrigins)
	}
}
