// Package ach originates production ACH entries — micro-deposit credits and
// payments — as NACHA files delivered to the bank, applies the bank's
// return files and reconciles its statements. It builds and parses files
// with github.com/moov-io/ach. Sandbox entries are never originated.
// Files are built at the schedule's windows, once per window across
// processes, and each entry's effective date is decided when it is
// assigned (build_schedule.go).
//
// Each entry is in exactly one file. A run first assigns entries to a new
// file record ('built') and commits (unique indexes forbid assigning an
// entry twice; an advisory lock makes assignments take turns, so runs at
// once do not split what waits between files), then delivers the file
// through a Transport (deliver_transport.go: the outbox folder, or the bank's SFTP
// server in package sftp) and marks it 'delivered' (deliver.go). No
// transaction or row lock is held while the bank's server is talked to:
// a delivery lease claims the file, its bytes are prepared and kept
// sealed in a short transaction (entries whose effective date can no
// longer be met re-dated first), the upload runs outside any transaction,
// and the result is recorded under the lease. A file left built by a
// crash, or 'failed' by a transport that was down, is delivered again at
// a later run as the same bytes under the same name, unless its entries
// had to be re-dated; the lease lets one process of many deliver it, and
// one left by a crash expires. A payment is sent when the bank's server
// took its file, not when the file was built.
//
// The bank's answers arrive in the transport's inbox, polled each minute
// (answer_inbound.go): each file applies once by its SHA-256, claimed in a
// transaction; one that cannot be read applies nothing and is set aside.
// Its camt.053 statements are matched against the settlements the service
// expects (reconcile.go), which settles the files.
// That is why an entry's class (SEC code, description, payment type;
// Classify), what it says about its receiver (the name folded to ASCII,
// the source's Individual Identification Number, the description's 05
// addenda record; build_fold.go) and a file's offsetting debits' trace numbers
// are decided at assignment and stored, not recomputed when the file is
// built. The class and the receiver's name follow the source's
// account_holder_type, not whether the customer has a business name.
//
// Only authorized money leaves: the transaction that assigns payments to
// a file asks the payment service, for each one it claimed, whether the
// payment may still leave (payment.Service.ReleaseTx); one whose source
// was blocked or removed, or whose mandate was revoked, since it was
// created is canceled there instead of sent.
//
// Each payment goes out under its originator's company name and company
// id (the merchant environment's, stored on its entry at assignment): a
// file holds a batch per company, SEC code and description, so the
// receiving customer's statement names the merchant they authorized.
// Micro-deposits and their offsets are the platform's own entries and go
// out under ACH_COMPANY_NAME and ACH_COMPANY_ID; a dishonored return, a
// reversal and a re-presentment go out under their original entry's
// company and SEC code (classOf), whatever the originator's are now.
//
// Trace numbers are the ODFI's 8 routing digits and a 7-digit sequence
// per ODFI that continues across file dates and wraps after 9,999,999,
// handed out under the sequence row's lock, so concurrent runs never share
// one and two entries within the return horizon never do. Older releases
// restarted the sequence each file date, so an entry is unique by trace
// number and file date, and an answer from the bank (a return, a
// notification of change) is held to every fact it carries about its
// entry, not to the trace number alone (answer_match.go): what matches no single
// entry is kept for an operator (answer_unmatched.go).
//
// A return is judged at import against its deadline (answer_deadline.go): a
// timely one is applied, an untimely or duplicate one is answered with a
// dishonored return that goes into the next file by the same assignment
// (answer_dishonor.go), if that file leaves within five banking days of the
// return's settlement; past that the return is kept late for dishonor.
//
// Its own rules are the bank boundary's: which entry an answer answers
// (answer_match.go), when an entry must be re-dated (Redate), the return and
// dishonor deadlines (answer_deadline.go), the SEC code and description of an
// entry (Classify). The rules of the money itself stay with their
// domains: origination reads accounts and deposit amounts through the
// funding service, asks the payment service whether each payment may
// leave and whether its receiver's name passes screening, and applies
// returns through the funding and payment services.
package ach
