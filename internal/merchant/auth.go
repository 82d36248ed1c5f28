package merchant

import (
	"context"
	"fmt"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// ParseSecretKey checks the shape of a secret key and returns its
// environment. A public key, or anything else, is refused with unauthorized.
func ParseSecretKey(key string) (tenant.Environment, error) {
	for _, env := range []tenant.Environment{tenant.Sandbox, tenant.Production} {
		if rest, ok := strings.CutPrefix(key, env.SecretPrefix()); ok {
			if len(rest) != ids.SecretLen || !ids.IsBase62(rest) {
				return "", errs.New(errs.Unauthorized, "The API key is malformed.")
			}
			return env, nil
		}
		if strings.HasPrefix(key, env.PublicPrefix()) {
			return "", errs.New(errs.Unauthorized, "A public key cannot authenticate API requests; use the secret key (sk_…).")
		}
	}
	return "", errs.New(errs.Unauthorized, "The API key is malformed: secret keys begin with sk_test_ or sk_live_.")
}

// Authenticate resolves a secret key to the principal it acts for.
func (s *Service) Authenticate(ctx context.Context, key string) (Principal, error) {
	env, err := ParseSecretKey(key)
	if err != nil {
		return Principal{}, err
	}
	hash := HashSecret(key)
	if p, ok := s.keys.get(string(hash)); ok && p.Scope.Env == env {
		return p, nil
	}
	gen := s.keys.generation()
	k, e, err := s.store.APIKeyByHash(ctx, hash)
	if errs.Is(err, errs.NotFound) {
		return Principal{}, errs.New(errs.Unauthorized, "Invalid API key.")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up an API key by its hash: %w", err)
	}
	if k.RevokedAt != nil {
		return Principal{}, errs.New(errs.Unauthorized, "This API key was rolled and no longer works.")
	}
	if k.Scope.Env != env { // cannot happen with generated keys; refuse rather than trust the prefix
		return Principal{}, errs.New(errs.Unauthorized, "Invalid API key.")
	}
	p := Principal{
		Scope:                  k.Scope,
		KeyID:                  k.ID,
		Permissions:            k.Permissions,
		ThirdPartyVerification: e.ThirdPartyVerification,
		Policies:               e.Policies,
		HasTestClocks:          e.HasTestClocks,
	}
	s.keys.put(string(hash), p, gen)
	return p, nil
}
