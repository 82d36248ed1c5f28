package merchant

import (
	"context"
	"crypto/sha256"
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

// SecretKey is a secret key whose shape ParseKey checked: its
// environment and its hash, not the key.
type SecretKey struct {
	Env  tenant.Environment
	hash [sha256.Size]byte
}

// ParseKey checks the shape of a secret key as ParseSecretKey does and
// hashes it: what a request checks the key's host against and
// authenticates with, parsed once.
func ParseKey(key string) (SecretKey, error) {
	env, err := ParseSecretKey(key)
	if err != nil {
		return SecretKey{}, err
	}
	return SecretKey{Env: env, hash: hashSecret(key)}, nil
}

// Authenticate resolves a secret key to the principal it acts for.
func (s *Service) Authenticate(ctx context.Context, key string) (Principal, error) {
	k, err := ParseKey(key)
	if err != nil {
		return Principal{}, err
	}
	return s.AuthenticateKey(ctx, k)
}

// AuthenticateKey resolves a parsed secret key to the principal it acts for.
func (s *Service) AuthenticateKey(ctx context.Context, key SecretKey) (Principal, error) {
	env := key.Env
	if p, ok := s.keys.getHash(key.hash[:]); ok && p.Scope.Env == env {
		return p, nil
	}
	return s.lookUpKey(ctx, env, key.hash)
}

// lookUpKey resolves the key of a hash from the database and caches it.
func (s *Service) lookUpKey(ctx context.Context, env tenant.Environment, sum [sha256.Size]byte) (Principal, error) {
	hash := sum[:]
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
