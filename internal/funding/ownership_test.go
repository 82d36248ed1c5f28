package funding_test

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/funding"
)

func TestOwnershipBandsFollowTheNameScore(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.FixedZone("EST", -5*3600))
	for _, c := range []struct {
		name, email int
		result      string
		nameNull    bool
		emailNull   bool
	}{
		{100, 100, funding.OwnershipMatch, false, false},
		{70, 0, funding.OwnershipMatch, false, false},
		{69, 100, funding.OwnershipPartial, false, false},
		{50, -1, funding.OwnershipPartial, false, true},
		{49, 100, funding.OwnershipMismatch, false, false},
		{0, 0, funding.OwnershipMismatch, false, false},
		// No name score, or one outside 0–100: the provider could not say.
		{-1, 100, funding.OwnershipUnavailable, true, false},
		{101, 101, funding.OwnershipUnavailable, true, true},
	} {
		o := funding.OwnershipOf(funding.OwnerScores{Name: c.name, Email: c.email}, now)
		if o.Result != c.result || (o.NameScore == nil) != c.nameNull || (o.EmailScore == nil) != c.emailNull ||
			(o.NameScore != nil && *o.NameScore != c.name) || (o.EmailScore != nil && *o.EmailScore != c.email) {
			t.Errorf("scores %d/%d: %+v, want %s", c.name, c.email, o, c.result)
		}
		if !o.CheckedAt.Equal(now) || o.CheckedAt.Location() != time.UTC {
			t.Errorf("checked_at %v, want %v in UTC", o.CheckedAt, now)
		}
	}
}

func TestIdentityIsTheBusinessNameOfABusiness(t *testing.T) {
	biz, blank := " Smith Holdings LLC ", "  "
	for _, c := range []struct {
		business *string
		want     string
	}{{nil, "Alberta Charleson"}, {&blank, "Alberta Charleson"}, {&biz, "Smith Holdings LLC"}} {
		if got := funding.IdentityOf("Alberta", "Charleson", "a@example.com", c.business); got.LegalName != c.want || got.Email != "a@example.com" {
			t.Errorf("business %v: %+v, want %q", c.business, got, c.want)
		}
	}
}
