package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Return-rate guardrails. An originator (a merchant environment) whose
// debits come back too often must stop sending them until its bank has
// looked: above a NACHA threshold (unauthorized 0.5%, administrative 3%,
// overall 15%, over 60 days) its new debits are held; from half a
// threshold it is warned (originator.return_rate_warning, once per rate
// per day). A rate counts once the window holds MinRateDebits debits:
// one return among three debits says nothing yet.
//
// Counting 60 days of debits on every payment would cost each creation
// an aggregate, so the rates are computed when they change the most, as a
// return is applied (in the return's transaction), and kept in one row per
// originator (Guardrail) that a creation reads with its other facts. New
// debits lower a rate without a return; so a hold decided more than
// guardrailStale ago is computed again before it holds another debit,
// which costs the aggregate only to an originator that is held.

// MinRateDebits is the least debits in the window for a rate to count.
const MinRateDebits = 20

// guardrailStale is how old a stored hold may be before a debit it would
// hold computes it again.
const guardrailStale = time.Hour

// Guardrail is an originator's return rates as last computed, with what
// they hold and which warnings fired on which day.
type Guardrail struct {
	Counts     ReturnCounts
	HoldReason string            // "" when nothing is held
	Warned     map[string]string // rate name → last day warned, YYYY-MM-DD US Eastern
	ComputedAt time.Time         // UTC
}

// warning is the data of originator.return_rate_warning.
type warning struct {
	Rate      string  `json:"rate"` // unauthorized, administrative or overall
	Value     float64 `json:"value"`
	Returns   int     `json:"returns"`
	Debits    int     `json:"debits"`
	Threshold float64 `json:"threshold"`
	Held      bool    `json:"held"` // the rate is above its threshold: new debits are held
}

// rates computes c's rates against their thresholds.
func rates(c ReturnCounts) ReturnRates {
	rate := func(returns int, threshold float64) Rate {
		r := Rate{Returns: returns, Debits: c.Debits, Threshold: threshold}
		if c.Debits > 0 {
			r.Rate = float64(returns) / float64(c.Debits)
		}
		return r
	}
	return ReturnRates{WindowDays: achcode.RateWindowDays,
		Unauthorized:   rate(c.Unauthorized, achcode.UnauthorizedThreshold),
		Administrative: rate(c.Administrative, achcode.AdministrativeThreshold),
		Overall:        rate(c.Returns, achcode.OverallThreshold),
	}
}

// recomputeGuardrail computes scope's return rates in tx, stores them
// with the hold they decide, fires the warnings not yet fired today, and
// returns the hold reason ("" for none).
func (s *Service) recomputeGuardrail(ctx context.Context, tx Store, scope tenant.Scope) (string, error) {
	now := s.now(ctx).UTC()
	since := now.Add(-achcode.RateWindowDays * 24 * time.Hour)
	c, err := tx.ReturnCounts(ctx, scope, since, achcode.UnauthorizedCodes, achcode.AdministrativeCodes)
	if err != nil {
		return "", fmt.Errorf("count returns of merchant %s: %w", scope.MerchantID, err)
	}
	prev, err := tx.GuardrailForUpdate(ctx, scope)
	if err != nil {
		return "", fmt.Errorf("lock the guardrail of merchant %s: %w", scope.MerchantID, err)
	}
	g := Guardrail{Counts: c, Warned: map[string]string{}, ComputedAt: now}
	for k, v := range prev.Warned {
		g.Warned[k] = v
	}
	r := rates(c)
	today := calendar.DateOf(now).Format(time.DateOnly)
	for _, x := range []struct {
		name, hold string
		rate       Rate
	}{
		{"unauthorized", HoldReturnRateUnauthorized, r.Unauthorized},
		{"administrative", HoldReturnRateAdministrative, r.Administrative},
		{"overall", HoldReturnRateOverall, r.Overall},
	} {
		if c.Debits < MinRateDebits {
			break
		}
		if x.rate.Exceeded() && g.HoldReason == "" {
			g.HoldReason = x.hold
		}
		if !x.rate.Warning() || g.Warned[x.name] == today {
			continue
		}
		g.Warned[x.name] = today
		w := warning{Rate: x.name, Value: x.rate.Rate, Returns: x.rate.Returns, Debits: x.rate.Debits,
			Threshold: x.rate.Threshold, Held: x.rate.Exceeded()}
		if err := tx.RecordEvent(ctx, event.New(scope, event.OriginatorReturnRateWarning, w, now)); err != nil {
			return "", fmt.Errorf("record the return rate warning of merchant %s: %w", scope.MerchantID, err)
		}
	}
	return g.HoldReason, tx.SaveGuardrail(ctx, scope, g)
}

// Guardrail returns scope's stored guardrail (zero when never computed).
func (s *Service) Guardrail(ctx context.Context, scope tenant.Scope) (Guardrail, error) {
	return s.store.Guardrail(ctx, scope)
}
