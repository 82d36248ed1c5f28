package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/wiring"
)

const merchantUsage = `Usage:
  fundsource merchant create --name N --email E [--password P] [--json]
  fundsource merchant activate-production MERCHANT_ID [--json]
  fundsource merchant roll-key MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant grant-on-demand MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant enable-third-party-verification MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant allow-redirect-origin MERCHANT_ID --env sandbox|production ORIGIN [--json]
  fundsource merchant remove-redirect-origin MERCHANT_ID --env sandbox|production ORIGIN [--json]
  fundsource merchant redirect-origins MERCHANT_ID --env sandbox|production [--json]
  fundsource merchant set-policy MERCHANT_ID --env sandbox|production [--account-check flag|block_fail] [--ownership flag|require_match] [--json]
`

// merchantCmd is one parsed operator command.
type merchantCmd struct {
	name                   string
	merchantID             string
	env                    tenant.Environment
	mName, email, password string
	origin                 string            // redirect-origin commands
	policies               merchant.Policies // set-policy; empty values stay as they are
	json                   bool
}

func runMerchant(ctx context.Context, args []string, io IO) error {
	cmd, err := parseMerchantCmd(args, io.Stderr)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource merchant: %v\n\n%s", err, merchantUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withService(ctx, io, func(s *service) error {
		out, text, err := s.merchantCommand(ctx, cmd)
		if err != nil {
			return err
		}
		if cmd.json {
			return json.NewEncoder(io.Stdout).Encode(out)
		}
		fmt.Fprint(io.Stdout, text)
		return nil
	})
}

func parseMerchantCmd(args []string, stderr io.Writer) (merchantCmd, error) {
	if len(args) == 0 {
		return merchantCmd{}, errors.New("missing subcommand")
	}
	cmd := merchantCmd{name: args[0]}
	fs := flag.NewFlagSet("fundsource merchant "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cmd.json, "json", false, "print one JSON object")
	var envName string
	switch cmd.name {
	case "create":
		fs.StringVar(&cmd.mName, "name", "", "merchant name")
		fs.StringVar(&cmd.email, "email", "", "dashboard sign-in email")
		fs.StringVar(&cmd.password, "password", "", "dashboard password (generated when omitted)")
	case "activate-production":
	case "roll-key", "grant-on-demand", "enable-third-party-verification", "redirect-origins",
		"allow-redirect-origin", "remove-redirect-origin":
		fs.StringVar(&envName, "env", "", "sandbox or production")
	case "set-policy":
		fs.StringVar(&envName, "env", "", "sandbox or production")
		fs.StringVar(&cmd.policies.AccountCheck, "account-check", "", "flag or block_fail")
		fs.StringVar(&cmd.policies.Ownership, "ownership", "", "flag or require_match")
	default:
		return merchantCmd{}, fmt.Errorf("unknown subcommand %q", cmd.name)
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return merchantCmd{}, err
	}
	if cmd.name == "create" {
		if len(pos) != 0 {
			return merchantCmd{}, fmt.Errorf("unexpected argument %q", pos[0])
		}
		if cmd.mName == "" || cmd.email == "" {
			return merchantCmd{}, errors.New("--name and --email are required")
		}
		return cmd, nil
	}
	switch {
	case strings.HasSuffix(cmd.name, "-redirect-origin"):
		if len(pos) != 2 {
			return merchantCmd{}, errors.New("give MERCHANT_ID and ORIGIN")
		}
		cmd.origin = pos[1]
	case len(pos) != 1:
		return merchantCmd{}, errors.New("give exactly one MERCHANT_ID")
	}
	cmd.merchantID = pos[0]
	if !strings.HasPrefix(cmd.merchantID, ids.Merchant) {
		return merchantCmd{}, fmt.Errorf("%q is not a merchant id (mer_…)", cmd.merchantID)
	}
	if cmd.name != "activate-production" {
		if cmd.env, err = tenant.ParseEnvironment(envName); err != nil {
			return merchantCmd{}, fmt.Errorf("--env: %w", err)
		}
	}
	return cmd, nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments, returning the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// merchantCommand runs cmd and returns its JSON result and its text form.
func (s *service) merchantCommand(ctx context.Context, cmd merchantCmd) (any, string, error) {
	sc := tenant.Scope{MerchantID: cmd.merchantID, Env: cmd.env}
	by := wiring.Operator(s.io.Getenv)
	switch cmd.name {
	case "create":
		generated := cmd.password == ""
		if generated {
			cmd.password = merchant.NewPassword()
		}
		created, err := s.Merchants.Create(ctx, cmd.mName, cmd.email, cmd.password)
		if err != nil {
			return nil, "", err
		}
		out := map[string]any{"merchant_id": created.Merchant.ID, "sandbox": created.Sandbox,
			"dashboard": map[string]string{"email": created.Merchant.Email}}
		text := fmt.Sprintf("merchant_id: %s\nsandbox secret key: %s\nsandbox public key: %s\ndashboard email: %s\n",
			created.Merchant.ID, created.Sandbox.SecretKey, created.Sandbox.PublicKey, created.Merchant.Email)
		if generated {
			out["dashboard"].(map[string]string)["password"] = cmd.password
			text += "dashboard password: " + cmd.password + "\n"
		}
		return out, text + "The secret key is shown only now; store it safely.\n", nil
	case "activate-production":
		keys, err := s.Merchants.ActivateProduction(ctx, cmd.merchantID, by)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"merchant_id": cmd.merchantID, "production": keys},
			fmt.Sprintf("production secret key: %s\nproduction public key: %s\nThe secret key is shown only now; store it safely.\n",
				keys.SecretKey, keys.PublicKey), nil
	case "roll-key":
		secret, err := s.Merchants.RollKey(ctx, sc, by)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"merchant_id": cmd.merchantID, "environment": cmd.env, "secret_key": secret},
			fmt.Sprintf("new %s secret key: %s\nThe previous key no longer works.\n", cmd.env, secret), nil
	case "grant-on-demand":
		if err := s.Merchants.GrantOnDemand(ctx, sc, by); err != nil {
			return nil, "", err
		}
		return map[string]any{"merchant_id": cmd.merchantID, "environment": cmd.env, "permission": merchant.PermOnDemand},
			fmt.Sprintf("granted %s to the %s key of %s\n", merchant.PermOnDemand, cmd.env, cmd.merchantID), nil
	case "enable-third-party-verification":
		if err := s.Merchants.EnableThirdPartyVerification(ctx, sc, by); err != nil {
			return nil, "", err
		}
		return map[string]any{"merchant_id": cmd.merchantID, "environment": cmd.env, "third_party_verification": true},
			fmt.Sprintf("third-party verification enabled for %s in %s\n", cmd.merchantID, cmd.env), nil
	case "allow-redirect-origin", "remove-redirect-origin":
		change, verb := s.Merchants.AllowRedirectOrigin, "allowed"
		if cmd.name == "remove-redirect-origin" {
			change, verb = s.Merchants.RemoveRedirectOrigin, "no longer allowed"
		}
		origin, err := change(ctx, sc, cmd.origin, by)
		if err != nil {
			return nil, "", err
		}
		return s.redirectOrigins(ctx, sc, fmt.Sprintf("%s %s as a redirect origin in %s\n", origin, verb, cmd.env))
	case "redirect-origins":
		return s.redirectOrigins(ctx, sc, "")
	case "set-policy":
		p, err := s.Merchants.SetPolicies(ctx, sc, cmd.policies, by)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"merchant_id": cmd.merchantID, "environment": cmd.env,
				"account_check_policy": p.AccountCheck, "ownership_policy": p.Ownership},
			fmt.Sprintf("%s in %s: account_check_policy %s, ownership_policy %s\n", cmd.merchantID, cmd.env, p.AccountCheck, p.Ownership), nil
	}
	return nil, "", fmt.Errorf("unknown subcommand %q", cmd.name)
}

// redirectOrigins answers with the scope's allowed redirect origins after a
// change (headline) or on their own.
func (s *service) redirectOrigins(ctx context.Context, sc tenant.Scope, headline string) (any, string, error) {
	origins, err := s.Merchants.RedirectOrigins(ctx, sc)
	if err != nil {
		return nil, "", err
	}
	text := headline + fmt.Sprintf("allowed redirect origins of %s in %s:", sc.MerchantID, sc.Env)
	if len(origins) == 0 {
		text += " none"
	}
	text += "\n"
	for _, o := range origins {
		text += "  " + o + "\n"
	}
	return map[string]any{"merchant_id": sc.MerchantID, "environment": sc.Env, "redirect_origins": origins}, text, nil
}
