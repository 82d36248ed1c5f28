package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/fundsource/fundsource/internal/ach"
)

// fileListLimit bounds `fundsource ach files`: the newest files.
const fileListLimit = 200

// achLife runs `ach files`, `ach reconcile FILE` and `ach
// reconciliation --date D`: what became of the files sent and received.
func achLife(ctx context.Context, s *service, name, file, date string) (any, string, error) {
	o := s.Originator
	switch name {
	case "files":
		files, inbound, err := o.Files(ctx, fileListLimit)
		if err != nil {
			return nil, "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d file(s) sent (%s)\n", len(files), o.Transport())
		for _, f := range files {
			window := "-"
			if f.Window != nil {
				window = *f.Window
			}
			fmt.Fprintf(&b, "  %s  %s  window %s  %-9s  %d entries  debits %s  credits %s", f.ID, f.Name, window, f.Status,
				f.Entries, dollars(f.DebitCents), dollars(f.CreditCents))
			if f.Status == ach.StatusFailed && f.LastError != nil {
				fmt.Fprintf(&b, "  (%d failed attempt(s): %s)", f.Attempts, *f.LastError)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d file(s) received\n", len(inbound))
		for _, in := range inbound {
			fmt.Fprintf(&b, "  %s  %-9s  %-8s  %s  sha256 %s", in.ReceivedAt.Format("2006-01-02 15:04"), in.Kind, in.Status, in.Name, in.SHA256[:12])
			if in.Error != "" {
				fmt.Fprintf(&b, "  (%s)", in.Error)
			}
			b.WriteString("\n")
		}
		if files == nil {
			files = []ach.FileSummary{}
		}
		if inbound == nil {
			inbound = []ach.Inbound{}
		}
		return map[string]any{"files": files, "inbound": inbound}, b.String(), nil
	case "reconcile":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, "", err
		}
		in, err := o.Reconcile(ctx, file, data)
		if err != nil {
			return nil, "", err
		}
		if in.Duplicate {
			return in, fmt.Sprintf("statement %s (sha256 %s) applied before: nothing changed\n", file, in.SHA256[:12]), nil
		}
		var r ach.ReconcileResult
		if err := json.Unmarshal(in.Result, &r); err != nil {
			return nil, "", fmt.Errorf("read the result of statement %s: %w", file, err)
		}
		text := fmt.Sprintf("statement %s (%s) applied: %d statement(s) read, %d read before (duplicates), %d of other accounts not read\n"+
			"  %d booked line(s): %d matched, %d unmatched; %d pending and %d information line(s) counted, not matched\n",
			file, r.Version, r.Statements, r.Duplicates, r.OtherAccounts, r.Lines, r.Matched, r.Unmatched, r.Pending, r.Information)
		for _, name := range r.Settled {
			text += fmt.Sprintf("  file %s settled\n", name)
		}
		if len(r.Settled) > 0 {
			text += fmt.Sprintf("  %d payment(s) settled on the booking date\n", r.PaymentsSettled)
		}
		return in, text, nil
	}
	r, err := o.Reconciliation(ctx, date)
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reconciliation of %s: %d matched, %d statement line(s) unmatched, %d expected settlement(s) unmatched\n",
		r.Date, len(r.Matched), len(r.Unmatched.Statement), len(r.Unmatched.Service))
	for _, m := range r.Matched {
		fmt.Fprintf(&b, "  matched    %-6s %s  statement %s/%s  ←  %s (%s)\n", m.Statement.Direction, dollars(&m.Statement.Cents),
			m.Statement.StatementID, m.Statement.Ref, m.Service.Name, m.Service.Date)
	}
	for _, l := range r.Unmatched.Statement {
		fmt.Fprintf(&b, "  unmatched  %-6s %s  statement %s/%s  %s\n", l.Direction, dollars(&l.Cents), l.StatementID, l.Ref, l.Info)
	}
	for _, st := range r.Unmatched.Service {
		fmt.Fprintf(&b, "  unmatched  %-6s %s  expected from %s (%d entries)\n", st.Direction, dollars(&st.Cents), st.Name, st.Entries)
	}
	return r, b.String(), nil
}

func dollars(cents *int64) string {
	if cents == nil {
		return "-"
	}
	return fmt.Sprintf("%d.%02d", *cents/100, *cents%100)
}
