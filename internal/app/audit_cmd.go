package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/user"
	"strings"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/ids"
)

const auditUsage = `Usage:
  fundsource audit verify [--merchant MERCHANT_ID]
`

// ErrAuditBroken is the result of an audit verify that found a chain
// whose events were changed, removed or reordered; main exits with
// status 1 after the command printed the first bad event.
var ErrAuditBroken = errors.New("audit log does not verify")

// operator is the actor of an operator command: the operating-system
// user who runs it.
func operator(getenv func(string) string) audit.Actor {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return audit.Operator(u.Username)
	}
	if name := getenv("USER"); name != "" {
		return audit.Operator(name)
	}
	return audit.Operator("operator")
}

func runAudit(ctx context.Context, args []string, io IO) error {
	merchantID, err := parseAuditCmd(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource audit: %v\n\n%s", err, auditUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withService(ctx, io, func(s *service) error { return s.verifyAudit(ctx, merchantID) })
}

func parseAuditCmd(args []string) (string, error) {
	if len(args) == 0 || args[0] != "verify" {
		return "", errors.New("missing subcommand verify")
	}
	fs := flag.NewFlagSet("fundsource audit verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var merchantID string
	fs.StringVar(&merchantID, "merchant", "", "verify only this merchant's chain")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return "", err
	}
	if len(pos) != 0 {
		return "", fmt.Errorf("unexpected argument %q", pos[0])
	}
	if merchantID != "" && !strings.HasPrefix(merchantID, ids.Merchant) {
		return "", fmt.Errorf("%q is not a merchant id (mer_…)", merchantID)
	}
	return merchantID, nil
}

// verifyAudit checks the chain of one merchant, or of every merchant with
// an audit log, and prints each result; the first break of a chain is
// printed with its event id and ErrAuditBroken returned.
func (s *service) verifyAudit(ctx context.Context, merchantID string) error {
	merchants := []string{merchantID}
	if merchantID == "" {
		var err error
		if merchants, err = s.Audit.Merchants(ctx); err != nil {
			return err
		}
	}
	broken := 0
	for _, id := range merchants {
		b, err := s.Audit.Verify(ctx, id)
		if err != nil {
			return err
		}
		if b != nil {
			broken++
			fmt.Fprintf(s.io.Stdout, "%s: BROKEN at %v\n", id, b)
			continue
		}
		fmt.Fprintf(s.io.Stdout, "%s: ok\n", id)
	}
	if broken > 0 {
		return fmt.Errorf("%w: %d of %d merchants", ErrAuditBroken, broken, len(merchants))
	}
	fmt.Fprintf(s.io.Stdout, "%d %s verified\n", len(merchants), plural(len(merchants), "chain", "chains"))
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
