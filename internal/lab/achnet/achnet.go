// Package achnet is a local ACH network for tests and demos
// (`fundsource-lab achnet`): it stands where the ODFI, the ACH operator
// and the receiving banks (RDFIs) stand, reads every NACHA file the
// originator writes into its outbox, and answers each entry by rules on
// its account number with the files a bank sends back, which `fundsource
// ach import-returns` applies. It is linked only into cmd/fundsource-lab.
//
// # Rules
//
// A rule matches an account number exactly or by its last digits and
// answers with a return code, a notification of change (NOC) or accept,
// a number of banking days after the settlement date. The first rule
// that matches wins; an entry no rule matches is accepted. The built-in
// rules (Sandbox), by the account number's last four digits:
//
//	0001  R01 insufficient funds        2 banking days (debits)
//	0002  R02 account closed            2
//	0003  R03 no account                1
//	0004  R04 invalid account number    1
//	0007  R07 authorization revoked     2 (consumer debits)
//	0010  R10 not authorized            2 (consumer debits)
//	0029  R29 corporate not authorized  2 (CCD/CTX debits)
//	0017  R17 questionable circumstances  2
//	1010  R10, late                    10 (consumer debits)
//	0005  R05 corporate debit to a consumer's account  2 (CCD/CTX debits)
//	6801  R01 sent untimely             4 (the ODFI dishonors it, R68)
//	6810  R10 sent untimely: the first banking day past its extended
//	      deadline (consumer debits; the ODFI dishonors it, R68)
//	6701  R01, sent again a banking day later  1 (the second is dishonored R67)
//	7301  R01 sent untimely; its dishonor contested R73  4
//	7501  R01 sent twice; the R67 dishonor contested R75  1
//	9101  C01 account number → the same number ending 9100
//	9102  C02 routing number → 021000021
//	9103  C03 both of them
//	9105  C05 account type → checking ↔ savings
//	9104  C04 receiver name → CORRECTED HOLDER NAME
//	9109  C09 Individual Identification Number → CORRECTEDID0009
//	9113  C13 addenda format error (only for an entry with addenda)
//
// anything else is accepted. A rules file (--rules) replaces them:
//
//	{"rules": [
//	  {"account_suffix": "0007", "answer": "R07", "after_banking_days": 2},
//	  {"account": "123456789", "answer": "C01", "after_banking_days": 1,
//	   "corrected": {"account_number": "123456780"}},
//	  {"account_suffix": "1010", "answer": "R10", "after_banking_days": 25},
//	  {"account_suffix": "0005", "answer": "R05", "after_banking_days": 2, "consumer_account": true},
//	  {"account_suffix": "7301", "answer": "R01", "after_banking_days": 4, "untimely": true, "contest": "R73"},
//	  {"account_suffix": "6701", "answer": "R01", "after_banking_days": 1, "repeat_after_banking_days": 1},
//	  {"account_suffix": "4444", "answer": "C04", "corrected": {"name": "JANE Q PUBLIC"}}
//	]}
//
// A rule answers only entries a bank could answer so, and the network
// accepts the others: funds and authorization returns (R01, R05, R07,
// R08, R09, R10, R11, R29, R51) come back only for debits; R05, R07,
// R10, R11 and R51 only for consumer entries (PPD, WEB, TEL), R29 only
// for corporate ones (CCD, CTX), R05 only for corporate debits to an
// account the rule marks consumer_account. Rules keep NACHA's windows, unless
// marked untimely (a bank's error, for the originator to dishonor; an
// untimely return never comes before the first banking day past its
// deadline, so it is untimely whatever the calendar): a return or
// NOC within 2 banking days of the settlement date, except the
// extended unauthorized-debit returns of consumer accounts, within 60
// calendar days; a late one that would fall past them comes on the last
// banking day inside them. A NOC goes once per account and outbox file
// (a verification's two credits bring one correction), and never for an
// entry that already carries the corrected data (a C13 only for an entry
// with addenda), so the originator's next entry to the corrected account
// is accepted.
//
// A rule's repeat_after_banking_days sends its return a second time (a
// duplicate). The originator's dishonored returns (R67, R68) are read from
// the outbox like entries: the bank accepts them, or, when the account's
// rule has contest (R71–R77), answers the banking day after the dishonor
// settles with a contested dishonored return (package ach, answer_dishonor.go).
//
// Entries to the ODFI's own routing number (the offsetting debit of a
// micro-deposit batch) are on-us: the ODFI posts them and nobody answers.
//
// # Time
//
// Answers follow one date (--date, else today in US Eastern time, the
// Federal Reserve's clock) on the banking calendar (internal/core/calendar).
// A file settles on its batches' effective date, or the first banking day
// the network reads it when that is later; an answer is due that many banking days after the
// settlement date, and is written on the first banking day on or after
// it. On a weekend or holiday the network reads files and writes nothing.
// A test moves the date forward run by run; `--watch` reruns every
// interval on today's date for a demo.
//
// # Files
//
// The network reads the originator's files from the outbox folder and
// writes its answers into the inbox, or, with --sftp, does both on the
// bank's SFTP server as its client (outbound/ and inbound/, package sftp),
// the way the service exchanges files with a real ODFI. It also writes
// camt.053 statements (statement.go).
//
// The answers of one run to one ODFI form one file, inbox/achnet-
// YYYYMMDD-NNN.ach, from the operator (the outbox file's immediate
// destination) to the ODFI (its immediate origin), as the Federal
// Reserve delivers returns: one batch per receiving bank and original
// batch (company name and id, SEC code, description), whose ODFI
// identification and trace numbers are the receiving bank's. A return is
// an entry in the original's SEC code with the return transaction code
// (21, 26, 31, 36) and the original amount, account, name and
// identification, and an Addenda99 with the return code, the original
// trace number and the original receiving bank. A NOC is a zero-dollar
// entry in a COR batch with an Addenda98: change code, original trace
// number and bank, and the corrected data. Every file is built and
// checked with github.com/moov-io/ach.
//
// # Idempotence
//
// The network remembers (--state, default inbox/.achnet-state.json) each
// outbox file's digest and settlement date and each original trace
// number it settled or answered. Reading a file again, or running again
// on the same date, answers nothing twice; a file rewritten to the same
// name keeps its settlement date only while its bytes are the same. The
// state is saved after the inbox files are written: a crash between the
// two sends the answers again at the next run, which the import counts
// as already applied.
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
		d, err := time.Parse(dateLayout, *dateArg)
		if err != nil {
			return fail(errors.New("--date is YYYY-MM-DD"))
		}
		date = d
	}
	rules := Sandbox
	if *rulesPath != "" {
		r, err := LoadRules(*rulesPath)
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

func report(w io.Writer, s Summary, asJSON bool) error {
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
