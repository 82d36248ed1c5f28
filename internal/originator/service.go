package originator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// RuleIDs are the fraud-monitoring rules whose thresholds an originator
// may set: every rule the payment service judges (payment.Rules).
var RuleIDs = ruleIDs()

func ruleIDs() []string {
	out := make([]string, len(payment.Rules))
	for i, r := range payment.Rules {
		out[i] = r.ID
	}
	return out
}

// Service reads and changes originators.
type Service struct {
	store    Store
	payments Payments
	now      func() time.Time
	// sanctions screens company names (screening.go); nil: none.
	sanctions *sanctions.List
}

// NewService returns a Service; payments gives GET /v2/originator its
// return rates and releases held payments when a company id is set.
func NewService(store Store, payments Payments, now func() time.Time) *Service {
	return &Service{store: store, payments: payments, now: now}
}

// Get returns scope's originator as its merchant sees it.
func (s *Service) Get(ctx context.Context, scope tenant.Scope) (View, error) {
	o, err := s.store.Originator(ctx, scope)
	if err != nil {
		return View{}, notFound(fmt.Errorf("read the originator of %s: %w", environmentOf(scope), err))
	}
	v := View{Originator: o.withDollars(), Usage: s.usage(o)}
	if s.payments != nil {
		if v.ReturnRates, err = s.payments.ReturnRates(ctx, scope); err != nil {
			return View{}, fmt.Errorf("read the return rates of %s: %w", environmentOf(scope), err)
		}
	}
	return v, nil
}

// usage is o's usage of today's banking day: nothing when its counted day
// is another.
func (s *Service) usage(o Originator) Usage {
	day := payment.BankingDay(s.now()).Format(time.DateOnly)
	u := Usage{BankingDay: day, Debits: money.Format(0), Credits: money.Format(0)}
	if o.UsageDay == day {
		u.Debits, u.Credits = money.Format(o.UsedDebitCents), money.Format(o.UsedCreditCents)
	}
	return u
}

// Change is an operator's change of an originator; nil fields stay.
type Change struct {
	CompanyName   *string
	CompanyID     *string
	PerEntryDebit *string // dollars
	DailyDebit    *string
	DailyCredit   *string
	SameDay       *bool
	// Instant turns instant payouts on or off; the instant limits are
	// dollars.
	Instant               *bool
	PerEntryInstantCredit *string
	DailyInstantCredit    *string
	// DefaultPurpose is a payment.Purpose.
	DefaultPurpose *string
	// Rules set rule thresholds by id; an empty value removes the
	// originator's own threshold (the rule's default applies).
	Rules map[string]string
}

// Set applies c to scope's originator and records originator.changed with
// the fields it changed.
func (s *Service) Set(ctx context.Context, scope tenant.Scope, c Change, by audit.Actor) (Originator, error) {
	var out Originator
	err := s.store.WithTx(ctx, func(tx Store) error {
		o, err := tx.OriginatorForUpdate(ctx, scope)
		if err != nil {
			return notFound(fmt.Errorf("lock the originator of %s: %w", environmentOf(scope), err))
		}
		details := map[string]string{}
		assigned := o.CompanyIDAssigned
		if err := apply(&o, c, details); err != nil {
			return err
		}
		if _, renamed := details["company_name"]; renamed {
			if o.Status == Active {
				if err := s.mayBeActive(o); err != nil {
					return err
				}
			} else if sc := s.Screen(o.CompanyName); sc.Status == sanctions.PotentialMatch {
				details["screening"] = screeningNote(sc)
			}
		}
		out = o
		if len(details) == 0 {
			return nil
		}
		if err := tx.UpdateOriginator(ctx, o); err != nil {
			return fmt.Errorf("update the originator of %s: %w", environmentOf(scope), err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.OriginatorChanged, by, details)); err != nil {
			return fmt.Errorf("record the change of the originator of %s: %w", environmentOf(scope), err)
		}
		if assigned || !o.CompanyIDAssigned {
			return nil
		}
		if err := s.payments.ReleaseCompanyIDHoldsTx(ctx, tx.Payments(), scope); err != nil {
			return fmt.Errorf("release the payments held for the company id: %w", err)
		}
		return nil
	})
	return out.withDollars(), err
}

// Activate lets scope's originator send entries (originator.activated). A
// production originator needs its company id assigned first: 409
// conflict, saying so, without one. Sandbox entries reach no bank.
func (s *Service) Activate(ctx context.Context, scope tenant.Scope, by audit.Actor) (Originator, error) {
	return s.setStatus(ctx, scope, Active, audit.OriginatorActivated, by)
}

// activationRefusal is why o may not be activated; nil when it may.
func activationRefusal(o Originator) error {
	if o.Scope.Env.Live() && !o.CompanyIDAssigned {
		return errs.Newf(errs.Conflict, "The originator's company id %s is a placeholder: set the id the bank assigned "+
			"(fundsource originator set %s --env %s --company-id ID) before activating it.", o.CompanyID, o.Scope.MerchantID, o.Scope.Env)
	}
	return nil
}

// Suspend stops scope's originator: no new payment or subscription, and
// its pending payments are canceled as they are about to leave
// (originator.suspended).
func (s *Service) Suspend(ctx context.Context, scope tenant.Scope, by audit.Actor) (Originator, error) {
	return s.setStatus(ctx, scope, Suspended, audit.OriginatorSuspended, by)
}

func (s *Service) setStatus(ctx context.Context, scope tenant.Scope, status, action string, by audit.Actor) (Originator, error) {
	var out Originator
	err := s.store.WithTx(ctx, func(tx Store) error {
		o, err := tx.OriginatorForUpdate(ctx, scope)
		if err != nil {
			return notFound(fmt.Errorf("lock the originator of %s: %w", environmentOf(scope), err))
		}
		from := o.Status
		if status == Active && from != Active {
			if err := activationRefusal(o); err != nil {
				return err
			}
		}
		o.Status = status
		out = o
		if status == Active {
			if err := s.mayBeActive(o); err != nil {
				return err
			}
		}
		if from == status {
			return nil
		}
		if err := tx.UpdateOriginator(ctx, o); err != nil {
			return fmt.Errorf("set the originator of %s %s: %w", environmentOf(scope), status, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, action, by, map[string]string{"from": from, "to": status})); err != nil {
			return fmt.Errorf("record the originator of %s set %s: %w", environmentOf(scope), status, err)
		}
		return nil
	})
	return out.withDollars(), err
}

// NameAfter is the company name a merchant's new originator takes from
// the merchant's name: folded to NACHA's alphabet (the database's default
// spells only the Latin-1 letters), upper case, cut to 16 characters; ""
// when nothing of the name is left (the store's default stays).
func NameAfter(merchantName string) string { return ach.Upper(merchantName, 16) }

// State reports whether scope's originator may send entries and whether
// its company id is assigned, read in tx (payment.Originators).
func (s *Service) State(ctx context.Context, tx payment.Store, scope tenant.Scope) (payment.OriginatorState, error) {
	t, err := tx.OriginatorTerms(ctx, scope, payment.BankingDay(s.now()).Format(time.DateOnly), 0)
	if errs.Is(err, errs.NotFound) {
		return payment.OriginatorState{}, nil
	}
	if err != nil {
		return payment.OriginatorState{}, fmt.Errorf("read the originator's terms of %s: %w", environmentOf(scope), err)
	}
	return payment.OriginatorState{Active: t.Status == Active, CompanyIDAssigned: t.CompanyIDAssigned}, nil
}

// SameDay reports whether scope's originator may send Same Day ACH
// entries (payment.Originators).
func (s *Service) SameDay(ctx context.Context, scope tenant.Scope) (bool, error) {
	o, err := s.store.Originator(ctx, scope)
	if err != nil {
		return false, notFound(fmt.Errorf("read the originator of %s: %w", environmentOf(scope), err))
	}
	return o.SameDay, nil
}

// Thresholds are the fraud-monitoring thresholds the operator set for
// scope's originator, by rule id (payment.Thresholds); rules it does not
// name take their defaults, as does a scope without an originator.
func (s *Service) Thresholds(ctx context.Context, scope tenant.Scope) (map[string]string, error) {
	o, err := s.store.Originator(ctx, scope)
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the originator of %s: %w", environmentOf(scope), err)
	}
	return o.Rules, nil
}

// apply changes o by c, noting each changed field in details.
func apply(o *Originator, c Change, details map[string]string) error {
	if c.CompanyName != nil {
		n, err := CompanyName(*c.CompanyName)
		if err != nil {
			return err
		}
		note(details, "company_name", o.CompanyName, n)
		o.CompanyName = n
	}
	if c.CompanyID != nil {
		id := strings.ToUpper(strings.TrimSpace(*c.CompanyID))
		if len(id) != 10 || strings.Trim(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return errs.Invalid("company_id", "company_id must be 10 letters or digits, as the bank assigned it (often 1 and the EIN)")
		}
		note(details, "company_id", o.CompanyID, id)
		note(details, "company_id_assigned", strconv.FormatBool(o.CompanyIDAssigned), "true")
		o.CompanyID, o.CompanyIDAssigned = id, true
	}
	for _, l := range []struct {
		name string
		in   *string
		to   *int64
	}{{payment.LimitPerEntryDebit, c.PerEntryDebit, &o.PerEntryDebitCents}, {payment.LimitDailyDebit, c.DailyDebit, &o.DailyDebitCents},
		{payment.LimitDailyCredit, c.DailyCredit, &o.DailyCreditCents},
		{payment.LimitPerEntryInstantCredit, c.PerEntryInstantCredit, &o.PerEntryInstantCreditCents},
		{payment.LimitDailyInstantCredit, c.DailyInstantCredit, &o.DailyInstantCreditCents}} {
		if l.in == nil {
			continue
		}
		cents, ok := money.ParseCents(strings.TrimSpace(*l.in))
		if !ok {
			return errs.Invalid(l.name, l.name+` must be an amount of dollars like "2500.00"`)
		}
		note(details, l.name, money.Format(*l.to), money.Format(cents))
		*l.to = cents
	}
	if c.DefaultPurpose != nil {
		p, err := payment.ParsePurpose("default_purpose", c.DefaultPurpose)
		if err != nil {
			return err
		}
		note(details, "default_purpose", string(o.DefaultPurpose), string(p))
		o.DefaultPurpose = p
	}
	if c.Instant != nil {
		note(details, "instant", strconv.FormatBool(o.Instant), strconv.FormatBool(*c.Instant))
		o.Instant = *c.Instant
	}
	if c.SameDay != nil {
		note(details, "same_day", strconv.FormatBool(o.SameDay), strconv.FormatBool(*c.SameDay))
		o.SameDay = *c.SameDay
	}
	if len(c.Rules) > 0 {
		rules := maps.Clone(o.Rules)
		if rules == nil {
			rules = map[string]string{}
		}
		for _, id := range slices.Sorted(maps.Keys(c.Rules)) {
			v, err := Threshold(id, c.Rules[id])
			if err != nil {
				return err
			}
			if v == "" {
				delete(rules, id)
			} else {
				rules[id] = v
			}
			note(details, "rule."+id, o.Rules[id], v)
		}
		o.Rules = rules
	}
	return nil
}

// note records a field's change from old to new in details, when it is one.
func note(details map[string]string, field, old, new string) {
	if old != new {
		details[field] = old + " -> " + new
	}
}

// CompanyName is name as a batch header carries it: folded to ASCII,
// upper case, in NACHA's name alphabet; refused when that leaves nothing
// or more than 16 characters.
func CompanyName(name string) (string, error) {
	n := ach.Upper(name, len(name)*4+1)
	if n == "" || len(n) > 16 {
		return "", errs.Invalid("company_name", "company_name must be 1 to 16 characters once folded to ASCII upper case")
	}
	return n, nil
}

// Threshold is the normalized threshold of rule id: dollars ("500.00"),
// or for daily_velocity a count of debits and an amount, "5/10000.00"; ""
// for "" (the rule's default).
func Threshold(id, value string) (string, error) {
	if !slices.Contains(RuleIDs, id) {
		return "", errs.Invalid("rule", fmt.Sprintf("unknown rule %q; the rules are %s", id, strings.Join(RuleIDs, ", ")))
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return "", nil
	}
	if id == "daily_velocity" {
		n, amount, ok := strings.Cut(value, "/")
		count, err := strconv.Atoi(n)
		cents, amountOK := money.ParseCents(amount)
		if !ok || err != nil || count < 1 || count > 10000 || !amountOK {
			return "", errs.Invalid("rule", `daily_velocity takes a number of debits and an amount per source and banking day, like "5/10000.00"`)
		}
		return strconv.Itoa(count) + "/" + money.Format(cents), nil
	}
	cents, ok := money.ParseCents(value)
	if !ok {
		return "", errs.Invalid("rule", id+` takes an amount of dollars, like "500.00"`)
	}
	return money.Format(cents), nil
}

// environmentOf names a merchant environment in an error.
func environmentOf(scope tenant.Scope) string {
	return "merchant " + scope.MerchantID + "'s " + string(scope.Env) + " environment"
}

// notFound is the error of an originator that does not exist, for a read
// that found none; other errors pass.
func notFound(err error) error {
	if errs.Is(err, errs.NotFound) {
		return errs.New(errs.NotFound, "This merchant environment has no originator.")
	}
	return err
}
