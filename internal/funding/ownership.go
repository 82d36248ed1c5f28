package funding

import (
	"context"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// Ownership results.
const (
	OwnershipMatch       = "match"
	OwnershipPartial     = "partial"
	OwnershipMismatch    = "mismatch"
	OwnershipUnavailable = "unavailable"
)

// OwnerScores are the provider's scores (0–100) of a customer's name and
// email against the owner of a processor token's account; -1 when the
// provider gave none.
type OwnerScores struct {
	Name  int
	Email int
}

// Ownership is the ownership check of a source linked through a
// processor token: the result follows the name score (70 and above
// match, 50–69 partial, below 50 mismatch); unavailable when the provider
// could not say, which never fails a link under the flag policy.
type Ownership struct {
	Result     string    `json:"result"`
	NameScore  *int      `json:"name_score"`
	EmailScore *int      `json:"email_score"`
	CheckedAt  time.Time `json:"checked_at"` // UTC
}

// Identity is what a customer says about itself that the ownership check
// matches: the legal name (the business name of a business customer, else
// first and last name) and the email.
type Identity struct {
	LegalName string
	Email     string
	// Company: the customer has a business name, and LegalName is it;
	// Person is the customer's first and last name either way.
	Company bool
	Person  string
}

// IdentityOf is the identity of a customer with these names and email.
func IdentityOf(firstName, lastName, email string, businessName *string) Identity {
	person := strings.TrimSpace(firstName + " " + lastName)
	if businessName != nil && strings.TrimSpace(*businessName) != "" {
		return Identity{LegalName: strings.TrimSpace(*businessName), Email: email, Company: true, Person: person}
	}
	return Identity{LegalName: person, Email: email, Person: person}
}

// OwnershipOf is the ownership check of scores at now. A score outside
// 0–100 counts as none given, so a provider's odd answer reads as
// unavailable rather than as a verdict.
func OwnershipOf(sc OwnerScores, now time.Time) Ownership {
	o := Ownership{Result: OwnershipUnavailable, CheckedAt: now.UTC()}
	if sc.Email >= 0 && sc.Email <= 100 {
		e := sc.Email
		o.EmailScore = &e
	}
	if sc.Name < 0 || sc.Name > 100 {
		return o
	}
	n := sc.Name
	o.NameScore = &n
	switch {
	case n >= 70:
		o.Result = OwnershipMatch
	case n >= 50:
		o.Result = OwnershipPartial
	default:
		o.Result = OwnershipMismatch
	}
	return o
}

// checkOwnership asks the provider how well who matches the owner of the
// token's account. Under the flag policy a provider error is an
// unavailable check and never fails the link; under require_match it is
// the provider's error (nothing can be confirmed), and any result but a
// match is ownership_mismatch. Either refusal writes nothing, so the token
// stays usable for the customer it belongs to.
func (s *Service) checkOwnership(ctx context.Context, c Caller, token string, who Identity) (*Ownership, error) {
	requireMatch := c.OwnershipPolicy == PolicyRequireMatch
	sc, err := s.provider.OwnerScores(ctx, token, who.LegalName, who.Email)
	if err != nil && requireMatch {
		return nil, err
	}
	if err != nil {
		sc = OwnerScores{Name: -1, Email: -1}
	}
	o := OwnershipOf(sc, s.now(ctx))
	if requireMatch && o.Result != OwnershipMatch {
		why := "The bank account's owner does not match this customer's name (ownership " + o.Result + ")"
		if o.Result == OwnershipUnavailable {
			why = "The provider gave no score for this customer's name against the bank account's owner"
		}
		return nil, (&errs.Error{Code: errs.OwnershipMismatch, Param: "user_id",
			Message: why + " and this environment's ownership_policy is require_match; nothing was created and the processor token can still be used."}).
			WithDetail("ownership", o)
	}
	return &o, nil
}
