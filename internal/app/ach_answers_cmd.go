package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/wiring"
)

const achAnswersUsage = `Usage:
  fundsource ach unmatched [--all] [--json]
  fundsource ach match ANSWER_ID PAYMENT_ID --note TEXT [--json]
  fundsource ach dismiss ANSWER_ID --note TEXT [--json]
`

// answersCmd is a parsed command on the bank's answers that matched no
// single entry.
type answersCmd struct {
	sub, id, paymentID, note string
	all, asJSON              bool
}

// isAnswersCmd reports whether an ach subcommand is about unmatched answers.
func isAnswersCmd(sub string) bool {
	return sub == "unmatched" || sub == "match" || sub == "dismiss"
}

func parseAnswersCmd(args []string) (answersCmd, error) {
	cmd := answersCmd{sub: args[0]}
	fs := flag.NewFlagSet("fundsource ach "+cmd.sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cmd.asJSON, "json", false, "print one JSON object")
	if cmd.sub == "unmatched" {
		fs.BoolVar(&cmd.all, "all", false, "list resolved answers too")
	} else {
		fs.StringVar(&cmd.note, "note", "", "why (kept with the answer and in the audit log)")
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return cmd, err
	}
	want := map[string]int{"unmatched": 0, "match": 2, "dismiss": 1}[cmd.sub]
	if len(pos) != want {
		return cmd, fmt.Errorf("%s takes %d argument(s), got %d", cmd.sub, want, len(pos))
	}
	if want > 0 {
		cmd.id = pos[0]
		if strings.TrimSpace(cmd.note) == "" {
			return cmd, fmt.Errorf("%s needs --note", cmd.sub)
		}
	}
	if want == 2 {
		cmd.paymentID = pos[1]
	}
	return cmd, nil
}

// runACHAnswers lists the bank's answers that matched no single entry, or
// resolves one.
func runACHAnswers(ctx context.Context, args []string, io IO) error {
	cmd, err := parseAnswersCmd(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource ach: %v\n\n%s", err, achAnswersUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withOriginator(ctx, io, func(s *service) error {
		by := wiring.Operator(io.Getenv)
		var out any
		var text string
		switch cmd.sub {
		case "unmatched":
			status := ach.AnswerOpen
			if cmd.all {
				status = ""
			}
			list, err := s.Originator.UnmatchedAnswers(ctx, status, 1000)
			if err != nil {
				return err
			}
			out = map[string]any{"answers": list}
			for _, a := range list {
				text += fmt.Sprintf("%s  %s %s $%s  trace %s  %s  acct …%s  company %s  arrived %s  %s (%d candidates)  %s\n",
					a.ID, a.Kind, a.Code, dollars(&a.Cents), a.OriginalTrace, a.Status, a.AccountLast4, a.CompanyID, a.Arrived,
					a.Reason, a.Candidates, a.PaymentID)
			}
			if len(list) == 0 {
				text = "no unmatched answers\n"
			}
		case "match":
			res, err := s.Originator.MatchAnswer(ctx, cmd.id, cmd.paymentID, cmd.note, by)
			if err != nil {
				return err
			}
			out = map[string]any{"answer_id": cmd.id, "payment_id": cmd.paymentID, "result": res}
			text = fmt.Sprintf("%s matched to %s: %d applied, %d dishonored, %d changes applied\n", cmd.id, cmd.paymentID,
				res.Applied, res.Dishonored+res.Duplicates, res.ChangesApplied)
		case "dismiss":
			if err := s.Originator.DismissAnswer(ctx, cmd.id, cmd.note, by); err != nil {
				return err
			}
			out, text = map[string]any{"answer_id": cmd.id, "status": ach.AnswerDismissed}, cmd.id+" dismissed\n"
		}
		if cmd.asJSON {
			return json.NewEncoder(io.Stdout).Encode(out)
		}
		fmt.Fprint(io.Stdout, text)
		return nil
	})
}

// isFileShow reports whether an ach command is `ach files show NAME`.
func isFileShow(args []string) bool {
	return len(args) > 1 && args[0] == "files" && args[1] == "show"
}

// runACHFileShow prints one file sent to the bank: its summary, or with
// --raw the very bytes the bank was sent (they carry account numbers:
// an operator's command, never an API answer).
func runACHFileShow(ctx context.Context, args []string, io IO) error {
	fs := flag.NewFlagSet("fundsource ach files show", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	raw := fs.Bool("raw", false, "print the bytes the bank was sent")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parseInterspersed(fs, args[2:])
	if err == nil && len(pos) != 1 {
		err = fmt.Errorf("files show takes a file's name, got %d argument(s)", len(pos))
	}
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource ach: %v\n\nUsage:\n  fundsource ach files show NAME [--raw | --json]\n", err)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withOriginator(ctx, io, func(s *service) error {
		if *raw {
			data, err := s.Originator.FileBytes(ctx, pos[0])
			if err != nil {
				return err
			}
			_, err = io.Stdout.Write(data)
			return err
		}
		files, _, err := s.Originator.Files(ctx, fileListLimit)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Name != pos[0] {
				continue
			}
			if *asJSON {
				return json.NewEncoder(io.Stdout).Encode(f)
			}
			fmt.Fprintf(io.Stdout, "%s  %s  %s  %d entries  debits %s  credits %s  created %s\n", f.ID, f.Name, f.Status,
				f.Entries, dollars(f.DebitCents), dollars(f.CreditCents), f.CreatedAt.Format("2006-01-02 15:04"))
			return nil
		}
		return fmt.Errorf("no ACH file named %s among the newest %d", pos[0], fileListLimit)
	})
}
