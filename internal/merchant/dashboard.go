package merchant

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// MaxPasswordBytes is the longest dashboard password accepted: bcrypt reads
// no further, so a longer one would silently be cut.
const MaxPasswordBytes = 72

// SecretKeyHint is how the dashboard names a secret key it can no longer
// show: its prefix and last four characters.
type SecretKeyHint struct {
	Prefix    string // "sk_test_"
	LastFour  string
	CreatedAt time.Time // UTC
}

// String is "sk_test_…abcd".
func (h SecretKeyHint) String() string { return h.Prefix + "…" + h.LastFour }

// checkPassword applies the dashboard password rules.
func checkPassword(password string) error {
	switch {
	case len(password) < MinPasswordLen:
		return errs.Invalid("password", "Password must be at least 12 characters.")
	case len(password) > MaxPasswordBytes:
		return errs.Invalid("password", "Password must be at most 72 bytes.")
	}
	return nil
}

var (
	decoyOnce sync.Once
	decoyHash string
)

// SignIn checks a dashboard email and password typed at ip. An unknown
// email and a wrong password give the same error and cost the same bcrypt
// comparison, so the answer tells nobody which emails have accounts. A
// wrong password for a known email is recorded in the merchant's audit
// log (an unknown email belongs to no log).
func (s *Service) SignIn(ctx context.Context, email, password, ip string) (Merchant, error) {
	wrong := errs.New(errs.Unauthorized, "That email and password don't match an account.")
	m, err := s.MerchantByEmail(ctx, email)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return Merchant{}, err
	}
	if err != nil || m.PasswordHash == "" || len(password) > MaxPasswordBytes {
		decoyOnce.Do(func() { decoyHash, _ = s.hash.Hash("decoy password for unknown emails") })
		_ = s.hash.Compare(decoyHash, password)
		return Merchant{}, wrong
	}
	if s.hash.Compare(m.PasswordHash, password) != nil {
		by := audit.DashboardUser(m.ID, clip(ip, 64))
		if err := s.store.RecordAudit(ctx, audit.Account(m.ID, audit.DashboardSignInFailed, by, map[string]string{"reason": "wrong_password"})); err != nil {
			return Merchant{}, fmt.Errorf("record the failed sign-in of merchant %s: %w", m.ID, err)
		}
		return Merchant{}, wrong
	}
	return m, nil
}

// Environments lists the environments a merchant can use: sandbox, and
// production once an operator activated it.
func (m Merchant) Environments() []tenant.Environment {
	if m.ProductionActivatedAt != nil {
		return []tenant.Environment{tenant.Sandbox, tenant.Production}
	}
	return []tenant.Environment{tenant.Sandbox}
}

// Can reports whether the merchant may use env.
func (m Merchant) Can(env tenant.Environment) bool {
	for _, e := range m.Environments() {
		if e == env {
			return true
		}
	}
	return false
}

// SecretKeyHint names the scope's active secret key without showing it.
func (s *Service) SecretKeyHint(ctx context.Context, scope tenant.Scope) (SecretKeyHint, error) {
	k, err := s.store.ActiveKey(ctx, scope)
	if err != nil {
		return SecretKeyHint{}, s.envErr(ctx, fmt.Errorf("read the active key of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err), scope)
	}
	return SecretKeyHint{Prefix: scope.Env.SecretPrefix(), LastFour: k.LastFour, CreatedAt: k.CreatedAt.UTC()}, nil
}
