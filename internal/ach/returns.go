package ach

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
)

// ReturnResult counts what an imported return file did.
type ReturnResult struct {
	Returns   int      `json:"returns"`   // return entries in the file
	Applied   int      `json:"applied"`   // applied now
	Duplicate int      `json:"duplicate"` // applied by an earlier import
	Unknown   []string `json:"unknown"`   // original trace numbers not originated here
	// Notifications of change (COR entries), counted the same way;
	// Refused lists the ones whose corrected data a source cannot take
	// (an unknown change code, a bad routing number, a number another
	// source holds) as "trace code: reason".
	Changes          int      `json:"changes"`
	ChangesApplied   int      `json:"changes_applied"`
	ChangesDuplicate int      `json:"changes_duplicate"`
	ChangesRefused   []string `json:"changes_refused"`
}

// ImportReturns reads an ACH return file and applies each return: a
// returned micro-deposit fails its verification, a returned payment fails
// with the code. It applies each notification of change (an Addenda98 in
// a COR batch) to the source of the entry it corrects. Importing the same
// file again changes nothing.
func (o *Originator) ImportReturns(ctx context.Context, r io.Reader) (ReturnResult, error) {
	file, err := nacha.NewReader(r).Read()
	if err != nil {
		return ReturnResult{}, fmt.Errorf("read ACH return file: %w", err)
	}
	res := ReturnResult{Unknown: []string{}, ChangesRefused: []string{}}
	for _, b := range file.Batches {
		for _, ed := range b.GetEntries() {
			if ed.Addenda98 != nil {
				if err := o.importChange(ctx, ed.Addenda98, &res); err != nil {
					return res, err
				}
				continue
			}
			if ed.Addenda99 == nil {
				continue
			}
			res.Returns++
			applied, err := o.applyReturn(ctx, ed.Addenda99.OriginalTrace, ed.Addenda99.ReturnCode)
			switch {
			case errs.Is(err, errs.NotFound):
				res.Unknown = append(res.Unknown, ed.Addenda99.OriginalTrace)
			case err != nil:
				return res, err
			case applied:
				res.Applied++
			default:
				res.Duplicate++
			}
		}
	}
	return res, nil
}

func (o *Originator) applyReturn(ctx context.Context, trace, code string) (bool, error) {
	applied := false
	err := o.store.WithTx(ctx, func(tx Store) error {
		e, err := tx.ACHEntry(ctx, trace)
		if err != nil || e.ReturnCode != "" {
			return err
		}
		if e.Kind == KindMicroDeposit {
			err = o.funding.ReturnMicroDepositTx(ctx, tx.Funding(), e.Scope, e.SourceID, e.DepositSeq, code)
		} else {
			err = o.payments.ReturnTx(ctx, tx.Payments(), e.Scope, e.PaymentID, code)
		}
		if err != nil {
			return err
		}
		applied = true
		return tx.MarkACHEntryReturned(ctx, trace, code, o.now().UTC())
	})
	return applied, err
}

// importChange applies one notification of change and counts it in res.
func (o *Originator) importChange(ctx context.Context, a *nacha.Addenda98, res *ReturnResult) error {
	res.Changes++
	trace := a.OriginalTrace
	c, err := correction(a)
	applied := false
	if err == nil {
		err = o.store.WithTx(ctx, func(tx Store) error {
			e, err := tx.ACHEntry(ctx, trace)
			if err != nil {
				return err
			}
			c.OriginalTrace = changeKey(e)
			applied, err = o.funding.ApplyChangeTx(ctx, tx.Funding(), e.Scope, e.SourceID, c)
			return err
		})
	}
	e, _ := errs.As(err)
	refused := e != nil && slices.Contains([]errs.Code{errs.InvalidRequest, errs.InvalidRoutingNumber,
		errs.InvalidAccountNumber, errs.InvalidAccountType, errs.AccountInUse}, e.Code)
	switch {
	case errs.Is(err, errs.NotFound) && (e == nil || e.Param == ""):
		res.Unknown = append(res.Unknown, trace)
	case refused:
		res.ChangesRefused = append(res.ChangesRefused, trace+" "+a.ChangeCode+": "+e.Message)
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
	d := a.ParseCorrectedData()
	if d == nil {
		return c, errs.Invalid("corrected_data", "The corrected data does not fit the change code.")
	}
	c.RoutingNumber, c.AccountNumber = strings.TrimSpace(d.RoutingNumber), strings.TrimSpace(d.AccountNumber)
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
