// Package ach originates production ACH entries — micro-deposit credits and
// payments — as NACHA files delivered to the bank, applies the bank's
// return files and reconciles its statements. It builds and parses files
// with github.com/moov-io/ach. Sandbox entries are never originated.
// Files are built at the schedule's windows, once per window across
// processes, and each entry's effective date is decided when it is
// assigned (windows.go).
//
// Each entry is in exactly one file. A run first assigns entries to a new
// file record ('built') and commits (unique indexes forbid assigning an
// entry twice; an advisory lock makes assignments take turns, so runs at
// once do not split what waits between files), then delivers the file
// through a Transport (transport.go: the outbox folder, or the bank's SFTP
// server in package sftp) and marks it 'delivered' (delivery.go). No
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
// (inbound.go): each file applies once by its SHA-256, claimed in a
// transaction; one that cannot be read applies nothing and is set aside.
// Its camt.053 statements are matched against the settlements the service
// expects (reconcile.go), which settles the files.
// That is why an entry's class (SEC code, description, payment type;
// Classify), what it says about its receiver (the name folded to ASCII,
// the source's Individual Identification Number, the description's 05
// addenda record; fold.go) and a file's offsetting debits' trace numbers
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
// entry, not to the trace number alone (match.go): what matches no single
// entry is kept for an operator (unmatched.go).
//
// A return is judged at import against its deadline (deadline.go): a
// timely one is applied, an untimely or duplicate one is answered with a
// dishonored return that goes into the next file by the same assignment
// (dishonor.go), if that file leaves within five banking days of the
// return's settlement; past that the return is kept late for dishonor.
//
// Its own rules are the bank boundary's: which entry an answer answers
// (match.go), when an entry must be re-dated (Redate), the return and
// dishonor deadlines (deadline.go), the SEC code and description of an
// entry (Classify). The rules of the money itself stay with their
// domains: origination reads accounts and deposit amounts through the
// funding service, asks the payment service whether each payment may
// leave and whether its receiver's name passes screening, and applies
// returns through the funding and payment services.
package ach

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/aba"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// Entry kinds.
const (
	KindMicroDeposit = "micro_deposit"
	KindPayment      = "payment"
)

// File is one NACHA file of the outbox.
type File struct {
	ID        string
	Serial    int64 // gives the file id modifier
	Name      string
	Status    string // StatusBuilt, StatusDelivered, StatusFailed, StatusSettled
	CreatedAt time.Time
	// OffsetTraces are the trace numbers of the offsetting debits, one
	// per micro-deposit batch in the order the batches are written; none
	// when micro-deposits go without an offset.
	OffsetTraces []string
}

// Entry is one ACH entry of a file.
type Entry struct {
	Trace        string // 15 digits: 8 of the ODFI routing number, 7 of sequence
	FileID       string
	Scope        tenant.Scope
	Kind         string
	SourceID     string
	CustomerID   string
	DepositSeq   int // micro-deposits: which verification
	DepositIndex int // micro-deposits: 1 or 2
	PaymentID    string
	Debit        bool
	Cents        int64  // payments; a micro-deposit's is read sealed when its file is built
	ReturnCode   string // "" until a return is applied (a timely one, or a contested dishonor's)
	ReturnTrace  string // the applied return's own trace number; "" for one applied before it was kept
	Class        Class  // zero for an entry assigned before classes were stored
	// FileDate is its file's creation date (US Eastern), YYYY-MM-DD: its
	// trace number is unique on that date. "" for an entry written
	// without one (by a release before trace numbers restarted per date).
	FileDate string
	// Recurs: an older entry has the same trace number (read by ACHEntry).
	Recurs bool
	// ReceiverName (folded to NACHA's name alphabet, ≤ 22) and
	// IndividualID (the source's Individual Identification Number, ≤ 15)
	// are decided at assignment like Class; "" on an entry assigned
	// before they were stored, which is built as it was.
	ReceiverName string
	IndividualID string
	// Addenda is the text of the entry's one 05 addenda record (the
	// payment's description, folded, ≤ 80); "" for none.
	Addenda string
	// EffectiveDate (YYYY-MM-DD) is decided at assignment (windows.go):
	// a Same Day ACH entry's may differ from its file's other entries'.
	// "" on an entry assigned before it was stored: its file's next
	// banking day.
	EffectiveDate string
	// CompanyName (≤ 16) and CompanyID (≤ 10) are the originator a
	// payment goes out under, decided at assignment like Class: its batch
	// header carries them. "" for a micro-deposit, and for an entry
	// assigned before originators, which go out under the platform's own
	// (Config.CompanyName, Config.CompanyID).
	CompanyName string
	CompanyID   string
	// AccountFP is the fingerprint of the account number the entry was
	// sent to (the source's when it was assigned); nil on entries
	// assigned before it was kept.
	AccountFP []byte
}

// Deposit is a verification whose two credits are still to be sent.
type Deposit struct {
	Scope      tenant.Scope
	SourceID   string
	CustomerID string
	Seq        int
	// SourceGone: the source was removed or blocked since the
	// verification was initiated; its deposits are not sent.
	SourceGone bool
}

// Store is the persistence of origination.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	// Funding and Payments are those domains' stores on the same
	// transaction: a file's assignment and a return change payments and
	// verifications in the transaction that records the entries.
	Funding() funding.Store
	Payments() payment.Store
	// UndeliveredACHFiles lists the files built or failed, oldest first.
	UndeliveredACHFiles(ctx context.Context) ([]File, error)
	// ClaimACHFile takes the delivery lease of a file still to deliver
	// for owner until until; false when another owner's lease has not
	// expired at now, or the file was delivered.
	ClaimACHFile(ctx context.Context, id, owner string, now, until time.Time) (bool, error)
	// MarkACHFileDelivered records, under owner's lease, that the
	// transport has the file, and gives the lease back; false when the
	// lease was lost and the file recorded by another process.
	MarkACHFileDelivered(ctx context.Context, id, owner, transport string, at time.Time, t Totals) (bool, error)
	// MarkACHFileFailed records a failed delivery under owner's lease:
	// its error and one more attempt; the lease is given back.
	MarkACHFileFailed(ctx context.Context, id, owner, reason string, t Totals) error
	// ACHFileBytes reads the sealed bytes a file was built to; none
	// before it was.
	ACHFileBytes(ctx context.Context, id string) (keyID string, sealed []byte, err error)
	// KeepACHFileBytes stores them, and when its entries were re-dated
	// (nil: not now).
	KeepACHFileBytes(ctx context.Context, id, keyID string, sealed []byte, redated *time.Time) error
	// RedateACHEntry moves an entry of an undelivered file to another
	// effective date (YYYY-MM-DD).
	RedateACHEntry(ctx context.Context, fileID, trace, effective string) error
	// MarkFilePaymentsSent records when the bank took the file of its
	// payments (their sent_at).
	MarkFilePaymentsSent(ctx context.Context, fileID string, at time.Time) error
	// ACHFileByName reads a file record by name; errs.NotFound when
	// unknown.
	ACHFileByName(ctx context.Context, name string) (File, error)
	// InsertSettlement stores a line the statement is expected to show.
	InsertSettlement(ctx context.Context, s Settlement) error
	// Inbound and reconciliation (inbound.go, reconcile.go).
	InboundStore
	// InsertACHFile stores a new file record and returns its serial.
	InsertACHFile(ctx context.Context, f File) (int64, error)
	// DepositsToOriginate locks up to limit open production verifications
	// without entries, skipping rows other processes hold.
	DepositsToOriginate(ctx context.Context, limit int) ([]Deposit, error)
	// PaymentsToOriginate likewise locks pending production payments,
	// with their payment.Standing.
	PaymentsToOriginate(ctx context.Context, limit int) ([]payment.Payment, error)
	// NextTraceSequence is the next 7-digit trace sequence number of the
	// ODFI odfi (8 digits), from 1, continuing across file dates and
	// wrapping after 9,999,999. The sequence stays locked until the
	// transaction ends.
	NextTraceSequence(ctx context.Context, odfi string) (int64, error)
	InsertACHEntry(ctx context.Context, e Entry) error
	// ACHEntries returns a file's entries by trace number.
	ACHEntries(ctx context.Context, fileID string) ([]Entry, error)
	// ACHEntryIn locks the entry with a trace number in a file;
	// errs.NotFound when unknown.
	ACHEntryIn(ctx context.Context, fileID, trace string) (Entry, error)
	// MarkACHEntryReturned records the return applied to an entry of a
	// file: its code and its own trace number.
	MarkACHEntryReturned(ctx context.Context, fileID, trace, code, returnTrace string, at time.Time) error
	// Answers the bank sent that matched no single entry (unmatched.go).
	AnswerStore
	// ACHFile reads a file record; errs.NotFound when unknown.
	ACHFile(ctx context.Context, id string) (File, error)
	// InsertDishonor stores a dishonor; false, storing nothing, when the
	// same return of the same entry has one already.
	InsertDishonor(ctx context.Context, d Dishonor) (bool, error)
	// EntryDishonored reports whether a return of an entry was dishonored.
	EntryDishonored(ctx context.Context, fileID, trace string) (bool, error)
	// DishonorsToSend locks up to limit dishonors not yet in a file nor
	// late for dishonor, skipping rows other processes hold.
	DishonorsToSend(ctx context.Context, limit int) ([]Dishonor, error)
	// MarkDishonorLate keeps a dishonor unsent for good: it was found past
	// its limit at at.
	MarkDishonorLate(ctx context.Context, id string, at time.Time) error
	// AssignDishonor puts a dishonor into a file under its trace number.
	AssignDishonor(ctx context.Context, id, fileID, trace string) error
	// ACHDishonors returns a file's dishonors, with their original entries,
	// by trace number.
	ACHDishonors(ctx context.Context, fileID string) ([]Dishonor, error)
	// SentDishonor locks the newest dishonor sent of the entry with
	// original trace number under its own trace number; errs.NotFound when
	// none.
	SentDishonor(ctx context.Context, originalTrace, trace string) (Dishonor, error)
	MarkDishonorContested(ctx context.Context, id, code string, at time.Time) error
	// PaymentEntry returns a payment's entry; errs.NotFound when the
	// payment is in no file.
	PaymentEntry(ctx context.Context, scope tenant.Scope, paymentID string) (Entry, error)
	// LockACHAssignment waits until no other transaction assigns entries
	// to a file, and keeps them waiting until this one ends.
	LockACHAssignment(ctx context.Context) error
	// ClaimACHWindow records that a run builds window w; false, recording
	// nothing, when a run has (one that committed, or, waited for, commits).
	ClaimACHWindow(ctx context.Context, w calendar.Window, at time.Time) (bool, error)
	// SetACHWindowFile names the file window w built.
	SetACHWindowFile(ctx context.Context, w calendar.Window, fileID string) error
	// OriginatorCompany is the company name and id a scope's payments go
	// out under; errs.NotFound when it has no originator.
	OriginatorCompany(ctx context.Context, scope tenant.Scope) (name, id string, err error)
}

// Funding is what origination needs from the funding service.
type Funding interface {
	BankAccount(ctx context.Context, scope tenant.Scope, id string) (funding.BankAccount, error)
	DepositAmounts(ctx context.Context, scope tenant.Scope, id string, seq int) ([2]int, error)
	CancelDepositsTx(ctx context.Context, tx funding.Store, scope tenant.Scope, id string, seq int) error
	ApplyChangeTx(ctx context.Context, tx funding.Store, scope tenant.Scope, id string, c funding.Correction) (bool, error)
	// Receiver is what a source's entries say about its holder.
	Receiver(ctx context.Context, scope tenant.Scope, id string) (funding.Receiver, error)
	// AccountFingerprint is an account number's fingerprint as a source
	// keeps it; SealRecord and OpenRecord keep a bank record that carries
	// one sealed.
	AccountFingerprint(number string) []byte
	SealRecord(record []byte, aad string) (keyID string, sealed []byte)
	OpenRecord(keyID string, sealed []byte, aad string) ([]byte, error)
}

// Payments is what origination needs from the payment service.
type Payments interface {
	// ReleaseTx says whether a claimed payment may still leave, and
	// cancels it in tx when not.
	ReleaseTx(ctx context.Context, tx payment.Store, p payment.Payment) (bool, error)
	OriginatedTx(ctx context.Context, tx payment.Store, scope tenant.Scope, id string, sent payment.Sent) error
	// ScreenEntryTx screens the receiver's name an entry carries as it
	// leaves: false when it is a potential sanctions match (a payment p
	// is held then; micro-deposits, p nil, wait).
	ScreenEntryTx(ctx context.Context, tx payment.Store, scope tenant.Scope, customerID string, p *payment.Payment, name string, business bool) (bool, error)
}

// Consequences applies a bank's answer to the entry it answers with what
// that sets off beyond the entry's domain (package consequence): a return
// of a payment or of micro-deposits, a statement's settlement, a source
// blocked by a notification of change that cannot be applied.
type Consequences interface {
	ReturnTx(ctx context.Context, tx consequence.Tx, scope tenant.Scope, id, code string) error
	ReturnMicroDepositTx(ctx context.Context, tx consequence.Tx, scope tenant.Scope, sourceID string, seq int, code string) error
	// SettledTx records that the bank's statement shows a payment settled
	// on date (reconcile.go).
	SettledTx(ctx context.Context, tx consequence.Tx, scope tenant.Scope, id string, date calendar.Date) error
	BlockTx(ctx context.Context, tx consequence.Tx, scope tenant.Scope, sourceID, code, reason string) (bool, error)
}

// Customers names the account holders of entries assigned before their
// receiver names were stored.
type Customers interface {
	Get(ctx context.Context, scope tenant.Scope, id string) (customer.Customer, error)
}

// Config is the originating bank's details and the outbox folder.
type Config struct {
	Dir                string // the outbox folder
	ODFIRouting        string // the originating bank's routing number (9 digits)
	DestinationRouting string // immediate destination (9 digits)
	DestinationName    string // ≤ 23 characters
	OriginName         string // ≤ 23 characters
	CompanyName        string // ≤ 16 characters
	CompanyID          string // ≤ 10 characters
	// MicroOffset puts, into each micro-deposit batch, a debit of its
	// total from OffsetAccount, the originator's account at the ODFI, so
	// the batch balances.
	MicroOffset   bool
	OffsetAccount string // ≤ 17 characters
	// Schedule is when windows build files and until when a same-day
	// entry is effective the day it is built (windows.go); the zero value
	// is calendar.DefaultSchedule.
	Schedule calendar.Schedule
	// SameDayMicro sends micro-deposits as Same Day ACH entries.
	SameDayMicro bool
	// SettlementAccount is the account the bank settles the files on, as
	// its camt.053 statements name it (an account number or IBAN): only
	// its statements are read (camt.go). Empty: every statement is refused.
	SettlementAccount string
}

// Validate checks c for origination.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("ACH_OUTBOX_DIR is required for origination")
	case !aba.ValidChecksum(c.ODFIRouting):
		return errors.New("ACH_ODFI_ROUTING must be the originating bank's 9-digit routing number (with a valid check digit)")
	case !aba.ValidChecksum(c.DestinationRouting):
		return errors.New("ACH_DESTINATION_ROUTING must be a 9-digit routing number (with a valid check digit)")
	case c.CompanyName == "" || len(c.CompanyName) > 16:
		return errors.New("ACH_COMPANY_NAME must be 1 to 16 characters")
	case c.CompanyID == "" || len(c.CompanyID) > 10:
		return errors.New("ACH_COMPANY_ID must be 1 to 10 characters")
	case c.MicroOffset && (c.OffsetAccount == "" || len(c.OffsetAccount) > 17):
		return errors.New("ACH_OFFSET_ACCOUNT (1 to 17 characters: the originator's account at the ODFI) is required while ACH_MICRO_OFFSET is on")
	}
	return nil
}

// Originator writes the outbox files and applies returns.
type Originator struct {
	cfg      Config
	store    Store
	funding  Funding
	payments Payments
	// consequences applies the bank's answers across domains.
	consequences Consequences
	customers    Customers
	now          func() time.Time
	transport    Transport
	log          *slog.Logger
	failures     atomic.Int64 // deliveries failed since the process started
	rejected     atomic.Int64 // inbound files rejected since the process started
	seen         sync.Map     // inbound listings applied before: name, size and time → true
	unmatched    unmatchedGauges
	lease        string      // this process's delivery lease owner
	answers      answerGauge // unmatched answers no operator resolved
}

// NewOriginator returns an Originator.
func NewOriginator(cfg Config, store Store, f Funding, p Payments, cons Consequences, c Customers, now func() time.Time) *Originator {
	return &Originator{cfg: cfg, store: store, funding: f, payments: p, consequences: cons, customers: c, now: now,
		transport: Folders{Outbox: cfg.Dir}, lease: ids.New("lease_")}
}

// batchLimit bounds the entries of one file per kind.
const batchLimit = 1000

// SettleDays is how many business days after its effective date a
// payment without a return counts as settled.
const SettleDays = 2

// Run delivers the files left built or failed (by a crash, or a
// transport that was down), then assigns everything waiting to one new
// file and delivers it (delivery.go). It returns the names of the files
// delivered; a failed delivery is an error, and its file waits for the
// next run, built before the failure or not.
func (o *Originator) Run(ctx context.Context) ([]string, error) {
	pending, err := o.store.UndeliveredACHFiles(ctx)
	if err != nil {
		return nil, err
	}
	delivered, failed := o.deliverAll(ctx, pending)
	f, ok, err := o.assign(ctx, nil)
	if err != nil {
		return delivered, errors.Join(failed, err)
	}
	if ok {
		o.logger().Info("ACH file built", slog.String("file_id", f.ID), slog.String("name", f.Name), slog.String("status", StatusBuilt))
		now, err := o.deliverAll(ctx, []File{f})
		delivered, failed = append(delivered, now...), errors.Join(failed, err)
	}
	return delivered, failed
}

// assign creates a file record with every waiting entry, in one
// transaction; for window w (nil: a run forced by the operator) only once
// it claimed the window in that transaction (errWindowTaken when another
// run has). Assignments take turns: rows are locked as the scan reaches
// them, so two at once would each skip the other's and split what waits
// between two files; the second, once the first commits, finds nothing
// left.
func (o *Originator) assign(ctx context.Context, w *calendar.Window) (File, bool, error) {
	var f File
	found := false
	err := o.store.WithTx(ctx, func(tx Store) error {
		if err := tx.LockACHAssignment(ctx); err != nil {
			return err
		}
		if w != nil {
			claimed, err := tx.ClaimACHWindow(ctx, *w, o.now().UTC())
			if err != nil {
				return err
			}
			if !claimed {
				return errWindowTaken
			}
		}
		wt, err := o.claim(ctx, tx)
		if err != nil {
			return err
		}
		deposits, payments, dishonors, receivers := wt.deposits, wt.payments, wt.dishonors, wt.receivers
		if len(deposits)+len(payments)+len(dishonors) == 0 {
			return nil
		}
		found = true
		now := o.now().UTC()
		f = File{ID: ids.New("achf_"), Status: StatusBuilt, CreatedAt: now}
		date := calendar.DateOf(now)
		f.Name = fmt.Sprintf("fundsource-%s-%s.ach", date.Format("20060102"), f.ID[len("achf_"):])
		traces := o.traces(date.Format(time.DateOnly))
		microEffective := o.cfg.Schedule.Effective(now, o.cfg.SameDayMicro).Format(time.DateOnly)
		// Micro-deposits go out under the merchant's originator, as its
		// later entries will (Nacha's micro-entry rule): the name the
		// receiver sees is the one they will see again.
		companies := map[tenant.Scope][2]string{}
		depositClasses := make([]Class, len(deposits))
		depositKeys := make([]batchKey, len(deposits))
		depositReceivers := make([]funding.Receiver, len(deposits))
		depositCompanies := make([][2]string, len(deposits))
		for i, d := range deposits {
			r, err := o.receiver(ctx, d.Scope, d.SourceID, receivers)
			if err != nil {
				return err
			}
			if depositCompanies[i], err = o.company(ctx, tx, d.Scope, companies); err != nil {
				return err
			}
			depositClasses[i], depositReceivers[i] = Classify(Payer{Business: r.Company, MicroDeposit: true}), r
			depositKeys[i] = keyOf(depositClasses[i], Entry{EffectiveDate: microEffective,
				CompanyName: depositCompanies[i][0], CompanyID: depositCompanies[i][1]})
		}
		if o.cfg.MicroOffset {
			// One offsetting debit per micro-deposit batch, in batch order.
			for range batchOrder(depositKeys) {
				trace, err := traces.next(ctx, tx)
				if err != nil {
					return err
				}
				f.OffsetTraces = append(f.OffsetTraces, trace)
			}
		}
		if f.Serial, err = tx.InsertACHFile(ctx, f); err != nil {
			return err
		}
		if w != nil {
			if err := tx.SetACHWindowFile(ctx, *w, f.ID); err != nil {
				return err
			}
		}
		for di, d := range deposits {
			// The amounts stay sealed with the verification; build reads them.
			for i := range 2 {
				e := Entry{FileID: f.ID, FileDate: traces.date, Scope: d.Scope, Kind: KindMicroDeposit, SourceID: d.SourceID,
					CustomerID: d.CustomerID, DepositSeq: d.Seq, DepositIndex: i + 1, Class: depositClasses[di],
					ReceiverName: receiverName(depositReceivers[di]), IndividualID: depositReceivers[di].IndividualID,
					EffectiveDate: microEffective, AccountFP: depositReceivers[di].AccountFP,
					CompanyName: depositCompanies[di][0], CompanyID: depositCompanies[di][1]}
				if err := o.insertEntry(ctx, tx, &e); err != nil {
					return err
				}
			}
		}
		for _, p := range payments {
			r, err := o.receiver(ctx, p.Scope, p.SourceID, receivers)
			if err != nil {
				return err
			}
			company, err := o.company(ctx, tx, p.Scope, companies)
			if err != nil {
				return err
			}
			debit := p.Direction == payment.Debit
			class, company, err := o.classOf(ctx, tx, p, Payer{Business: r.Company, Debit: debit, Subscription: p.SubscriptionID != nil,
				Retry: p.Attempt != nil && *p.Attempt > 1, EntryDescription: deref(p.EntryDescription), MandateSEC: p.Standing.MandateSEC,
				Purpose: p.Purpose}, company)
			if err != nil {
				return err
			}
			e := Entry{FileID: f.ID, FileDate: traces.date, Scope: p.Scope, Kind: KindPayment, SourceID: p.SourceID, CustomerID: p.CustomerID,
				PaymentID: p.ID, Debit: debit, Cents: p.Cents, Class: class,
				ReceiverName: receiverName(r), IndividualID: r.IndividualID, CompanyName: company[0], CompanyID: company[1],
				AccountFP: r.AccountFP}
			effective := o.cfg.Schedule.Effective(now, p.SameDay)
			e.EffectiveDate = effective.Format(time.DateOnly)
			if p.Description != nil && r.Addenda {
				e.Addenda = addendaText(*p.Description)
			}
			if err := o.sameReceiver(ctx, tx, p, &e); err != nil {
				return err
			}
			if err := o.insertEntry(ctx, tx, &e); err != nil {
				return err
			}
			// sent_at waits for the bank's server to take the file (deliver).
			if err := o.payments.OriginatedTx(ctx, tx.Payments(), p.Scope, p.ID, sent(time.Time{}, effective, debit && class.SEC != SecCCD)); err != nil {
				return err
			}
		}
		for _, d := range dishonors {
			trace, err := traces.next(ctx, tx)
			if err != nil {
				return err
			}
			if err := tx.AssignDishonor(ctx, d.ID, f.ID, trace); err != nil {
				return err
			}
		}
		return nil
	})
	return f, found, err
}

// waiting is what an assignment claimed that may leave now: deposits
// and payments with their receivers (by merchant and source), and the
// dishonors still in time.
type waiting struct {
	deposits  []Deposit
	payments  []payment.Payment
	dishonors []Dishonor
	receivers map[string]funding.Receiver
}

// claim locks in tx what waits to leave and keeps what may: a
// verification whose source was removed or blocked is canceled, a payment
// that may no longer leave is canceled or held (payment.Service.ReleaseTx),
// and an entry whose receiver's name is a potential sanctions match stays
// behind (ScreenEntryTx: the payment held, the deposits waiting).
func (o *Originator) claim(ctx context.Context, tx Store) (waiting, error) {
	wt := waiting{receivers: map[string]funding.Receiver{}}
	deposits, err := tx.DepositsToOriginate(ctx, batchLimit)
	if err != nil {
		return wt, err
	}
	for _, d := range deposits {
		if d.SourceGone {
			if err := o.funding.CancelDepositsTx(ctx, tx.Funding(), d.Scope, d.SourceID, d.Seq); err != nil {
				return wt, err
			}
			continue
		}
		ok, err := o.screened(ctx, tx, d.Scope, d.SourceID, d.CustomerID, nil, wt.receivers)
		if err != nil {
			return wt, err
		}
		if ok {
			wt.deposits = append(wt.deposits, d)
		}
	}
	payments, err := tx.PaymentsToOriginate(ctx, batchLimit)
	if err != nil {
		return wt, err
	}
	for _, p := range payments {
		ok, err := o.payments.ReleaseTx(ctx, tx.Payments(), p)
		if err == nil && ok {
			ok, err = o.screened(ctx, tx, p.Scope, p.SourceID, p.CustomerID, &p, wt.receivers)
		}
		if err != nil {
			return wt, err
		}
		if ok {
			wt.payments = append(wt.payments, p)
		}
	}
	wt.dishonors, err = o.dishonorsInTime(ctx, tx)
	return wt, err
}

// screened reports whether the receiver's name an entry of a source will
// carry passes sanctions screening (ScreenEntryTx).
func (o *Originator) screened(ctx context.Context, tx Store, scope tenant.Scope, sourceID, customerID string, p *payment.Payment, seen map[string]funding.Receiver) (bool, error) {
	r, err := o.receiver(ctx, scope, sourceID, seen)
	if err != nil {
		return false, err
	}
	return o.payments.ScreenEntryTx(ctx, tx.Payments(), scope, customerID, p, r.Name, r.Company)
}

// insertEntry stores e with the next trace number; an entry without a
// file date takes the US Eastern date of the originator's clock.
func (o *Originator) insertEntry(ctx context.Context, tx Store, e *Entry) error {
	if e.FileDate == "" {
		e.FileDate = calendar.DateOf(o.now()).Format(time.DateOnly)
	}
	trace, err := o.traces(e.FileDate).next(ctx, tx)
	if err != nil {
		return err
	}
	e.Trace = trace
	return tx.InsertACHEntry(ctx, *e)
}

// traceCounter hands out an ODFI's trace numbers; date is the file date
// the entries it numbers carry.
type traceCounter struct {
	odfi string // the ODFI's routing number without its check digit
	date string // YYYY-MM-DD
}

func (o *Originator) traces(date string) traceCounter {
	return traceCounter{odfi: o.cfg.ODFIRouting[:8], date: date}
}

// next is the next trace number: the ODFI's 8 digits, then its next
// sequence number in 7 digits.
func (c traceCounter) next(ctx context.Context, tx Store) (string, error) {
	seq, err := tx.NextTraceSequence(ctx, c.odfi)
	if err != nil {
		return "", fmt.Errorf("take a trace number of ODFI %s: %w", c.odfi, err)
	}
	return fmt.Sprintf("%s%07d", c.odfi, seq), nil
}

// receiver returns what the entries of a source say about its holder,
// remembering the answers of one file in seen.
func (o *Originator) receiver(ctx context.Context, scope tenant.Scope, sourceID string, seen map[string]funding.Receiver) (funding.Receiver, error) {
	key := scope.MerchantID + "/" + sourceID
	if r, ok := seen[key]; ok {
		return r, nil
	}
	r, err := o.funding.Receiver(ctx, scope, sourceID)
	if err != nil {
		return funding.Receiver{}, err
	}
	seen[key] = r
	return r, nil
}

// company is the company name and id scope's payments go out under,
// remembering the answers of one file in seen. A scope without an
// originator goes out under the platform's.
func (o *Originator) company(ctx context.Context, tx Store, scope tenant.Scope, seen map[tenant.Scope][2]string) ([2]string, error) {
	if c, ok := seen[scope]; ok {
		return c, nil
	}
	name, id, err := tx.OriginatorCompany(ctx, scope)
	switch {
	case errs.Is(err, errs.NotFound):
		name, id = "", ""
	case err != nil:
		return [2]string{}, err
	}
	c := [2]string{upper(name, 16), id}
	seen[scope] = c
	return c, nil
}

// receiverName is r's name as an entry carries it; a name with nothing
// NACHA can write (no Latin letter or digit at all) is a placeholder, as
// the field may not be blank.
func receiverName(r funding.Receiver) string {
	if n := upper(r.Name, 22); n != "" {
		return n
	}
	return "ACCOUNT HOLDER"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// effectiveDate is the next business day after the file's creation (US
// Eastern), the date the entries are meant to settle at the banks.
func effectiveDate(created time.Time) time.Time {
	return payment.EffectiveDate(created) // the retry and reversal windows count from it
}
