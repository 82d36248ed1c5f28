// Package banksim simulates the bank side of ACH: it stands where the
// ODFI, the ACH operator and the receiving banks (RDFIs) stand, reads
// every NACHA file the originator delivers, and answers each entry by
// rules on its account number with the files a bank sends back (returns,
// notifications of change, contested dishonored returns) and with
// camt.053 statements of the originator's account (statement.go), which
// the service imports as it imports a real bank's. It is a simulator of
// an external party beside the service's ACH adapters, as
// internal/adapter/rail/railsim is beside the rail client.
//
// The network does no I/O of its own: an Exchange gives it the
// originator's files, takes its answers and keeps its memory. `fundsource-lab
// achnet` (internal/lab/achnet) runs it over folders or the bank's SFTP
// server; MemoryExchange holds everything in memory, for the service
// itself to run its production ACH path against a simulated bank.
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
// anything else is accepted. A rules file (LoadRules; achnet's --rules)
// replaces them:
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
// A Step follows the one date it is given (achnet's --date, else today
// in US Eastern time, the Federal Reserve's clock) on the banking
// calendar (internal/core/calendar). A file settles on its batches'
// effective date, or the first banking day the network reads it when
// that is later; an answer is due that many banking days after the
// settlement date, and is written on the first banking day on or after
// it. On a weekend or holiday the network reads files and writes nothing.
// Whoever drives it moves the date forward step by step; a step may skip
// days, and what fell due meanwhile goes on the first banking day it
// runs.
//
// # Files
//
// The answers of one step to one ODFI form one file, achnet-
// YYYYMMDD-NNN.ach (the names of the CLI the network began in, kept so
// that inboxes and state files read on), from the operator (the outbox
// file's immediate destination) to the ODFI (its immediate origin), as
// the Federal Reserve delivers returns: one batch per receiving bank and
// original batch (company name and id, SEC code, description), whose ODFI
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
// The network remembers (its state, JSON, which the Exchange keeps:
// achnet's --state file) each outbox file's SHA-256 and settlement date
// by the file's name, and each original trace number it settled or
// answered, with its file's creation date. Reading a file again, or
// running again on the same date, answers nothing twice; a file rewritten
// to the same name keeps its settlement date only while its bytes are the
// same. The state is saved after the answers are delivered: a crash
// between the two sends the answers again at the next step, which the
// import counts as already applied.
package banksim
