package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/internal/wiring"
)

const originatorUsage = `Usage:
  fundsource originator show MERCHANT_ID --env sandbox|production [--json]
  fundsource originator set MERCHANT_ID --env sandbox|production [--company-name N] [--company-id ID]
      [--per-entry-debit D] [--daily-debit D] [--daily-credit D] [--same-day on|off] [--instant on|off]
      [--per-entry-instant-credit D] [--daily-instant-credit D] [--default-purpose P]
      [--rule ID=VALUE ...] [--json]
  fundsource originator activate MERCHANT_ID --env sandbox|production [--json]
  fundsource originator suspend MERCHANT_ID --env sandbox|production [--json]

Rules: first_debit_amount, first_credit_amount, risky_account, unverified_credit
and changed_account take dollars ("500.00"); daily_velocity takes debits and dollars per source and
banking day ("5/10000.00"); an empty value ("ID=") restores the rule's default.
Purposes (--default-purpose: of payments and subscriptions that name none):
goods, services, bill, donation, payroll, other.
A production originator is activated only once --company-id has set the id the
bank assigned (company_id_assigned).
`

// originatorCmd is one parsed originator command.
type originatorCmd struct {
	name   string
	scope  tenant.Scope
	change originator.Change
	json   bool
}

func runOriginator(ctx context.Context, args []string, io IO) error {
	cmd, err := parseOriginatorCmd(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource originator: %v\n\n%s", err, originatorUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withService(ctx, io, func(s *service) error {
		o, err := s.originatorCommand(ctx, cmd)
		if err != nil {
			return err
		}
		if cmd.json {
			return json.NewEncoder(io.Stdout).Encode(o)
		}
		fmt.Fprint(io.Stdout, originatorText(o))
		return nil
	})
}

// ruleFlags collect repeated --rule ID=VALUE flags.
type ruleFlags map[string]string

func (r ruleFlags) String() string { return fmt.Sprint(map[string]string(r)) }

func (r ruleFlags) Set(v string) error {
	id, value, ok := strings.Cut(v, "=")
	if !ok || id == "" {
		return errors.New("--rule takes ID=VALUE")
	}
	r[id] = value
	return nil
}

// optional is a string flag that remembers whether it was given.
type optional struct{ v *string }

func (o *optional) String() string {
	if o.v == nil {
		return ""
	}
	return *o.v
}

func (o *optional) Set(v string) error { o.v = &v; return nil }

func parseOriginatorCmd(args []string) (originatorCmd, error) {
	if len(args) == 0 {
		return originatorCmd{}, errors.New("missing subcommand")
	}
	cmd := originatorCmd{name: args[0]}
	fs := flag.NewFlagSet("fundsource originator "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cmd.json, "json", false, "print one JSON object")
	var envName string
	fs.StringVar(&envName, "env", "", "sandbox or production")
	var name, id, perEntry, daily, dailyCredit, sameDay, purpose, instant, perEntryInstant, dailyInstant optional
	rules := ruleFlags{}
	switch cmd.name {
	case "show", "activate", "suspend":
	case "set":
		fs.Var(&name, "company-name", "company name (≤ 16 once folded to ASCII upper case)")
		fs.Var(&id, "company-id", "company identification (10 characters)")
		fs.Var(&perEntry, "per-entry-debit", "the largest single debit, dollars")
		fs.Var(&daily, "daily-debit", "the debits of one banking day, dollars")
		fs.Var(&dailyCredit, "daily-credit", "the credits of one banking day, dollars")
		fs.Var(&sameDay, "same-day", "on or off")
		fs.Var(&instant, "instant", "instant payouts on or off")
		fs.Var(&perEntryInstant, "per-entry-instant-credit", "the largest single instant credit, dollars")
		fs.Var(&dailyInstant, "daily-instant-credit", "the instant credits of one banking day, dollars")
		fs.Var(&purpose, "default-purpose", "the purpose of payments that name none")
		fs.Var(rules, "rule", "a rule threshold, ID=VALUE (repeatable)")
	default:
		return originatorCmd{}, fmt.Errorf("unknown subcommand %q", cmd.name)
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return originatorCmd{}, err
	}
	if len(pos) != 1 {
		return originatorCmd{}, errors.New("give exactly one MERCHANT_ID")
	}
	if !strings.HasPrefix(pos[0], ids.Merchant) {
		return originatorCmd{}, fmt.Errorf("%q is not a merchant id (mer_…)", pos[0])
	}
	env, err := tenant.ParseEnvironment(envName)
	if err != nil {
		return originatorCmd{}, fmt.Errorf("--env: %w", err)
	}
	cmd.scope = tenant.Scope{MerchantID: pos[0], Env: env}
	c := originator.Change{CompanyName: name.v, CompanyID: id.v, PerEntryDebit: perEntry.v, DailyDebit: daily.v,
		DailyCredit: dailyCredit.v, DefaultPurpose: purpose.v, PerEntryInstantCredit: perEntryInstant.v, DailyInstantCredit: dailyInstant.v}
	if sameDay.v != nil {
		on := *sameDay.v == "on"
		if !on && *sameDay.v != "off" {
			return originatorCmd{}, errors.New("--same-day takes on or off")
		}
		c.SameDay = &on
	}
	if instant.v != nil {
		on := *instant.v == "on"
		if !on && *instant.v != "off" {
			return originatorCmd{}, errors.New("--instant takes on or off")
		}
		c.Instant = &on
	}
	if len(rules) > 0 {
		c.Rules = rules
	}
	if cmd.name == "set" && c.CompanyName == nil && c.CompanyID == nil && c.PerEntryDebit == nil && c.DailyDebit == nil &&
		c.DailyCredit == nil && c.SameDay == nil && c.DefaultPurpose == nil && c.Rules == nil && c.Instant == nil &&
		c.PerEntryInstantCredit == nil && c.DailyInstantCredit == nil {
		return originatorCmd{}, errors.New("set needs at least one change")
	}
	cmd.change = c
	return cmd, nil
}

// originatorCommand runs cmd and returns the originator as it now is.
func (s *service) originatorCommand(ctx context.Context, cmd originatorCmd) (any, error) {
	by := wiring.Operator(s.io.Getenv)
	switch cmd.name {
	case "set":
		if _, err := s.Originators.Set(ctx, cmd.scope, cmd.change, by); err != nil {
			return nil, err
		}
	case "activate":
		if _, err := s.Originators.Activate(ctx, cmd.scope, by); err != nil {
			return nil, fmt.Errorf("activate originator %s/%s: %w", cmd.scope.MerchantID, cmd.scope.Env, err)
		}
	case "suspend":
		if _, err := s.Originators.Suspend(ctx, cmd.scope, by); err != nil {
			return nil, err
		}
	}
	v, err := s.Originators.Get(ctx, cmd.scope)
	if err != nil {
		return nil, err
	}
	return shownOriginator{View: v, MerchantID: cmd.scope.MerchantID, Rules: v.Rules, Screening: s.Originators.Screen(v.CompanyName)}, nil
}

// shownOriginator is what the command prints: the merchant's view with
// the merchant's id, the originator's rule thresholds and its company
// name's sanctions screening.
type shownOriginator struct {
	originator.View
	MerchantID string              `json:"merchant_id"`
	Rules      map[string]string   `json:"rules"`
	Screening  sanctions.Screening `json:"screening"`
}

func originatorText(o any) string {
	v := o.(shownOriginator)
	var b strings.Builder
	fmt.Fprintf(&b, "merchant_id: %s\nenvironment: %s\nstatus: %s\ncompany_name: %s\ncompany_id: %s\ncompany_id_assigned: %t\n",
		v.MerchantID, v.Environment, v.Status, v.CompanyName, v.CompanyID, v.CompanyIDAssigned)
	fmt.Fprintf(&b, "per_entry_debit: %s\ndaily_debit: %s\ndaily_credit: %s\nsame_day: %t\ndefault_purpose: %s\n",
		v.Limits.PerEntryDebit, v.Limits.DailyDebit, v.Limits.DailyCredit, v.SameDay, v.DefaultPurpose)
	fmt.Fprintf(&b, "instant: %t\nper_entry_instant_credit: %s\ndaily_instant_credit: %s\n",
		v.Instant, v.Limits.PerEntryInstantCredit, v.Limits.DailyInstantCredit)
	fmt.Fprintf(&b, "usage %s: debits %s, credits %s\n", v.Usage.BankingDay, v.Usage.Debits, v.Usage.Credits)
	for _, id := range slices.Sorted(maps.Keys(v.Rules)) {
		fmt.Fprintf(&b, "rule %s: %s\n", id, v.Rules[id])
	}
	if sc := v.Screening; sc.Status == sanctions.PotentialMatch {
		fmt.Fprintf(&b, "screening: %s of SDN entry %s %q (programs %s, score %.4g); activation is refused\n",
			sc.Status, sc.SDNEntry.Num, sc.Listed, strings.Join(sc.Programs, ", "), *sc.Score)
	} else {
		fmt.Fprintf(&b, "screening: %s\n", sc.Status)
	}
	return b.String()
}
