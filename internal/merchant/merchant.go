// Package merchant holds merchants, their per-environment API keys and
// permissions, and the authentication of secret keys.
//
// Secret keys carry 256 random bits, so a plain SHA-256 is the right
// storage (a slow password hash would add only latency to every request);
// lookup is by hash through a unique index, and one active secret key per
// merchant and environment is a partial unique index. The public key
// belongs to the environment and survives key rolls, so hosted-page links
// keep working. Dashboard passwords go through the PasswordHasher the
// wiring sets (bcrypt).
//
// The key cache cannot serve a rolled key. A server remembers resolved
// keys, and resolved hosted-page public keys (the environment, the
// merchant's name and brand, and its redirect origins), for
// API_KEY_CACHE_TTL, but only while it is sure to hear of every change:
//   - the service clears it after its own changes, so a roll takes effect
//     at once in that process;
//   - a statement-level trigger on api_keys, merchant_environments,
//     merchants, merchant_brands and redirect_origins notifies at commit
//     for any change, whoever makes it (the service, the CLI, an
//     operator's SQL), and every server clears its cache on it;
//   - while the server's LISTEN connection is down the cache is bypassed,
//     and it is cleared when the connection returns;
//   - a lookup that began before a clear is not stored, so a read racing a
//     roll cannot put the old key back.
//
// Unknown and revoked keys are never cached; the TTL bounds every entry.
package merchant

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/person"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// PermOnDemand is the key permission needed for POST /v2/on-demand/funding-source.
const PermOnDemand = "on_demand_funding_source"

// MinPasswordLen is the shortest dashboard password accepted.
const MinPasswordLen = 12

// Merchant is a business using the service.
type Merchant struct {
	ID                    string
	Name                  string
	Email                 string // lowercase; the dashboard login
	PasswordHash          string // bcrypt
	ProductionActivatedAt *time.Time
	CreatedAt             time.Time
}

// Environment is a merchant's settings in one environment.
type Environment struct {
	Scope                  tenant.Scope
	PublicKey              string
	ThirdPartyVerification bool
	Policies
	// OriginatorName is the company name the environment's ACH originator
	// takes on creation; "" leaves the store's default.
	OriginatorName string
	// HasTestClocks reports whether the environment has a sandbox test
	// clock (read with its keys; creating the first one drops the
	// servers' cached keys).
	HasTestClocks bool
}

// Policies are what the checks of a new funding source do to its
// creation in one environment.
type Policies struct {
	// AccountCheck is PolicyFlag (create and report) or PolicyBlockFail
	// (refuse an account whose check fails).
	AccountCheck string `json:"account_check_policy"`
	// Ownership is PolicyFlag or PolicyRequireMatch (refuse a processor
	// link whose owner does not match the customer).
	Ownership string `json:"ownership_policy"`
}

// Policy values.
const (
	PolicyFlag         = "flag"
	PolicyBlockFail    = "block_fail"
	PolicyRequireMatch = "require_match"
)

// APIKey is a secret key as stored: only its SHA-256 and last four characters.
type APIKey struct {
	ID          string
	Scope       tenant.Scope
	SecretHash  []byte
	LastFour    string
	Permissions []string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// Principal is who an authenticated API request acts for.
type Principal struct {
	Scope                  tenant.Scope
	KeyID                  string
	Permissions            []string
	ThirdPartyVerification bool
	Policies
	// HasTestClocks reports whether the environment had a test clock when
	// the key was resolved: only then does a request look for the clock
	// of its objects.
	HasTestClocks bool
}

// Can reports whether the key carries permission perm.
func (p Principal) Can(perm string) bool {
	for _, have := range p.Permissions {
		if have == perm {
			return true
		}
	}
	return false
}

// Keys is a secret and public key pair; the secret is shown only once.
type Keys struct {
	SecretKey string `json:"secret_key"`
	PublicKey string `json:"public_key"`
}

// Store is the persistence the merchant service needs.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	audit.Recorder
	InsertMerchant(ctx context.Context, m Merchant) error
	InsertEnvironment(ctx context.Context, e Environment) error
	InsertAPIKey(ctx context.Context, k APIKey) error
	// RevokeActiveKey revokes the scope's active key and returns its
	// permissions; errs.NotFound when there is none.
	RevokeActiveKey(ctx context.Context, scope tenant.Scope, at time.Time) ([]string, error)
	// ActiveKey returns the scope's active secret key; errs.NotFound if none.
	ActiveKey(ctx context.Context, scope tenant.Scope) (APIKey, error)
	// APIKeyByHash finds a key, revoked or not; errs.NotFound when unknown.
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, Environment, error)
	Merchant(ctx context.Context, id string) (Merchant, error)
	MerchantByEmail(ctx context.Context, email string) (Merchant, error)
	SetPasswordHash(ctx context.Context, id, hash string) error
	SessionStore
	BrandStore
	// MarkProductionActivated sets the activation time once; errs.Conflict if set.
	MarkProductionActivated(ctx context.Context, id string, at time.Time) error
	GrantPermission(ctx context.Context, scope tenant.Scope, perm string) error
	EnableThirdPartyVerification(ctx context.Context, scope tenant.Scope) error
	// SetPolicies stores the scope's policies.
	SetPolicies(ctx context.Context, scope tenant.Scope, p Policies) error
	Environment(ctx context.Context, scope tenant.Scope) (Environment, error)
	// LinkOwner finds an environment by its public key, with its
	// merchant's name and brand and allowed redirect origins (sorted).
	LinkOwner(ctx context.Context, publicKey string) (env Environment, merchantName string, brand Brand, origins []string, err error)
	RedirectOrigins(ctx context.Context, scope tenant.Scope) ([]string, error)
	InsertRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string, at time.Time) error
	// DeleteRedirectOrigin: errs.NotFound when the origin was not allowed.
	DeleteRedirectOrigin(ctx context.Context, scope tenant.Scope, origin string) error
}

// Service applies the merchant rules.
type Service struct {
	store Store
	now   func() time.Time
	hash  PasswordHasher
	keys  *KeyCache // nil: every request asks the database
	// rolled runs after each successful roll, with the new secret key; nil: nothing.
	rolled func(scope tenant.Scope, secret string)
	// originatorName is a new environment's ACH originator's company name
	// from the merchant's name (originator.NameAfter); nil: the store's
	// default.
	originatorName func(merchantName string) string
}

// WithOriginatorNames sets how a new environment's ACH originator is named
// after its merchant (originator.NameAfter, the rule's one home).
func (s *Service) WithOriginatorNames(fn func(merchantName string) string) *Service {
	s.originatorName = fn
	return s
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store = tx
	return &c
}

// PasswordHasher hashes and checks dashboard passwords (bcrypt in
// production code; a cheap cost in tests).
type PasswordHasher interface {
	Hash(password string) (string, error)
	// Compare returns nil exactly when password matches hash.
	Compare(hash, password string) error
}

// NewService returns a Service.
func NewService(store Store, hasher PasswordHasher, now func() time.Time) *Service {
	return &Service{store: store, now: now, hash: hasher}
}

// Created is the result of creating a merchant.
type Created struct {
	Merchant Merchant
	Sandbox  Keys
}

// Create makes a merchant with its sandbox environment and keys. Sandbox keys
// carry the on-demand permission from the start.
func (s *Service) Create(ctx context.Context, name, email, password string) (Created, error) {
	name, err := person.Name("name", name, 200, person.Required)
	if err != nil {
		return Created{}, err
	}
	email, err = NormalizeEmail(email)
	if err != nil {
		return Created{}, err
	}
	if err := checkPassword(password); err != nil {
		return Created{}, err
	}
	pwHash, err := s.hash.Hash(password)
	if err != nil {
		return Created{}, fmt.Errorf("hash the password of a new merchant: %w", err)
	}
	m := Merchant{ID: ids.New(ids.Merchant), Name: name, Email: email, PasswordHash: pwHash, CreatedAt: s.now().UTC()}
	var keys Keys
	err = s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.InsertMerchant(ctx, m); err != nil {
			if errs.Is(err, errs.Conflict) {
				return errs.Invalid("email", "a merchant with this email already exists")
			}
			return fmt.Errorf("insert merchant %s: %w", m.ID, err)
		}
		keys, _, err = s.createEnvironment(ctx, tx, tenant.Scope{MerchantID: m.ID, Env: tenant.Sandbox}, m.Name, []string{PermOnDemand})
		return err
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Merchant: m, Sandbox: keys}, nil
}

// createEnvironment returns the environment's keys and its secret key's
// id; name is the merchant's.
func (s *Service) createEnvironment(ctx context.Context, tx Store, scope tenant.Scope, name string, perms []string) (Keys, string, error) {
	public := ids.Secret(scope.Env.PublicPrefix())
	env := Environment{Scope: scope, PublicKey: public}
	if s.originatorName != nil {
		env.OriginatorName = s.originatorName(name)
	}
	if err := tx.InsertEnvironment(ctx, env); err != nil {
		return Keys{}, "", fmt.Errorf("create the %s environment: %w", scope.Env, err)
	}
	secret, keyID, err := s.insertKey(ctx, tx, scope, perms)
	if err != nil {
		return Keys{}, "", err
	}
	return Keys{SecretKey: secret, PublicKey: public}, keyID, nil
}

// insertKey makes a secret key and returns it with its id.
func (s *Service) insertKey(ctx context.Context, tx Store, scope tenant.Scope, perms []string) (string, string, error) {
	secret := ids.Secret(scope.Env.SecretPrefix())
	k := APIKey{
		ID:          ids.New(ids.APIKey),
		Scope:       scope,
		SecretHash:  HashSecret(secret),
		LastFour:    secret[len(secret)-4:],
		Permissions: perms,
		CreatedAt:   s.now().UTC(),
	}
	if k.Permissions == nil {
		k.Permissions = []string{}
	}
	if err := tx.InsertAPIKey(ctx, k); err != nil {
		return "", "", fmt.Errorf("insert API key %s of merchant %s's %s environment: %w", k.ID, scope.MerchantID, scope.Env, err)
	}
	return secret, k.ID, nil
}

// ActivateProduction creates the production environment and its keys. The
// production key gets the on-demand permission only from GrantOnDemand.
func (s *Service) ActivateProduction(ctx context.Context, merchantID string, by audit.Actor) (Keys, error) {
	var keys Keys
	err := s.store.WithTx(ctx, func(tx Store) error {
		m, err := s.Merchant(ctx, merchantID)
		if err != nil {
			return err
		}
		if err := tx.MarkProductionActivated(ctx, merchantID, s.now().UTC()); err != nil {
			if errs.Is(err, errs.Conflict) {
				return errs.New(errs.Conflict, "production is already activated; use roll-key for a new secret key")
			}
			return fmt.Errorf("mark production activated for merchant %s: %w", merchantID, err)
		}
		scope := tenant.Scope{MerchantID: merchantID, Env: tenant.Production}
		var keyID string
		if keys, keyID, err = s.createEnvironment(ctx, tx, scope, m.Name, nil); err != nil {
			return err
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.MerchantProductionActivated, by, map[string]string{"key_id": keyID})); err != nil {
			return fmt.Errorf("record the activation of production for merchant %s: %w", merchantID, err)
		}
		return nil
	})
	return keys, err
}

// UseKeyCache makes Authenticate remember resolved keys in c (see KeyCache).
func (s *Service) UseKeyCache(c *KeyCache) { s.keys = c }

// KeysChanged forgets this process's resolved keys after a change to what
// they resolve to made elsewhere (a merchant's first test clock); other
// processes forget theirs on the trigger's notification.
func (s *Service) KeysChanged() { s.keys.Clear() }

// RollKey replaces the scope's secret key; the old one stops working at once.
// The new key keeps the old one's permissions.
func (s *Service) RollKey(ctx context.Context, scope tenant.Scope, by audit.Actor) (string, error) {
	var secret string
	err := s.store.WithTx(ctx, func(tx Store) error {
		old, err := tx.ActiveKey(ctx, scope)
		if err != nil {
			return s.envErr(ctx, fmt.Errorf("lock the active key of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err), scope)
		}
		perms, err := tx.RevokeActiveKey(ctx, scope, s.now().UTC())
		if err != nil {
			return s.envErr(ctx, fmt.Errorf("revoke key %s of merchant %s: %w", old.ID, scope.MerchantID, err), scope)
		}
		var keyID string
		if secret, keyID, err = s.insertKey(ctx, tx, scope, perms); err != nil {
			return err
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.APIKeyRolled, by, map[string]string{"revoked_key_id": old.ID, "key_id": keyID})); err != nil {
			return fmt.Errorf("record the key roll of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err)
		}
		return nil
	})
	s.keys.Clear() // this process at once; others on the trigger's notification
	if err == nil && s.rolled != nil {
		s.rolled(scope, secret)
	}
	return secret, err
}

// OnKeyRolled sets what runs after every committed roll, with the new
// secret key ('make run' keeps the demo merchant's key file current).
func (s *Service) OnKeyRolled(fn func(scope tenant.Scope, secret string)) { s.rolled = fn }

// GrantOnDemand gives the scope's key the on-demand funding-source permission.
func (s *Service) GrantOnDemand(ctx context.Context, scope tenant.Scope, by audit.Actor) error {
	err := s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.GrantPermission(ctx, scope, PermOnDemand); err != nil {
			return fmt.Errorf("grant %s to merchant %s's %s key: %w", PermOnDemand, scope.MerchantID, scope.Env, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.MerchantPermissionChanged, by, map[string]string{"permission": PermOnDemand, "change": "granted"})); err != nil {
			return fmt.Errorf("record the grant of %s to merchant %s: %w", PermOnDemand, scope.MerchantID, err)
		}
		return nil
	})
	s.keys.Clear()
	return s.envErr(ctx, err, scope)
}

// EnableThirdPartyVerification lets the scope create Verified sources on demand.
func (s *Service) EnableThirdPartyVerification(ctx context.Context, scope tenant.Scope, by audit.Actor) error {
	err := s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.EnableThirdPartyVerification(ctx, scope); err != nil {
			return fmt.Errorf("enable third-party verification for merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.MerchantPermissionChanged, by, map[string]string{"permission": "third_party_verification", "change": "granted"})); err != nil {
			return fmt.Errorf("record the grant of third-party verification to merchant %s: %w", scope.MerchantID, err)
		}
		return nil
	})
	s.keys.Clear()
	return s.envErr(ctx, err, scope)
}

// SetPolicies changes the scope's policies: an empty value leaves that
// policy as it is. It answers the policies now in force; the change is
// audited as settings.changed in its transaction.
func (s *Service) SetPolicies(ctx context.Context, scope tenant.Scope, p Policies, by audit.Actor) (Policies, error) {
	switch p.AccountCheck {
	case "", PolicyFlag, PolicyBlockFail:
	default:
		return Policies{}, errs.Invalid("account_check_policy", `account_check_policy must be "flag" or "block_fail"`)
	}
	switch p.Ownership {
	case "", PolicyFlag, PolicyRequireMatch:
	default:
		return Policies{}, errs.Invalid("ownership_policy", `ownership_policy must be "flag" or "require_match"`)
	}
	e, err := s.Environment(ctx, scope)
	if err != nil {
		return Policies{}, err
	}
	if p.AccountCheck == "" {
		p.AccountCheck = e.AccountCheck
	}
	if p.Ownership == "" {
		p.Ownership = e.Ownership
	}
	err = s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.SetPolicies(ctx, scope, p); err != nil {
			return fmt.Errorf("store the policies of merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.SettingsChanged, by, map[string]string{
			"setting": "policies", "account_check_policy": p.AccountCheck, "ownership_policy": p.Ownership})); err != nil {
			return fmt.Errorf("record the policy change of merchant %s: %w", scope.MerchantID, err)
		}
		return nil
	})
	s.keys.Clear()
	return p, s.envErr(ctx, err, scope)
}

// Environment returns the merchant's settings in one environment.
func (s *Service) Environment(ctx context.Context, scope tenant.Scope) (Environment, error) {
	e, err := s.store.Environment(ctx, scope)
	if err != nil {
		return Environment{}, s.envErr(ctx, fmt.Errorf("read merchant %s's %s environment: %w", scope.MerchantID, scope.Env, err), scope)
	}
	return e, nil
}

// Merchant returns a merchant by id.
func (s *Service) Merchant(ctx context.Context, id string) (Merchant, error) {
	m, err := s.store.Merchant(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return Merchant{}, errs.Newf(errs.NotFound, "no merchant %s", id)
	}
	if err != nil {
		return Merchant{}, fmt.Errorf("read merchant %s: %w", id, err)
	}
	return m, nil
}

// MerchantByEmail returns a merchant by login email.
func (s *Service) MerchantByEmail(ctx context.Context, email string) (Merchant, error) {
	m, err := s.store.MerchantByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
	if err != nil {
		return Merchant{}, fmt.Errorf("read a merchant by login email: %w", err)
	}
	return m, nil
}

// envErr explains a missing environment: production before activation, or an
// unknown merchant.
func (s *Service) envErr(ctx context.Context, err error, scope tenant.Scope) error {
	if !errs.Is(err, errs.NotFound) {
		return err
	}
	if _, merr := s.Merchant(ctx, scope.MerchantID); merr != nil {
		return merr
	}
	return errs.Newf(errs.PermissionDenied, "merchant %s has no %s environment; activate production first", scope.MerchantID, scope.Env)
}

// NormalizeEmail trims and lowercases a login email address and checks it.
func NormalizeEmail(email string) (string, error) {
	return person.Email("email", strings.ToLower(email))
}

// NewPassword returns a random dashboard password of 20 base62 characters
// (about 119 bits), for operator-created merchants.
func NewPassword() string { return ids.Secret("")[:20] }

// HashSecret is how secret keys are stored and looked up.
func HashSecret(secret string) []byte {
	h := hashSecret(secret)
	return h[:]
}

// hashSecret is HashSecret's hash as an array. A key's bytes go through an
// array of the function's own, as a conversion of the whole key would
// allocate them.
func hashSecret(secret string) [sha256.Size]byte {
	var b [64]byte
	if len(secret) > len(b) {
		return sha256.Sum256([]byte(secret))
	}
	return sha256.Sum256(b[:copy(b[:], secret)])
}

// SetPassword replaces a merchant's dashboard password.
func (s *Service) SetPassword(ctx context.Context, merchantID, password string, by audit.Actor) error {
	return s.store.WithTx(ctx, func(tx Store) error {
		if err := s.setPassword(ctx, tx, merchantID, password); err != nil {
			return err
		}
		if err := tx.RecordAudit(ctx, audit.Account(merchantID, audit.DashboardPasswordChanged, by, nil)); err != nil {
			return fmt.Errorf("record the password change of merchant %s: %w", merchantID, err)
		}
		return nil
	})
}

// setPassword is SetPassword on st, the pool's store or a transaction's.
func (s *Service) setPassword(ctx context.Context, st Store, merchantID, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	h, err := s.hash.Hash(password)
	if err != nil {
		return fmt.Errorf("hash the password of merchant %s: %w", merchantID, err)
	}
	if err := st.SetPasswordHash(ctx, merchantID, h); err != nil {
		return fmt.Errorf("store the password of merchant %s: %w", merchantID, err)
	}
	return nil
}
