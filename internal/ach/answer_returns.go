package ach

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
)

// ReturnResult counts what an imported return file did.
type ReturnResult struct {
	Returns int `json:"returns"` // return entries in the file
	Applied int `json:"applied"` // returns applied now, contested dishonors' included
	// Dishonored counts untimely returns answered with a dishonored
	// return R68, Duplicates second returns of an entry answered with R67;
	// neither is applied.
	Dishonored int `json:"dishonored"`
	Duplicates int `json:"duplicates"`
	// LateForDishonor counts returns, untimely or duplicate, that came
	// too late to be dishonored (DishonorDeadline): kept, neither applied
	// nor dishonored.
	LateForDishonor int `json:"late_for_dishonor"`
	// Contested counts contested dishonored returns (R71–R77); the ones
	// whose original return was applied now count in Applied too.
	Contested int `json:"contested"`
	Duplicate int `json:"duplicate"` // imported before: nothing changes
	// Unmatched counts answers (returns, notifications of change) that
	// match no entry on every fact they carry (answer_match.go), Ambiguous those
	// that match more than one: both are applied to nothing and kept for
	// an operator (answer_unmatched.go). Unknown lists the original trace
	// numbers of the unmatched ones and of contested dishonors not sent
	// from here.
	Unmatched int      `json:"unmatched"`
	Ambiguous int      `json:"ambiguous"`
	Unknown   []string `json:"unknown"`
	// Notifications of change (COR entries), counted the same way;
	// Refused lists the ones whose corrected data a source cannot take
	// (an unknown change code, a bad routing number, a number another
	// source holds) as "trace code: reason": their sources are blocked.
	NotificationsOfChange int      `json:"notifications_of_change"`
	Changes               int      `json:"changes"` // the same count, under its earlier name
	ChangesApplied        int      `json:"changes_applied"`
	ChangesDuplicate      int      `json:"changes_duplicate"`
	ChangesRefused        []string `json:"changes_refused"`
	// Unsupported lists the answers the service cannot apply (IAT returns
	// and notifications of change, refused notifications of change, ADV
	// entries) as "TRACE WHAT"; IgnoredForward counts entries that answer
	// nothing. Neither changes anything.
	Unsupported    []string `json:"unsupported"`
	IgnoredForward int      `json:"ignored_forward"`
}

// ImportReturns reads an ACH return file and judges each return against
// its deadline (ReturnDeadline): a timely one is applied (a returned
// micro-deposit fails its verification, a returned payment fails with the
// code), an untimely or duplicate one is dishonored (see Dishonor). A
// contested dishonored return applies its original return. It applies
// each notification of change (an Addenda98 in a COR batch) to the source
// of the entry it corrects. The file is read as banks write it
// (readReceived); one with no entries applies nothing. A file that does
// not parse is refused whole, with the line at fault, before anything is
// applied (ErrMalformed); importing the same file again changes nothing.
func (o *Originator) ImportReturns(ctx context.Context, r io.Reader) (ReturnResult, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return ReturnResult{}, fmt.Errorf("read ACH return file: %w", err)
	}
	in, err := readReceived(data)
	if err != nil {
		return ReturnResult{}, malformed{fmt.Errorf("read ACH return file (nothing applied): %w", err)}
	}
	file := in.File
	arrived := calendar.DateOf(o.now(ctx))
	if d, err := time.Parse("060102", file.Header.FileCreationDate); err == nil {
		arrived = d
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	res := ReturnResult{Unknown: []string{}, ChangesRefused: []string{}, Unsupported: in.Unsupported, IgnoredForward: in.Forward}
	defer o.refreshAnswers(ctx)
	for _, b := range file.Batches {
		for _, ed := range b.GetEntries() {
			switch {
			case ed.Addenda98 != nil:
				err = o.importChange(ctx, ed, b.GetHeader(), digest, arrived, &res)
			case ed.Addenda99 != nil:
				err = o.importReturn(ctx, ed, b.GetHeader(), digest, arrived, &res)
			case ed.Addenda99Contested != nil:
				err = o.importContested(ctx, ed.Addenda99Contested, &res)
			case ed.Addenda99Dishonored != nil:
				// Dishonors go to the receiving bank; this service is none.
				res.Unknown = append(res.Unknown, ed.Addenda99Dishonored.OriginalEntryTraceNumber)
			}
			if err != nil {
				return res, err
			}
		}
	}
	res.Changes = res.NotificationsOfChange
	return res, nil
}

// importChange finds the entry one notification of change answers
// (find) and applies it there (applyChange), counting it in res. One that
// matches no single entry is kept for an operator instead.
func (o *Originator) importChange(ctx context.Context, ed *nacha.EntryDetail, bh *nacha.BatchHeader, digest string, arrived calendar.Date, res *ReturnResult) error {
	a := ed.Addenda98
	res.NotificationsOfChange++
	in := answered{answer: o.answerOf(AnswerChange, ed, bh, a.OriginalTrace, a.ChangeCode, arrived), ed: ed, fileSHA256: digest}
	err := o.store.WithTx(ctx, func(tx Store) error {
		e, ok, err := o.find(ctx, tx, in, res)
		if err != nil || !ok {
			return err
		}
		return o.applyChange(ctx, tx, e, a, res)
	})
	if err != nil {
		return fmt.Errorf("import notification of change %s of trace %s: %w", a.ChangeCode, a.OriginalTrace, err)
	}
	return nil
}

// applyChange applies notification of change a to entry e's source in
// tx, counting it in res. One the source cannot take (its corrected data
// invalid, or an account number another source holds) blocks the source
// instead, with funding.BlockNOCUnapplicable, under a savepoint: the
// source's entries would otherwise keep going to the data the bank said
// is wrong.
func (o *Originator) applyChange(ctx context.Context, tx Store, e Entry, a *nacha.Addenda98, res *ReturnResult) error {
	applied := false
	err := tx.WithTx(ctx, func(tx Store) error {
		c, err := correction(a)
		if err != nil {
			return err
		}
		c.OriginalTrace = changeKey(e)
		applied, err = o.funding.ApplyChangeTx(ctx, tx.Funding(), e.Scope, e.SourceID, c)
		return err
	})
	ae, _ := errs.As(err)
	refused := ae != nil && slices.Contains([]errs.Code{errs.InvalidRequest, errs.InvalidRoutingNumber,
		errs.InvalidAccountNumber, errs.InvalidAccountType, errs.AccountInUse}, ae.Code)
	switch {
	case refused:
		res.ChangesRefused = append(res.ChangesRefused, e.Trace+" "+a.ChangeCode+": "+ae.Message)
		reason := "The bank's notification of change " + a.ChangeCode + " could not be applied to this source."
		_, err := o.consequences.BlockTx(ctx, tx, e.Scope, e.SourceID, funding.BlockNOCUnapplicable, reason)
		return err
	case err != nil:
		return err
	case applied:
		res.ChangesApplied++
	default:
		res.ChangesDuplicate++
	}
	return nil
}

// changeKey is what a source's change remembers of the entry a
// notification of change corrected, so that importing it again applies
// nothing: its trace number, with its file date once the trace number
// recurs (trace numbers restart each date, and the same number on
// another date is another entry). The first entry with a number keeps
// the bare number, as changes recorded before numbers restarted have it.
func changeKey(e Entry) string {
	if e.Recurs && e.FileDate != "" {
		return e.Trace + " " + e.FileDate
	}
	return e.Trace
}

// correction reads an Addenda98's change code and corrected data.
func correction(a *nacha.Addenda98) (funding.Correction, error) {
	c := funding.Correction{ChangeCode: a.ChangeCode, OriginalTrace: a.OriginalTrace}
	if a.ChangeCode == funding.ChangeAddenda {
		return c, nil // it corrects nothing: its data only describes the error
	}
	d := a.ParseCorrectedData()
	if d == nil {
		return c, errs.Invalid("corrected_data", "The corrected data does not fit the change code.")
	}
	c.RoutingNumber, c.AccountNumber = strings.TrimSpace(d.RoutingNumber), strings.TrimSpace(d.AccountNumber)
	c.Name, c.IndividualID = strings.TrimSpace(d.Name), strings.TrimSpace(d.Identification)
	if d.TransactionCode != 0 {
		c.AccountType = accountTypeOf(d.TransactionCode)
		if c.AccountType == "" {
			return c, errs.Invalid("corrected_data", fmt.Sprintf("Transaction code %d names no checking or savings account.", d.TransactionCode))
		}
	}
	return c, nil
}

// accountTypeOf is the account type a transaction code names: 2x checking,
// 3x savings; "" for any other.
func accountTypeOf(code int) string {
	switch code / 10 {
	case 2:
		return funding.Checking
	case 3:
		return funding.Savings
	}
	return ""
}
