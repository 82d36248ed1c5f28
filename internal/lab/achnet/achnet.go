// Package achnet is `fundsource-lab achnet`, a local ACH network for tests
// and demos: the command line over the simulated bank of
// internal/adapter/banksim, whose package doc gives its rules, its time and
// its idempotence. It reads every NACHA file the originator writes into
// its outbox and answers each entry with the files a bank sends back,
// which `fundsource ach import-returns` applies. It is linked only into
// cmd/fundsource-lab.
//
// What achnet adds to banksim is where the files are and when it runs:
//
//   - Folders: the network reads the originator's *.ach files from the
//     outbox folder (by name) and writes its answers and camt.053
//     statements into the inbox, each written whole under a temporary
//     name and renamed, readable only by its owner (they hold account
//     numbers). With --sftp it does both on the bank's SFTP server as its
//     client (outbound/ and inbound/, package sftp), the way the service
//     exchanges files with a real ODFI.
//   - State: the network's memory is a JSON file (--state, default
//     inbox/.achnet-state.json; required with --sftp, as it stays on this
//     machine), written whole after the answers.
//   - Time: one run is one banksim step on --date, else today in US
//     Eastern time; a test moves the date forward run by run, and --watch
//     reruns every interval on today's date for a demo (a bank that cannot
//     be reached is tried again at the next interval).
//   - Rules: the built-in sandbox rules, or a rules file (--rules).
package achnet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/lab/rig"
)

const usage = `Usage:
  fundsource-lab achnet --inbox DIR [--outbox DIR] [--rules FILE] [--state FILE]
                        [--date YYYY-MM-DD] [--watch INTERVAL] [--json]
  fundsource-lab achnet --sftp sftp://user@host:port/path --sftp-key FILE
                        --sftp-known-hosts FILE --state FILE [...]

  --outbox  the originator's outbox (default $ACH_OUTBOX_DIR, else
            $DATA_DIR/ach-outbox, DATA_DIR defaulting to .data as the service's)
  --inbox   where the return and NOC files and the camt.053 statements go
            (default $ACH_INBOX_DIR, else $DATA_DIR/ach-inbox; the service
            polls it every minute)
  --sftp    serve over the bank's SFTP server instead (default
            $ACH_SFTP_URL): read outbound/, write inbound/, logging in with
            --sftp-key ($ACH_SFTP_KEY_FILE) and checking the server's key
            against --sftp-known-hosts ($ACH_SFTP_KNOWN_HOSTS)
  --rules   a JSON rules file (default: the built-in sandbox rules)
  --state   the network's memory (default INBOX/.achnet-state.json)
  --date    the network's day (default today, US Eastern)
  --watch   run again every INTERVAL until interrupted (with today's date)
  --json    print each run's summary as one JSON object

Built-in rules, by the account number's last four digits:
  0001 R01, 0002 R02, 0003 R03, 0004 R04, 0007 R07, 0010 R10, 0029 R29,
  0017 R17 (2 banking days; R03, R04 1), 1010 R10 after 10 banking days,
  0005 R05 (CCD debits: a consumer's account), 6801 R01 untimely,
  6810 R10 untimely (the banking day after its 60-day deadline),
  6701 R01 twice, 7301 R01 untimely with its dishonor contested R73,
  7501 R01 twice with the R67 contested R75,
  9101 C01 (→ …9100), 9102 C02 (→ 021000021), 9103 C03, 9105 C05,
  9104 C04 (a new name), 9109 C09 (a new identification number),
  9113 C13 (addenda format error, for entries with addenda);
  anything else is accepted and settles.
`

// Run is `fundsource-lab achnet`.
func Run(ctx context.Context, args []string, stdio rig.IO) error {
	fs := flag.NewFlagSet("fundsource-lab achnet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The service's folders: ACH_OUTBOX_DIR and ACH_INBOX_DIR, else
	// under its DATA_DIR (.data, as make run's).
	data := cmp.Or(stdio.Getenv("DATA_DIR"), ".data")
	outbox := fs.String("outbox", cmp.Or(stdio.Getenv("ACH_OUTBOX_DIR"), filepath.Join(data, "ach-outbox")), "")
	inbox := fs.String("inbox", cmp.Or(stdio.Getenv("ACH_INBOX_DIR"), filepath.Join(data, "ach-inbox")), "")
	sftpURL := fs.String("sftp", stdio.Getenv("ACH_SFTP_URL"), "")
	sftpKey := fs.String("sftp-key", stdio.Getenv("ACH_SFTP_KEY_FILE"), "")
	sftpHosts := fs.String("sftp-known-hosts", stdio.Getenv("ACH_SFTP_KNOWN_HOSTS"), "")
	rulesPath := fs.String("rules", "", "")
	statePath := fs.String("state", "", "")
	dateArg := fs.String("date", "", "")
	watch := fs.Duration("watch", 0, "")
	asJSON := fs.Bool("json", false, "")
	fail := func(err error) error {
		fmt.Fprintf(stdio.Stderr, "fundsource-lab achnet: %v\n\n%s", err, usage)
		return fmt.Errorf("%w: %v", rig.ErrUsage, err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdio.Stdout, usage)
			return nil
		}
		return fail(err)
	}
	var link *sftp.Client
	if *sftpURL != "" {
		cfg, err := sftp.ParseURL(*sftpURL)
		if err != nil {
			return fail(err)
		}
		cfg.KeyFile, cfg.KnownHosts = *sftpKey, *sftpHosts
		if link, err = sftp.New(cfg); err != nil {
			return fail(err)
		}
		defer link.Close()
		if *statePath == "" {
			return fail(errors.New("--state is required with --sftp (the network's memory stays on this machine)"))
		}
		*outbox, *inbox = "-", "-"
	}
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *outbox == "":
		return fail(errors.New("--outbox (or ACH_OUTBOX_DIR) is required"))
	case *inbox == "":
		return fail(errors.New("--inbox is required"))
	case *watch < 0:
		return fail(errors.New("--watch is a positive interval"))
	case *watch > 0 && *dateArg != "":
		return fail(errors.New("--watch runs on today's date: leave out --date"))
	}
	var date calendar.Date
	if *dateArg != "" {
		d, err := time.Parse(time.DateOnly, *dateArg)
		if err != nil {
			return fail(errors.New("--date is YYYY-MM-DD"))
		}
		date = d
	}
	rules := banksim.Sandbox
	if *rulesPath != "" {
		r, err := banksim.LoadRules(*rulesPath)
		if err != nil {
			return fail(err)
		}
		rules = r
	}
	// A mistyped outbox would otherwise answer nothing, silently.
	if st, err := os.Stat(*outbox); link == nil && (err != nil || !st.IsDir()) {
		return fail(fmt.Errorf("--outbox %s is not a folder", *outbox))
	}
	n := &Network{Outbox: *outbox, Inbox: *inbox, SFTP: link, State: *statePath, Rules: rules}
	if n.State == "" {
		n.State = filepath.Join(*inbox, ".achnet-state.json")
	}
	for {
		d := date
		if d.IsZero() {
			d = calendar.DateOf(time.Now())
		}
		sum, err := n.Step(d)
		if err != nil && *watch > 0 {
			// A bank that cannot be reached now is tried again at the
			// next interval; the state was not saved, so nothing is lost.
			fmt.Fprintf(stdio.Stderr, "fundsource-lab achnet: %v\n", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(*watch):
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := report(stdio.Stdout, sum, *asJSON); err != nil {
			return err
		}
		if *watch == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*watch):
		}
	}
}

func report(w io.Writer, s banksim.Summary, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(s)
	}
	day := "a banking day"
	if !s.BankingDay {
		day = "not a banking day: nothing is sent"
	}
	fmt.Fprintf(w, "achnet %s (%s): %d outbox file(s), %d new, %d entries; %d settled, %d returns, %d notifications of change\n",
		s.Date, day, s.Files, s.NewFiles, s.Entries, s.Settled, s.Returns, s.Changes)
	for _, a := range s.Answers {
		fmt.Fprintln(w, "  "+a)
	}
	for _, f := range s.Written {
		fmt.Fprintln(w, "  wrote "+f)
	}
	for _, f := range s.Statements {
		fmt.Fprintln(w, "  wrote statement "+f)
	}
	for _, r := range s.Rejected {
		fmt.Fprintln(w, "  rejected "+r)
	}
	if s.Pending > 0 {
		fmt.Fprintf(w, "  %d answer(s) pending, the next on %s\n", s.Pending, s.NextDue)
	}
	return nil
}
