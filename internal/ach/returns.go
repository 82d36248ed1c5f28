package ach

import (
	"context"
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
	// Contested counts contested dishonored returns (R71–R77); the ones
	// whose original return was applied now count in Applied too.
	Contested int      `json:"contested"`
	Duplicate int      `json:"duplicate"` // imported before: nothing changes
	Unknown   []string `json:"unknown"`   // original trace numbers not originated here
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
	arrived := calendar.DateOf(o.now())
	if d, err := time.Parse("060102", file.Header.FileCreationDate); err == nil {
		arrived = d
	}
	res := ReturnResult{Unknown: []string{}, ChangesRefused: []string{}, Unsupported: in.Unsupported, IgnoredForward: in.Forward}
	for _, b := range file.Batches {
		for _, ed := range b.GetEntries() {
			switch {
			case ed.Addenda98 != nil:
				err = o.importChange(ctx, ed.Addenda98, &res)
			case ed.Addenda99 != nil:
				err = o.importReturn(ctx, ed, b.GetHeader().SettlementDate, arrived, &res)
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

// importChange applies one notification of change and counts it in res.
// One the source cannot take (its corrected data invalid, or an account
// number another source holds) blocks the source instead, with
// funding.BlockNOCUnapplicable, in a transaction of its own: the source's
// entries would otherwise keep going to the data the bank said is wrong.
func (o *Originator) importChange(ctx context.Context, a *nacha.Addenda98, res *ReturnResult) error {
	res.NotificationsOfChange++
	trace := a.OriginalTrace
	applied := false
	var entry Entry
	err := o.store.WithTx(ctx, func(tx Store) error {
		var err error
		if entry, err = tx.ACHEntry(ctx, trace); err != nil {
			return err
		}
		c, err := correction(a)
		if err != nil {
			return err
		}
		c.OriginalTrace = changeKey(entry)
		applied, err = o.funding.ApplyChangeTx(ctx, tx.Funding(), entry.Scope, entry.SourceID, c)
		return err
	})
	e, _ := errs.As(err)
	refused := e != nil && slices.Contains([]errs.Code{errs.InvalidRequest, errs.InvalidRoutingNumber,
		errs.InvalidAccountNumber, errs.InvalidAccountType, errs.AccountInUse}, e.Code)
	switch {
	case errs.Is(err, errs.NotFound) && (e == nil || e.Param == ""):
		res.Unknown = append(res.Unknown, trace)
	case refused:
		res.ChangesRefused = append(res.ChangesRefused, trace+" "+a.ChangeCode+": "+e.Message)
		return o.store.WithTx(ctx, func(tx Store) error {
			reason := "The bank's notification of change " + a.ChangeCode + " could not be applied to this source."
			_, err := o.funding.BlockTx(ctx, tx.Funding(), entry.Scope, entry.SourceID, funding.BlockNOCUnapplicable, reason)
			return err
		})
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
