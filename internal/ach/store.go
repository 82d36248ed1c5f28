package ach

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

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
	// Inbound and reconciliation (answer_inbound.go, reconcile.go).
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
	// Answers the bank sent that matched no single entry (answer_unmatched.go).
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
