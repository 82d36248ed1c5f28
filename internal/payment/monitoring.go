package payment

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Fraud monitoring. NACHA asks originators and their banks to run
// risk-based processes that identify entries that are unauthorized or
// sent under false pretenses. Each rule below is one such signal, judged
// when a payment is created: a match does not refuse the payment (a
// merchant's customer may be honest), it holds it for an operator's
// review and records an alert, so that the review, and the alerts per
// rule, are the process a bank can audit.
//
// Rules are versioned: a rule's meaning changes only with a new version,
// so an alert names exactly what it applied. Thresholds are per
// originator, each rule's default applying where the originator sets
// none; a payment is judged by those its risk facts carry from the
// originator's row (no read of their own), the monitoring report shows
// those Thresholds gives.
//
// Creation stays one fast statement: the facts every rule needs are read
// by one statement of indexed lookups (Store.RiskFacts) before it, and
// only a payment that is held is written in a transaction with its hold,
// its alerts and payment.held. Two debits of one source created at the
// same instant may each be judged without the other (the velocity rule
// counts committed debits): a signal, not a limit, so the window is
// accepted rather than serializing every source's debits.
//
// The account check is no such fact: it is computed from the account's
// history, which any merchant's later return or correction changes, and
// the source keeps only an answer that such a fact marks stale. So the
// rules ask the funding service (AccountChecks) for the check as GET
// /v2/funding-source answers it, and only for a payment above the
// threshold of a rule that reads it. Every rule is decided here, in Go;
// the statements that create payments decide none of them.

// Rule is one fraud-monitoring rule.
type Rule struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
	// Default is the threshold where the originator sets none: dollars,
	// or for daily_velocity "COUNT/DOLLARS".
	Default string `json:"-"`
	// Description says what the rule holds.
	Description string `json:"description"`
}

// Rule ids.
const (
	RuleFirstDebitAmount  = "first_debit_amount"
	RuleDailyVelocity     = "daily_velocity"
	RuleRiskyAccount      = "risky_account"
	RuleUnverifiedCredit  = "unverified_credit"
	RuleChangedAccount    = "changed_account"
	RuleFirstCreditAmount = "first_credit_amount"
)

// Rules are the fraud-monitoring rules in force, in the order they are
// judged.
var Rules = []Rule{
	{ID: RuleFirstDebitAmount, Version: 1, Default: "2500.00",
		Description: "A source's first debit within 7 days of its creation above the threshold."},
	{ID: RuleDailyVelocity, Version: 1, Default: "5/10000.00",
		Description: "More debits of one source in a banking day (US Eastern) than the count, or more in total than the amount."},
	{ID: RuleChangedAccount, Version: 2, Default: "500.00",
		Description: "A debit or credit above the threshold within 30 days after a notification of change changed the source's account."},
	{ID: RuleRiskyAccount, Version: 1, Default: "500.00",
		Description: "A debit above the threshold from a source whose account check is fail or caution."},
	{ID: RuleUnverifiedCredit, Version: 1, Default: "1000.00",
		Description: "A credit above the threshold to an Unverified source."},
	{ID: RuleFirstCreditAmount, Version: 1, Default: "2500.00",
		Description: "A source's first credit within 7 days of its creation above the threshold."},
}

// AlertReversalThenReturn is the alert of a payment that came back after
// its reversal had left: the customer's bank may have paid the customer
// back twice, by the reversal and by the return, and an operator must
// recover one. It holds nothing (both entries are gone), so it is no Rule
// and has no threshold; the monitoring report counts it with the rules'
// alerts.
const AlertReversalThenReturn = "reversal_then_return"

// Windows of the rules.
const (
	FirstDebitWindow     = 7 * 24 * time.Hour
	FirstCreditWindow    = 7 * 24 * time.Hour
	ChangedAccountWindow = 30 * 24 * time.Hour
)

// Thresholds gives an originator's (a merchant environment's) thresholds
// by rule id; a rule it leaves out takes its default.
type Thresholds interface {
	Thresholds(ctx context.Context, scope tenant.Scope) (map[string]string, error)
}

// DefaultThresholds is the Thresholds of a service that keeps no
// per-originator thresholds: every rule takes its default.
type DefaultThresholds struct{}

// Thresholds returns none.
func (DefaultThresholds) Thresholds(context.Context, tenant.Scope) (map[string]string, error) {
	return nil, nil
}

// AccountChecks answers a source's account check result (pass, caution,
// fail, unknown) as GET /v2/funding-source/{id} answers it: the funding
// service computes it (from the account's history when its kept answer
// no longer holds), so a rule never judges by a kept answer that a later
// fact about the account has made stale.
type AccountChecks interface {
	CheckResult(ctx context.Context, scope tenant.Scope, sourceID string) (string, error)
}

// WithAccountChecks sets who answers account checks to the rules.
func (s *Service) WithAccountChecks(c AccountChecks) *Service {
	s.checks = c
	return s
}

// WithThresholds sets who gives originators' thresholds to the
// monitoring report.
func (s *Service) WithThresholds(t Thresholds) *Service {
	s.thresholds = t
	return s
}

// ValidThreshold checks a threshold value for rule id: dollars ("500.00"),
// or for daily_velocity "COUNT/DOLLARS".
func ValidThreshold(id, v string) error {
	_, _, err := parseThreshold(id, v)
	return err
}

// parseThreshold reads a threshold: its count (daily_velocity) and its
// amount in cents.
func parseThreshold(id, v string) (int, int64, error) {
	known := false
	for _, r := range Rules {
		known = known || r.ID == id
	}
	if !known {
		return 0, 0, fmt.Errorf("unknown rule %q", id)
	}
	count := 0
	amount := v
	if id == RuleDailyVelocity {
		n, a, ok := strings.Cut(v, "/")
		c, err := strconv.Atoi(n)
		if !ok || err != nil || c < 1 {
			return 0, 0, fmt.Errorf("%s takes COUNT/DOLLARS, like 5/10000.00", id)
		}
		count, amount = c, a
	}
	cents, ok := money.ParseCents(amount)
	if !ok || cents < 0 {
		return 0, 0, fmt.Errorf("%s takes dollars with at most two decimals, like 500.00", id)
	}
	return count, cents, nil
}

// RiskFacts are what the risk rules judge a new payment by, read in one
// statement (Store.RiskFacts).
type RiskFacts struct {
	Found           bool      // the source exists in the scope
	SourceCreatedAt time.Time // UTC
	Verified        bool
	// PriorDebits counts the source's debits before this one, canceled
	// ones left aside.
	PriorDebits int
	// PriorCredits counts the source's credits before this one, canceled
	// ones left aside (0 or 1: the rules ask only whether there was one).
	PriorCredits int
	// DayDebits and DayCents are the source's debits (canceled and
	// failed left aside) created since the banking day began.
	DayDebits int
	DayCents  int64
	// AccountChangedAt is when a notification of change last changed the
	// source's account number or routing (C01, C02, C03, C06, C07): the
	// only way a source's account changes; nil when none did.
	AccountChangedAt *time.Time
	// Screening is the customer's sanctions screening status ("" when
	// never screened: clear).
	Screening string
	// Guardrail is the originator's return-rate hold reason as last
	// computed, "" for none, and when it was computed.
	Guardrail           string
	GuardrailComputedAt *time.Time
	// Thresholds are the ones the operator set for the originator, by
	// rule id (a rule left out takes its default). They come with the
	// facts, from the originator's row, so that judging a payment costs
	// no read of its own; Thresholds (the interface) gives the same to
	// the monitoring report.
	Thresholds map[string]string
	// CompanyIDMissing: the originator is active with the database's
	// placeholder company id, which no operator replaced yet.
	CompanyIDMissing bool
	// DefaultPurpose is the originator's default_purpose, which a
	// payment without a purpose has ("" without an originator); it comes
	// with the facts so that it costs no read of its own.
	DefaultPurpose string
}

// Alert is a fraud rule's match on a payment.
type Alert struct {
	Scope       tenant.Scope `json:"-"`
	ID          string       `json:"alert_id"`
	RuleID      string       `json:"rule_id"`
	RuleVersion int          `json:"rule_version"`
	Threshold   string       `json:"threshold"`
	PaymentID   string       `json:"payment_id"`
	SourceID    string       `json:"funding_source_id"`
	CreatedAt   time.Time    `json:"created_at"`
}

// verdict is what the risk rules decided for a new payment: why it is
// held ("" for not), and the fraud rules that matched.
type verdict struct {
	reason string
	alerts []Alert
}

// BankingDayStart is when the banking day of t began, US Eastern: at
// midnight after the previous banking day, so that debits of a weekend or
// holiday count with the next banking day's.
func BankingDayStart(t time.Time) time.Time {
	prev := calendar.DateOf(t).AddDate(0, 0, -1)
	for !calendar.IsBusinessDay(prev) {
		prev = prev.AddDate(0, 0, -1)
	}
	d := prev.AddDate(0, 0, 1)
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, calendar.Eastern)
}

// assess judges a new payment of cents in direction d from sourceID:
// sanctions first (the customer's screening), then the originator's
// company id (production), then its return rates (debits), then the
// fraud rules.
// It returns the facts it judged by too.
func (s *Service) assess(ctx context.Context, tx Store, scope tenant.Scope, sourceID string, d Direction, cents int64) (verdict, RiskFacts, error) {
	return s.judge(ctx, tx, scope, sourceID, d, cents, true)
}

// assessStanding is assess without the fraud rules, for the debits the
// service creates itself (a subscription's, a re-presentment): the
// merchant asked for them once, when their subscription or original was
// judged, but a sanctions match or the originator's return rates hold
// them as they hold any.
func (s *Service) assessStanding(ctx context.Context, tx Store, p Payment) (verdict, error) {
	v, _, err := s.judge(ctx, tx, p.Scope, p.SourceID, p.Direction, p.Cents, false)
	return v, err
}

func (s *Service) judge(ctx context.Context, tx Store, scope tenant.Scope, sourceID string, d Direction, cents int64, rules bool) (verdict, RiskFacts, error) {
	now := s.now(ctx).UTC()
	f, err := tx.RiskFacts(ctx, scope, sourceID, BankingDayStart(now))
	if err != nil || !f.Found {
		return verdict{}, f, err
	}
	if f.Screening == ScreeningPotentialMatch {
		return verdict{reason: HoldSanctions}, f, nil
	}
	if f.CompanyIDMissing && scope.Env.Live() {
		return verdict{reason: HoldOriginatorCompanyID}, f, nil
	}
	if d == Debit && f.Guardrail != "" {
		reason := f.Guardrail
		if f.GuardrailComputedAt == nil || now.Sub(*f.GuardrailComputedAt) > guardrailStale {
			err := tx.WithTx(ctx, func(tx Store) (err error) {
				reason, err = s.recomputeGuardrail(ctx, tx, scope)
				return err
			})
			if err != nil {
				return verdict{}, f, err
			}
		}
		if reason != "" {
			return verdict{reason: reason}, f, nil
		}
	}
	if !rules {
		return verdict{}, f, nil
	}
	// The account check is asked for once, and only when a rule needs
	// it: most payments are below the thresholds of the rules that read it.
	var check *string
	checkOf := func() (string, error) {
		if check == nil {
			if s.checks == nil {
				return "", fmt.Errorf("account check of %s: no account checks to ask", sourceID)
			}
			c, err := s.checks.CheckResult(ctx, scope, sourceID)
			if err != nil {
				return "", fmt.Errorf("account check of %s: %w", sourceID, err)
			}
			check = &c
		}
		return *check, nil
	}
	var v verdict
	for _, r := range Rules {
		value := r.Default
		if t, ok := f.Thresholds[r.ID]; ok {
			if err := ValidThreshold(r.ID, t); err == nil {
				value = t
			}
		}
		count, limit, err := parseThreshold(r.ID, value)
		if err != nil {
			return verdict{}, f, err
		}
		match, err := matches(r.ID, f, now, d, cents, count, limit, checkOf)
		if err != nil {
			return verdict{}, f, err
		}
		if !match {
			continue
		}
		if v.reason == "" {
			v.reason = HoldFraudPrefix + r.ID
		}
		v.alerts = append(v.alerts, Alert{Scope: scope, RuleID: r.ID, RuleVersion: r.Version, Threshold: value,
			SourceID: sourceID, CreatedAt: now})
	}
	return v, f, nil
}

// matches is rule id's judgment of a payment of cents in direction d at
// now, with the rule's count and amount threshold (cents); check answers
// the source's account check.
func matches(id string, f RiskFacts, now time.Time, d Direction, cents int64, count int, limit int64,
	check func() (string, error)) (bool, error) {
	switch id {
	case RuleFirstDebitAmount:
		return d == Debit && f.PriorDebits == 0 && now.Sub(f.SourceCreatedAt) <= FirstDebitWindow && cents > limit, nil
	case RuleFirstCreditAmount:
		// A payout to a source just linked is how money is sent under
		// false pretenses: a large first one waits for review.
		return d == Credit && f.PriorCredits == 0 && now.Sub(f.SourceCreatedAt) <= FirstCreditWindow && cents > limit, nil
	case RuleDailyVelocity:
		return d == Debit && (f.DayDebits+1 > count || f.DayCents+cents > limit), nil
	case RuleRiskyAccount:
		if d != Debit || cents <= limit {
			return false, nil
		}
		c, err := check()
		return c == CheckFail || c == CheckCaution, err
	case RuleUnverifiedCredit:
		return d == Credit && !f.Verified && cents > limit, nil
	case RuleChangedAccount:
		// Both directions (version 2): a credit to an account just
		// changed is how a payout is sent under false pretenses.
		return f.AccountChangedAt != nil && now.Sub(*f.AccountChangedAt) <= ChangedAccountWindow && cents > limit, nil
	}
	return false, nil
}

// Account check results the rules read (those of GET
// /v2/funding-source's account_check).
const (
	CheckFail    = "fail"
	CheckCaution = "caution"
)

// AlertWindowDays is the window of GET /v2/compliance/monitoring's alert
// counts.
const AlertWindowDays = 30

// RuleInForce is a rule with the threshold that applies to an originator.
type RuleInForce struct {
	Rule
	Threshold string `json:"threshold"`
}

// RuleAlerts counts one rule's alerts over the window.
type RuleAlerts struct {
	RuleID string `json:"rule_id"`
	Alerts int    `json:"alerts"`
}

// Monitoring is an originator's fraud-monitoring report.
type Monitoring struct {
	Rules      []RuleInForce `json:"rules"`
	WindowDays int           `json:"window_days"`
	Alerts     []RuleAlerts  `json:"alerts"`
	// Held are the originator's held payments, oldest first (at most
	// MaxHeldShown).
	Held []Payment `json:"held_payments"`
	// LastReview is the platform's last annual review; nil when none.
	LastReview *Review `json:"last_annual_review"`
}

// MaxHeldShown bounds the held payments a report lists.
const MaxHeldShown = 100

// Monitoring reports scope's rules and thresholds, its alerts by rule
// over AlertWindowDays days, its held payments and the last annual review.
func (s *Service) Monitoring(ctx context.Context, scope tenant.Scope) (Monitoring, error) {
	var th map[string]string
	if s.thresholds != nil {
		var err error
		if th, err = s.thresholds.Thresholds(ctx, scope); err != nil {
			return Monitoring{}, fmt.Errorf("read the monitoring thresholds of merchant %s: %w", scope.MerchantID, err)
		}
	}
	m := Monitoring{WindowDays: AlertWindowDays, Rules: make([]RuleInForce, len(Rules)), Alerts: make([]RuleAlerts, len(Rules))}
	counts, err := s.store.AlertCounts(ctx, scope, s.now(ctx).UTC().Add(-AlertWindowDays*24*time.Hour))
	if err != nil {
		return Monitoring{}, fmt.Errorf("count alerts of merchant %s: %w", scope.MerchantID, err)
	}
	for i, r := range Rules {
		m.Rules[i] = RuleInForce{Rule: r, Threshold: r.Default}
		if t, ok := th[r.ID]; ok && ValidThreshold(r.ID, t) == nil {
			m.Rules[i].Threshold = t
		}
		m.Alerts[i] = RuleAlerts{RuleID: r.ID, Alerts: counts[r.ID]}
	}
	m.Alerts = append(m.Alerts, RuleAlerts{RuleID: AlertRefundThenReturn, Alerts: counts[AlertRefundThenReturn]},
		RuleAlerts{RuleID: AlertReversalThenReturn, Alerts: counts[AlertReversalThenReturn]})
	if m.Held, err = s.store.HeldPayments(ctx, &scope, MaxHeldShown); err != nil {
		return Monitoring{}, fmt.Errorf("list held payments of merchant %s: %w", scope.MerchantID, err)
	}
	r, err := s.store.LastReview(ctx)
	switch {
	case err == nil:
		m.LastReview = &r
	case !errs.Is(err, errs.NotFound):
		return Monitoring{}, fmt.Errorf("read the last review: %w", err)
	}
	return m, nil
}

// ReversedThenReturned counts scope's reversal_then_return alerts over
// AlertWindowDays days.
func (s *Service) ReversedThenReturned(ctx context.Context, scope tenant.Scope) (int, error) {
	counts, err := s.store.AlertCounts(ctx, scope, s.now(ctx).UTC().Add(-AlertWindowDays*24*time.Hour))
	if err != nil {
		return 0, fmt.Errorf("count reversal_then_return alerts: %w", err)
	}
	return counts[AlertReversalThenReturn], nil
}

// RefundedThenReturned counts scope's refund_then_return alerts over
// AlertWindowDays days.
func (s *Service) RefundedThenReturned(ctx context.Context, scope tenant.Scope) (int, error) {
	counts, err := s.store.AlertCounts(ctx, scope, s.now(ctx).UTC().Add(-AlertWindowDays*24*time.Hour))
	if err != nil {
		return 0, fmt.Errorf("count refund_then_return alerts: %w", err)
	}
	return counts[AlertRefundThenReturn], nil
}

// AllRefundedThenReturned counts every scope's refund_then_return alerts
// over AlertWindowDays days, for the operator's metrics.
func (s *Service) AllRefundedThenReturned(ctx context.Context) (int64, error) {
	n, err := s.store.CountAlerts(ctx, AlertRefundThenReturn, s.now(ctx).UTC().Add(-AlertWindowDays*24*time.Hour))
	if err != nil {
		return 0, fmt.Errorf("count refund_then_return alerts: %w", err)
	}
	return n, nil
}

// AllReversedThenReturned counts every scope's reversal_then_return
// alerts over AlertWindowDays days, for the operator's metrics.
func (s *Service) AllReversedThenReturned(ctx context.Context) (int64, error) {
	n, err := s.store.CountAlerts(ctx, AlertReversalThenReturn, s.now(ctx).UTC().Add(-AlertWindowDays*24*time.Hour))
	if err != nil {
		return 0, fmt.Errorf("count reversal_then_return alerts: %w", err)
	}
	return n, nil
}
