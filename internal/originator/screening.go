package originator

import (
	"fmt"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// Sanctions screening of originators. Entries go out under the
// originator's company name, so a company the SDN list names must not
// send them: the name is screened (as a business's, and as a person's,
// since a sole proprietor's company is often its owner's name) when an
// operator sets it and when the originator is activated. An originator
// whose name is a potential match is not activated, and an active one
// does not take such a name; one that is not active may, so that the
// operator sees the match (originator show) before deciding. There is no
// clearing: the operator sets another name, the one the bank knows.

// WithSanctions sets the list company names are screened against; nil:
// none (every name is clear).
func (s *Service) WithSanctions(l *sanctions.List) *Service {
	s.sanctions = l
	return s
}

// Screen is the screening of a company name.
func (s *Service) Screen(companyName string) sanctions.Screening {
	if s.sanctions == nil {
		return sanctions.Screening{Status: sanctions.Clear}
	}
	return s.sanctions.Of(sanctions.Screening{}, sanctions.Business(companyName), sanctions.Written(companyName))
}

// mayBeActive refuses o as an active originator when its company name is
// a potential match (conflict), saying which entry it resembles.
func (s *Service) mayBeActive(o Originator) error {
	sc := s.Screen(o.CompanyName)
	if sc.Status != sanctions.PotentialMatch {
		return nil
	}
	return errs.Newf(errs.Conflict, "The company name %q is a potential match of the SDN list's entry %s (%q, programs %s, score %.4g): "+
		"no active originator carries it; set the company name the bank knows (originator set --company-name).",
		o.CompanyName, sc.SDNEntry.Num, sc.Listed, strings.Join(sc.Programs, ", "), *sc.Score)
}

// screeningNote is how the audit records a potential match of a company
// name it set.
func screeningNote(sc sanctions.Screening) string {
	return fmt.Sprintf("%s of SDN entry %s (score %.4g)", sc.Status, sc.SDNEntry.Num, *sc.Score)
}
