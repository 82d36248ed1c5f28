// Package tenant names whose data a request may touch: one merchant in one
// environment. Every merchant-scoped row carries both, and every store method
// takes a Scope so that no query can cross merchants or environments.
package tenant

import (
	"fmt"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// Environment is sandbox or production. The API key decides it.
type Environment string

// The two environments.
const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// ParseEnvironment accepts "sandbox" or "production".
func ParseEnvironment(s string) (Environment, error) {
	switch Environment(s) {
	case Sandbox, Production:
		return Environment(s), nil
	}
	return "", fmt.Errorf("environment must be sandbox or production, not %q", s)
}

// Live reports whether e is production (the events' livemode flag).
func (e Environment) Live() bool { return e == Production }

// SecretPrefix is the prefix of secret keys of the environment.
func (e Environment) SecretPrefix() string {
	if e == Production {
		return "sk_live_"
	}
	return "sk_test_"
}

// PublicPrefix is the prefix of public keys of the environment.
func (e Environment) PublicPrefix() string {
	if e == Production {
		return "pk_live_"
	}
	return "pk_test_"
}

// Scope is one merchant in one environment.
type Scope struct {
	MerchantID string
	Env        Environment
}

// SandboxOnly refuses a production scope with permission_denied: the
// sandbox's simulations and shortcuts must never touch production data.
func SandboxOnly(scope Scope) error {
	if scope.Env != Sandbox {
		return errs.New(errs.PermissionDenied, "The sandbox's simulations and shortcuts take a sandbox key (sk_test_); this is a production key.")
	}
	return nil
}
