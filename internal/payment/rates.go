package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// ReturnCounts are an environment's debits created since a time (those
// canceled before they went out left aside) and how many of them were
// returned: with an unauthorized code, an administrative code, or any.
type ReturnCounts struct {
	Debits, Unauthorized, Administrative, Returns int
}

// Rate is one return rate against NACHA's threshold for it.
type Rate struct {
	Rate      float64 `json:"rate"`
	Returns   int     `json:"returns"`
	Debits    int     `json:"debits"`
	Threshold float64 `json:"threshold"`
}

// Warning says the rate has reached half its threshold.
func (r Rate) Warning() bool { return r.Rate >= r.Threshold/2 }

// Exceeded says the rate is above its threshold.
func (r Rate) Exceeded() bool { return r.Rate > r.Threshold }

// ReturnRates are an environment's debit return rates over the window.
type ReturnRates struct {
	WindowDays     int  `json:"window_days"`
	Unauthorized   Rate `json:"unauthorized"`
	Administrative Rate `json:"administrative"`
	Overall        Rate `json:"overall"`
}

// ReturnRates computes the environment's return rates over the last
// achcode.RateWindowDays days, by the debits created in that window.
func (s *Service) ReturnRates(ctx context.Context, scope tenant.Scope) (ReturnRates, error) {
	since := s.now(ctx).UTC().Add(-achcode.RateWindowDays * 24 * time.Hour)
	c, err := s.store.ReturnCounts(ctx, scope, since, achcode.UnauthorizedCodes, achcode.AdministrativeCodes)
	if err != nil {
		return ReturnRates{}, fmt.Errorf("count returns of merchant %s: %w", scope.MerchantID, err)
	}
	return rates(c), nil
}
