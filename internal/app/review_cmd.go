package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/fundsource/fundsource/internal/wiring"
)

const reviewUsage = `Usage:
  fundsource review list [--json]
  fundsource review release PAY_ID [--note TEXT] [--json]
  fundsource review reject PAY_ID [--note TEXT] [--json]
  fundsource review clear-screening CUSTOMER_ID --note TEXT [--json]
  fundsource review attest --year YYYY --by NAME [--note TEXT] [--json]
`

// reviewCmd is a parsed review command.
type reviewCmd struct {
	sub, id, note, by string
	year              int
	asJSON            bool
}

func runReview(ctx context.Context, args []string, io IO) error {
	cmd, err := parseReviewCmd(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource review: %v\n\n%s", err, reviewUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withService(ctx, io, func(s *service) error { return s.review(ctx, cmd) })
}

func parseReviewCmd(args []string) (reviewCmd, error) {
	if len(args) == 0 {
		return reviewCmd{}, fmt.Errorf("missing subcommand")
	}
	cmd := reviewCmd{sub: args[0]}
	fs := flag.NewFlagSet("fundsource review "+cmd.sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cmd.asJSON, "json", false, "print one JSON object")
	switch cmd.sub {
	case "list":
	case "release", "reject", "clear-screening":
		fs.StringVar(&cmd.note, "note", "", "the reviewer's note")
	case "attest":
		fs.StringVar(&cmd.note, "note", "", "the reviewer's note")
		fs.StringVar(&cmd.by, "by", "", "who reviewed")
		fs.IntVar(&cmd.year, "year", 0, "the year reviewed")
	default:
		return reviewCmd{}, fmt.Errorf("unknown subcommand %q", cmd.sub)
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return reviewCmd{}, err
	}
	want := 1
	if cmd.sub == "list" || cmd.sub == "attest" {
		want = 0
	}
	if len(pos) != want {
		return reviewCmd{}, fmt.Errorf("%s takes %d argument(s), got %d", cmd.sub, want, len(pos))
	}
	if want == 1 {
		cmd.id = pos[0]
	}
	switch {
	case cmd.sub == "clear-screening" && cmd.note == "":
		return reviewCmd{}, fmt.Errorf("clear-screening needs --note")
	case cmd.sub == "attest" && (cmd.year == 0 || cmd.by == ""):
		return reviewCmd{}, fmt.Errorf("attest needs --year and --by")
	}
	return cmd, nil
}

// review runs a review command and prints its result.
func (s *service) review(ctx context.Context, cmd reviewCmd) error {
	by := wiring.Operator(s.io.Getenv)
	var out any
	var line string
	switch cmd.sub {
	case "list":
		held, err := s.Payments.Held(ctx, nil, 1000)
		if err != nil {
			return err
		}
		out = map[string]any{"held_payments": held}
		for _, p := range held {
			line += fmt.Sprintf("%s  %s %s %s  %s  %s\n", p.ID, p.Scope.MerchantID, p.Scope.Env, p.Direction, p.Amount, deref(p.HoldReason))
		}
		if len(held) == 0 {
			line = "no held payments\n"
		}
	case "release", "reject":
		f := s.Payments.Release
		if cmd.sub == "reject" {
			f = s.Payments.Reject
		}
		p, err := f(ctx, cmd.id, cmd.note, by)
		if err != nil {
			return err
		}
		out, line = p, fmt.Sprintf("%s is %s\n", p.ID, p.Status)
	case "clear-screening":
		sc, freed, err := s.Payments.ClearScreening(ctx, cmd.id, cmd.note, by)
		if err != nil {
			return err
		}
		ids := make([]string, len(freed))
		for i, p := range freed {
			ids[i] = p.ID
		}
		out = map[string]any{"user_id": cmd.id, "screening": sc, "released_payments": ids}
		line = fmt.Sprintf("%s cleared; %d held payment(s) released\n", cmd.id, len(freed))
	case "attest":
		r, err := s.Payments.Attest(ctx, cmd.year, cmd.by, cmd.note)
		if err != nil {
			return err
		}
		out, line = r, "annual review of "+strconv.Itoa(r.Year)+" recorded as "+r.ID+"\n"
	}
	if cmd.asJSON {
		return json.NewEncoder(s.io.Stdout).Encode(out)
	}
	_, err := fmt.Fprint(s.io.Stdout, line)
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
