package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fundsource/fundsource/internal/ach"
)

const achUsage = `Usage:
  fundsource ach originate [--json]
  fundsource ach import-returns FILE [--json]
  fundsource ach files [--json]
  fundsource ach files show NAME [--raw | --json]
  fundsource ach reconcile FILE [--json]
  fundsource ach reconciliation --date YYYY-MM-DD [--json]
  fundsource ach unmatched [--all] [--json]
  fundsource ach match ANSWER_ID PAYMENT_ID --note TEXT [--json]
  fundsource ach dismiss ANSWER_ID --note TEXT [--json]
`

// runACH runs the operator's ACH commands: originate now, or apply a
// return file from the bank.
func runACH(ctx context.Context, args []string, io IO) error {
	if len(args) > 0 && isAnswersCmd(args[0]) {
		return runACHAnswers(ctx, args, io)
	}
	if isFileShow(args) {
		return runACHFileShow(ctx, args, io)
	}
	name, file, date, asJSON, err := parseACH(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource ach: %v\n\n%s", err, achUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withOriginator(ctx, io, func(s *service) error {
		var out any
		var text string
		switch name {
		case "originate":
			files, err := s.Originator.Run(ctx)
			if err != nil {
				return err
			}
			if files == nil {
				files = []string{}
			}
			out, text = map[string]any{"files": files, "outbox": s.Config.ACHOutboxDir}, fmt.Sprintf("%d file(s) delivered (%s)\n", len(files), s.Originator.Transport())
			for _, f := range files {
				text += "  " + f + "\n"
			}
		case "files", "reconcile", "reconciliation":
			var err error
			if out, text, err = achLife(ctx, s, name, file, date); err != nil {
				return err
			}
		case "import-returns":
			// The inbox's own path: the file is claimed once by its
			// SHA-256, its money recorded as expected settlements, and a
			// malformed one recorded rejected, exactly as when the bank
			// leaves it in the inbox.
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			in, err := s.Originator.Receive(ctx, file, data)
			if err != nil {
				return err
			}
			if in.Status == ach.InboundRejected {
				return fmt.Errorf("%s was refused, nothing of it applied: %s", file, in.Error)
			}
			if in.Kind != ach.KindReturns {
				return fmt.Errorf("%s is a %s, not an ACH return file: apply statements with `fundsource ach reconcile`", file, in.Kind)
			}
			res := ach.ReturnResult{Unknown: []string{}, ChangesRefused: []string{}}
			if len(in.Result) > 0 {
				if err := json.Unmarshal(in.Result, &res); err != nil {
					return fmt.Errorf("read the result of %s: %w", file, err)
				}
			}
			if in.Duplicate {
				// Applied before, under this name or another: nothing
				// happened now; the counts are that import's.
				res.Duplicate, res.Applied = res.Returns+res.NotificationsOfChange+res.Contested, 0
				res.Dishonored, res.Duplicates, res.ChangesApplied, res.Unmatched, res.Ambiguous = 0, 0, 0, 0, 0
			}
			out = struct {
				ach.ReturnResult
				SHA256      string `json:"sha256"`
				AppliedFile bool   `json:"file_applied_before"`
			}{res, in.SHA256, in.Duplicate}
			text = fmt.Sprintf("%d returns, %d contested dishonors: %d applied, %d dishonored as untimely (R68), "+
				"%d dishonored as duplicates (R67), %d too late to dishonor (kept, not applied), %d imported before, "+
				"%d unmatched and %d ambiguous (kept: fundsource ach unmatched), unknown traces %v\n",
				res.Returns, res.Contested, res.Applied, res.Dishonored, res.Duplicates, res.LateForDishonor, res.Duplicate,
				res.Unmatched, res.Ambiguous, res.Unknown)
			text += fmt.Sprintf("%d notifications of change: %d applied, %d already applied, %d refused (source blocked) %v\n",
				res.NotificationsOfChange, res.ChangesApplied, res.ChangesDuplicate, len(res.ChangesRefused), res.ChangesRefused)
			text += fmt.Sprintf("%d unsupported (not applied) %v, %d forward entries ignored\n", len(res.Unsupported), res.Unsupported, res.IgnoredForward)
		}
		if asJSON {
			return json.NewEncoder(io.Stdout).Encode(out)
		}
		fmt.Fprint(io.Stdout, text)
		return nil
	})
}

// errNoOrigination refuses the ach commands of a process without ACH
// origination configured.
var errNoOrigination = errors.New("ACH origination is not configured: set ACH_ODFI_ROUTING, ACH_COMPANY_NAME and ACH_COMPANY_ID (see README)")

// withOriginator runs fn on the service, which must originate ACH.
func withOriginator(ctx context.Context, io IO, fn func(s *service) error) error {
	return withService(ctx, io, func(s *service) error {
		if s.Originator == nil {
			return errNoOrigination
		}
		return fn(s)
	})
}

func parseACH(args []string) (name, file, date string, asJSON bool, err error) {
	if len(args) == 0 {
		return "", "", "", false, errors.New("missing subcommand")
	}
	name = args[0]
	fs := flag.NewFlagSet("fundsource ach "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	if name == "reconciliation" {
		fs.StringVar(&date, "date", "", "the booking and settlement date")
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return "", "", "", false, err
	}
	switch {
	case (name == "originate" || name == "files") && len(pos) == 0:
	case name == "reconciliation" && len(pos) == 0:
		if date == "" {
			return "", "", "", false, errors.New("--date YYYY-MM-DD is required")
		}
	case (name == "import-returns" || name == "reconcile") && len(pos) == 1:
		file = pos[0]
	case name == "originate" || name == "import-returns" || name == "files" || name == "reconcile" || name == "reconciliation":
		return "", "", "", false, errors.New("wrong arguments")
	default:
		return "", "", "", false, fmt.Errorf("unknown subcommand %q", name)
	}
	return name, file, date, asJSON, nil
}
