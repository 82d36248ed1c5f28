package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/ids"
)

const auditUsage = `Usage:
  fundsource audit verify [--merchant MERCHANT_ID] [--json]
`

// ErrAuditBroken is the result of an audit verify that found a chain
// whose events were changed, removed or reordered; main exits with
// status 1 after the command printed the first bad event.
var ErrAuditBroken = errors.New("audit log does not verify")

func runAudit(ctx context.Context, args []string, io IO) error {
	merchantID, asJSON, err := parseAuditCmd(args)
	if err != nil {
		fmt.Fprintf(io.Stderr, "fundsource audit: %v\n\n%s", err, auditUsage)
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return withService(ctx, io, func(s *service) error { return s.verifyAudit(ctx, merchantID, asJSON) })
}

func parseAuditCmd(args []string) (string, bool, error) {
	if len(args) == 0 || args[0] != "verify" {
		return "", false, errors.New("missing subcommand verify")
	}
	fs := flag.NewFlagSet("fundsource audit verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var merchantID string
	var asJSON bool
	fs.StringVar(&merchantID, "merchant", "", "verify only this merchant's chain")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return "", false, err
	}
	if len(pos) != 0 {
		return "", false, fmt.Errorf("unexpected argument %q", pos[0])
	}
	if merchantID != "" && !strings.HasPrefix(merchantID, ids.Merchant) {
		return "", false, fmt.Errorf("%q is not a merchant id (mer_…)", merchantID)
	}
	return merchantID, asJSON, nil
}

// chainResult is one merchant's line of audit verify --json.
type chainResult struct {
	MerchantID string     `json:"merchant_id"`
	OK         bool       `json:"ok"`
	Break      *breakJSON `json:"break,omitempty"`
}

type breakJSON struct {
	Seq     int64  `json:"seq"`
	EventID string `json:"event_id,omitempty"`
	Reason  string `json:"reason"`
}

// verifyAudit checks the chain of one merchant, or of every merchant with
// an audit log or a checkpoint, under AUDIT_KEY and against the checkpoint
// file, and prints each result; the first break of a chain is printed
// with its event id and ErrAuditBroken returned.
func (s *service) verifyAudit(ctx context.Context, merchantID string, asJSON bool) error {
	cps, err := audit.ReadCheckpoints(s.Config.AuditCheckpointFile)
	if err != nil {
		return err
	}
	merchants := []string{merchantID}
	if merchantID == "" {
		if merchants, err = s.Audit.Merchants(ctx); err != nil {
			return err
		}
		// A merchant whose whole log was deleted is named only by the file.
		for id := range cps {
			if !slices.Contains(merchants, id) {
				merchants = append(merchants, id)
			}
		}
		slices.Sort(merchants)
	}
	results := make([]chainResult, 0, len(merchants))
	broken := 0
	for _, id := range merchants {
		b, err := s.Audit.Verify(ctx, id, cps[id])
		if err != nil {
			return err
		}
		r := chainResult{MerchantID: id, OK: b == nil}
		if b != nil {
			broken++
			r.Break = &breakJSON{Seq: b.Seq, EventID: b.EventID, Reason: b.Reason}
			if !asJSON {
				fmt.Fprintf(s.io.Stdout, "%s: BROKEN at %v\n", id, b)
			}
		} else if !asJSON {
			fmt.Fprintf(s.io.Stdout, "%s: ok\n", id)
		}
		results = append(results, r)
	}
	if asJSON {
		out := struct {
			Chains   []chainResult `json:"chains"`
			Verified int           `json:"verified"`
			Broken   int           `json:"broken"`
		}{results, len(merchants) - broken, broken}
		if err := json.NewEncoder(s.io.Stdout).Encode(out); err != nil {
			return err
		}
	}
	if broken > 0 {
		return fmt.Errorf("%w: %d of %d merchants", ErrAuditBroken, broken, len(merchants))
	}
	if !asJSON {
		fmt.Fprintf(s.io.Stdout, "%d %s verified\n", len(merchants), plural(len(merchants), "chain", "chains"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
