package funding

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// How a source became Verified, besides the methods of its verifications
// (micro_deposits, instant).
const (
	// VerifiedByProcessorToken: linked through a bank-linking provider's
	// processor token, where the customer signed in to the account.
	VerifiedByProcessorToken = "processor_token"
	// VerifiedByThirdParty: created on demand in an environment whose
	// merchant verifies accounts itself (third-party verification).
	VerifiedByThirdParty = "third_party"
)

// VerifiedBy says how and when a source became Verified, as a disputed
// debit's evidence shows it; both null for a source that is not Verified.
type VerifiedBy struct {
	Method     *string    `json:"method"`
	VerifiedAt *time.Time `json:"verified_at"` // UTC
}

// VerifiedBy returns how and when src, as Get returned it, became
// Verified. A source verified by a verification of its own names that
// verification's method; one Verified at creation was linked by a
// processor token (which the token ledger remembers) or by a merchant
// that verifies accounts itself.
func (s *Service) VerifiedBy(ctx context.Context, src Source) (VerifiedBy, error) {
	if src.Status != Verified {
		return VerifiedBy{}, nil
	}
	at, byToken, err := s.store.SourceVerified(ctx, src.Scope, src.ID)
	if err != nil {
		return VerifiedBy{}, fmt.Errorf("read how source %s was verified: %w", src.ID, err)
	}
	method := VerifiedByThirdParty
	switch {
	case src.Verification != nil && src.Verification.Status == DepositSucceeded:
		method = src.Verification.Method
	case src.Ownership != nil || byToken:
		method = VerifiedByProcessorToken
	}
	if at != nil {
		utc := at.UTC()
		at = &utc
	}
	return VerifiedBy{Method: &method, VerifiedAt: at}, nil
}

// sourceVerifier is the store's read behind VerifiedBy.
type sourceVerifier interface {
	// SourceVerified returns when a source became Verified (nil when it
	// is not) and whether a processor token linked it; errs.NotFound if
	// unknown.
	SourceVerified(ctx context.Context, scope tenant.Scope, id string) (verifiedAt *time.Time, byToken bool, err error)
}
