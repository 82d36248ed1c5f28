package ach

import (
	"context"
	"fmt"
	"io"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// ReturnResult counts what an imported return file did.
type ReturnResult struct {
	Returns   int      `json:"returns"`   // return entries in the file
	Applied   int      `json:"applied"`   // applied now
	Duplicate int      `json:"duplicate"` // applied by an earlier import
	Unknown   []string `json:"unknown"`   // original trace numbers not originated here
}

// ImportReturns reads an ACH return file and applies each return: a
// returned micro-deposit fails its verification, a returned payment fails
// with the code. Importing the same file again changes nothing.
func (o *Originator) ImportReturns(ctx context.Context, r io.Reader) (ReturnResult, error) {
	file, err := nacha.NewReader(r).Read()
	if err != nil {
		return ReturnResult{}, fmt.Errorf("read ACH return file: %w", err)
	}
	res := ReturnResult{Unknown: []string{}}
	for _, b := range file.Batches {
		for _, ed := range b.GetEntries() {
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
