package ach

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/aba"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
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
	Class        Class  // decided at assignment (Classify, classOf)
	// FileDate is its file's creation date (US Eastern), YYYY-MM-DD: its
	// trace number is unique on that date. "" for an entry written
	// without one (by a release before trace numbers restarted per date).
	FileDate string
	// Recurs: an older entry has the same trace number (read by ACHEntry).
	Recurs bool
	// ReceiverName (folded to NACHA's name alphabet, ≤ 22) and
	// IndividualID (the source's Individual Identification Number, ≤ 15)
	// are decided at assignment like Class.
	ReceiverName string
	IndividualID string
	// Addenda is the text of the entry's one 05 addenda record (the
	// payment's description, folded, ≤ 80); "" for none.
	Addenda string
	// EffectiveDate (YYYY-MM-DD) is decided at assignment (build_schedule.go):
	// a Same Day ACH entry's may differ from its file's other entries'.
	// "" on an entry assigned before it was stored: its file's next
	// banking day.
	EffectiveDate string
	// CompanyName (≤ 16) and CompanyID (≤ 10) are the originator an
	// entry goes out under, decided at assignment like Class: its batch
	// header carries them. "" for an entry of a scope without an
	// originator, and for one assigned before originators, which go out
	// under the platform's own (Config.CompanyName, Config.CompanyID).
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
	// entry is effective the day it is built (build_schedule.go); the zero value
	// is calendar.DefaultSchedule.
	Schedule calendar.Schedule
	// SameDayMicro sends micro-deposits as Same Day ACH entries.
	SameDayMicro bool
	// SettlementAccount is the account the bank settles the files on, as
	// its camt.053 statements name it (an account number or IBAN): only
	// its statements are read (reconcile_camt.go). Empty: every statement is refused.
	SettlementAccount string
	// NoStatements: the bank sends no statements (a sandbox test clock's
	// simulated bank), so no settlement is expected of a file or a return.
	NoStatements bool
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
	now          func(context.Context) time.Time
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
func NewOriginator(cfg Config, store Store, f Funding, p Payments, cons Consequences, now func() time.Time) *Originator {
	return &Originator{cfg: cfg, store: store, funding: f, payments: p, consequences: cons, now: testclock.Scope(now),
		transport: Folders{Outbox: cfg.Dir}, lease: ids.New("lease_")}
}

// batchLimit bounds the entries of one file per kind.
const batchLimit = 1000

// SettleDays is how many business days after its effective date a
// payment without a return counts as settled.
const SettleDays = 2

// Run delivers the files left built or failed (by a crash, or a
// transport that was down), then assigns everything waiting to one new
// file and delivers it (deliver.go). It returns the names of the files
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
