package merchant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/redirect"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// MaxRedirectOrigins is how many redirect origins one environment may allow.
const MaxRedirectOrigins = 50

// LinkOwner is what a hosted-page link's public key resolves to.
type LinkOwner struct {
	Env          Environment
	MerchantName string
	Brand        Brand
	Rules        redirect.Rules
}

// LinkOwner resolves a public key to its environment, the merchant's name
// and brand, and the environment's redirect rules, in one read, or from the key cache
// (see KeyCache); errs.NotFound when no environment has the key.
func (s *Service) LinkOwner(ctx context.Context, publicKey string) (LinkOwner, error) {
	if publicKey == "" || len(publicKey) > 100 {
		return LinkOwner{}, errs.New(errs.NotFound, "no such public key")
	}
	if o, ok := s.keys.owner(publicKey); ok {
		return o, nil
	}
	gen := s.keys.generation()
	env, name, brand, allowed, err := s.store.LinkOwner(ctx, publicKey)
	if err != nil {
		return LinkOwner{}, fmt.Errorf("resolve a public key to its merchant: %w", err)
	}
	o := LinkOwner{Env: env, MerchantName: name, Brand: brand, Rules: redirectRules(env.Scope, allowed)}
	s.keys.putOwner(publicKey, o, gen)
	return o, nil
}

// redirectRules: production needs https and an allowed origin; sandbox
// takes only loopback addresses until the merchant lists an origin, and
// then only listed ones.
func redirectRules(scope tenant.Scope, allowed []string) redirect.Rules {
	prod := scope.Env == tenant.Production
	return redirect.Rules{RequireHTTPS: prod, RequireAllowed: prod || len(allowed) > 0, Allowed: allowed}
}

// RedirectOrigins lists the scope's allowed redirect origins.
func (s *Service) RedirectOrigins(ctx context.Context, scope tenant.Scope) ([]string, error) {
	if _, err := s.Environment(ctx, scope); err != nil {
		return nil, err
	}
	origins, err := s.store.RedirectOrigins(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("list the redirect origins of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err)
	}
	return origins, nil
}

// AllowRedirectOrigin adds an origin the hosted page may redirect to and
// returns it normalized. Production origins must be https.
func (s *Service) AllowRedirectOrigin(ctx context.Context, scope tenant.Scope, raw string, by audit.Actor) (string, error) {
	origin, err := redirect.Origin(strings.TrimSpace(raw))
	if err != nil {
		return "", errs.Invalid("origin", err.Error())
	}
	if scope.Env == tenant.Production && !strings.HasPrefix(origin, "https://") {
		return "", errs.Invalid("origin", "production redirect origins must use https")
	}
	err = s.store.WithTx(ctx, func(tx Store) error {
		if _, err := s.Environment(ctx, scope); err != nil {
			return err
		}
		have, err := tx.RedirectOrigins(ctx, scope)
		if err != nil {
			return fmt.Errorf("list the redirect origins of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err)
		}
		if len(have) >= MaxRedirectOrigins && !slices.Contains(have, origin) {
			return errs.Invalid("origin", "at most 50 redirect origins can be allowed; remove one first")
		}
		if err := tx.InsertRedirectOrigin(ctx, scope, origin, s.now().UTC()); err != nil {
			return fmt.Errorf("allow redirect origin %s for merchant %s: %w", origin, scope.MerchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.SettingsChanged, by, map[string]string{"setting": "redirect_origins", "added": origin})); err != nil {
			return fmt.Errorf("record redirect origin %s allowed for merchant %s: %w", origin, scope.MerchantID, err)
		}
		return nil
	})
	s.keys.Clear() // this process at once; others on the trigger's notification
	return origin, err
}

// RemoveRedirectOrigin stops allowing an origin; errs.NotFound when it was
// not allowed.
func (s *Service) RemoveRedirectOrigin(ctx context.Context, scope tenant.Scope, raw string, by audit.Actor) (string, error) {
	origin, err := redirect.Origin(strings.TrimSpace(raw))
	if err != nil {
		return "", errs.Invalid("origin", err.Error())
	}
	if _, err := s.Environment(ctx, scope); err != nil {
		return "", err
	}
	err = s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.DeleteRedirectOrigin(ctx, scope, origin); err != nil {
			return fmt.Errorf("remove redirect origin %s of merchant %s: %w", origin, scope.MerchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.SettingsChanged, by, map[string]string{"setting": "redirect_origins", "removed": origin})); err != nil {
			return fmt.Errorf("record redirect origin %s removed for merchant %s: %w", origin, scope.MerchantID, err)
		}
		return nil
	})
	s.keys.Clear()
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return "", errs.Newf(errs.NotFound, "%s is not an allowed redirect origin of %s in %s", origin, scope.MerchantID, scope.Env)
		}
		return "", err
	}
	return origin, nil
}
