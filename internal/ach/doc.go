// Package ach is the service's boundary with the ACH network: it
// originates production entries (micro-deposit credits and payments) as
// NACHA files, delivers them to the bank, applies what the bank answers
// (returns, notifications of change, contested dishonors) and reconciles
// the bank's statements. Sandbox entries are never originated. Files are
// built and parsed with github.com/moov-io/ach.
//
// It is a domain package, holding the rules the network sets and the
// process that applies them: which SEC code and description an entry goes
// under (Classify, classOf), when an entry must be re-dated (Redate), the
// return and dishonor deadlines (ReturnDeadline, DishonorDeadline), which
// entry an answer answers (MatchEntry). The rules of the money itself stay
// with their domains: origination reads accounts and deposit amounts
// through the funding service, asks the payment service whether each
// payment may leave and whether its receiver's name passes screening, and
// applies returns and changes through the funding and payment services.
// Its Store is implemented by the postgres adapter; its Transport by the
// outbox folder (Folders) and by package sftp.
//
// Where each concern lives:
//
//	originator.go      the Originator, its Config, the File and Entry it keeps, Run
//	store.go           the Store it needs
//	building a file
//	  build_assign.go    what waits is claimed and assigned to a new file
//	  build_schedule.go  the windows files are built at; effective dates, re-dating
//	  build_class.go     SEC codes and descriptions (Classify)
//	  build_reversal.go  reversals and re-presentments take their original's class
//	  build_fold.go      names, descriptions and addenda in NACHA's alphabet
//	  build_file.go      the NACHA file from its entries
//	  build_dishonor.go  the dishonored returns a file carries
//	delivering it
//	  deliver.go            delivery under a lease, the kept bytes, settlements
//	  deliver_transport.go  the Transport; the outbox and inbox folders
//	  deliver_files.go      the files as an operator lists them
//	reading answers
//	  answer_inbound.go   the inbox, polled; each file applied once
//	  answer_read.go      files read as banks write them
//	  answer_returns.go   returns and notifications of change
//	  answer_deadline.go  return and dishonor deadlines
//	  answer_dishonor.go  untimely and duplicate returns dishonored; contested ones
//	  answer_match.go     which entry an answer answers
//	  answer_unmatched.go answers that match no single entry, for an operator
//	reconciling
//	  reconcile_camt.go  camt.053 statements read, whatever their version
//	  reconcile.go       statement lines matched to expected settlements
//
// Building. Files are built at the schedule's windows, once per window
// across processes. Each entry is in exactly one file: a run assigns
// entries to a new file record ('built') and commits (unique indexes
// forbid assigning an entry twice; an advisory lock makes assignments
// take turns, so runs at once do not split what waits between files).
// Only authorized money leaves: the assigning transaction asks the payment
// service, for each payment it claimed, whether it may still leave
// (payment.Service.ReleaseTx); one whose source was blocked or removed, or
// whose mandate was revoked, is canceled there instead of sent.
//
// Everything a file's bytes depend on is decided at assignment and stored
// on the entry, so a file rebuilt later gives the same bytes: its class
// (SEC code, description, payment type), its receiver (the name folded to
// ASCII, the source's Individual Identification Number, the description's
// 05 addenda record), its effective date, the company it goes out under
// and its file's offsetting debits' trace numbers. The class and the
// receiver's name follow the source's account_holder_type, not whether the
// customer has a business name. Entries are built as stored, without
// defaults: the class and receiver of entries assigned before those were
// stored were written into their rows, as they went out, by a migration
// (00062), and every release since they were stored writes them on each
// entry it assigns (the previous release too, while it runs beside this
// one during an upgrade). What older rows may still lack (an effective
// date, which is then the file's; a file date; a return's own trace
// number; the account's fingerprint) is read as empty where it is used.
//
// Each entry goes out under its merchant environment's originator company
// name and id: a file holds a batch per company, SEC code, description and
// effective date, so the receiver's statement names the merchant they
// authorized. Micro-deposits do too (Nacha's micro-entry rule: the name
// the receiver will see on later entries); the platform's ACH_COMPANY_NAME
// and ACH_COMPANY_ID head only the batches of entries without an
// originator. A dishonored return, a reversal and a re-presentment go out
// under their original entry's company and SEC code, whatever the
// originator's are now.
//
// Delivering. No transaction or row lock is held while the bank's server
// is talked to: a delivery lease claims the file, its bytes are prepared
// and kept sealed in a short transaction (entries whose effective date can
// no longer be met re-dated first), the upload runs outside any
// transaction, and the result is recorded under the lease. A file left
// built by a crash, or 'failed' by a transport that was down, is delivered
// again at a later run as the same bytes under the same name, unless its
// entries had to be re-dated; the lease lets one process of many deliver
// it, and one left by a crash expires. A payment is sent when the bank's
// server took its file, not when the file was built.
//
// Reading answers. The bank's answers arrive in the transport's inbox,
// polled each minute: each file applies once by its SHA-256, claimed in a
// transaction; one that cannot be read applies nothing and is set aside.
// Trace numbers are the ODFI's 8 routing digits and a 7-digit sequence per
// ODFI that continues across file dates and wraps after 9,999,999, handed
// out under the sequence row's lock, so concurrent runs never share one
// and two entries within the return horizon never do. Older releases
// restarted the sequence each file date, so an entry is unique by trace
// number and file date, and an answer is held to every fact it carries
// about its entry, not to the trace number alone: what matches no single
// entry is kept for an operator. A return is judged at import against its
// deadline: a timely one is applied, an untimely or duplicate one is
// answered with a dishonored return that goes into the next file by the
// same assignment, if that file leaves within five banking days of the
// return's settlement; past that the return is kept late for dishonor.
//
// Reconciling. The camt.053 statements of the settlement account are
// matched against the settlements the service expects of each delivered
// file; a file whose settlements all matched is settled, and its payments
// take the statement's booking date.
package ach
