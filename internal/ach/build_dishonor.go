package ach

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// addDishonors adds to file the dishonored returns, in batches of their
// own after the entries' (a batch holds one category of entries), each
// under its original entry's SEC code and description.
func (o *Originator) addDishonors(ctx context.Context, file *nacha.File, effective string, dishonors []Dishonor, h holders) error {
	keys := make([]batchKey, len(dishonors))
	byClass := map[batchKey][]*nacha.EntryDetail{}
	for i, d := range dishonors {
		class := d.Entry.Class
		ed, err := o.dishonorDetail(ctx, d, class, h)
		if err != nil {
			return err
		}
		keys[i] = keyOf(class, d.Entry)
		keys[i].Effective = "" // a dishonor is effective with its file
		byClass[keys[i]] = append(byClass[keys[i]], ed)
	}
	for _, k := range batchOrder(keys) {
		bh := nacha.NewBatchHeader()
		bh.CompanyName, bh.CompanyIdentification = o.companyOf(k)
		bh.StandardEntryClassCode = k.SEC
		bh.CompanyEntryDescription = k.Description
		bh.EffectiveEntryDate = effective
		bh.ODFIIdentification = o.cfg.ODFIRouting[:8]
		bh.BatchNumber = len(file.Batches) + 1
		if err := AddBatch(file, bh, byClass[k]); err != nil {
			return err
		}
	}
	return nil
}

// dishonorDetail is the dishonored return of d: the original entry as it
// was returned (the return's transaction code, to the bank that returned
// it, without payment-related addenda) with an Addenda99 naming the
// original entry, the return and its code.
func (o *Originator) dishonorDetail(ctx context.Context, d Dishonor, class Class, h holders) (*nacha.EntryDetail, error) {
	ed, err := o.entryDetail(ctx, d.Entry, h)
	if err != nil {
		return nil, err
	}
	if class.PaymentType != "" {
		ed.SetPaymentType(class.PaymentType)
	}
	ed.TransactionCode = returnTransactionCode(ed.TransactionCode)
	ed.RDFIIdentification, ed.CheckDigit = d.RDFI, strconv.Itoa(nacha.CalculateCheckDigit(d.RDFI))
	ed.Addenda05, ed.AddendaRecordIndicator = nil, 1
	ed.TraceNumber, ed.Category = d.Trace, nacha.CategoryDishonoredReturn
	ad := nacha.NewAddenda99Dishonored()
	ad.DishonoredReturnReasonCode = d.Code
	ad.OriginalEntryTraceNumber = d.Entry.Trace
	ad.OriginalReceivingDFIIdentification = d.RDFI
	ad.ReturnTraceNumber = d.ReturnTrace
	ad.ReturnSettlementDate = d.ReturnSettlement
	ad.ReturnReasonCode = strings.TrimPrefix(d.ReturnCode, "R")
	ad.TraceNumber = d.Trace
	ed.Addenda99Dishonored = ad
	return ed, nil
}

// returnTransactionCode is the transaction code of the return of an entry
// with code: 21 for a checking credit (22), 26 for a checking debit (27),
// 31 and 36 for savings.
func returnTransactionCode(code int) int {
	if code%10 >= 5 {
		return code/10*10 + 6
	}
	return code/10*10 + 1
}

// dishonorsInTime locks the dishonors to send in the file being assigned
// and keeps back those whose dishonor deadline has passed, marking them
// late for dishonor: a dishonor the bank would refuse never leaves.
func (o *Originator) dishonorsInTime(ctx context.Context, tx Store) ([]Dishonor, error) {
	ds, err := tx.DishonorsToSend(ctx, batchLimit)
	if err != nil {
		return nil, err
	}
	now := o.now(ctx).UTC()
	out := ds[:0:0]
	for _, d := range ds {
		if DishonorInTime(d.returnSettled(), calendar.DateOf(now)) {
			out = append(out, d)
			continue
		}
		if err := tx.MarkDishonorLate(ctx, d.ID, now); err != nil {
			return nil, fmt.Errorf("keep dishonor %s late for dishonor: %w", d.ID, err)
		}
		o.logger().Warn("dishonored return past its limit: kept, not sent", slog.String("dishonor_id", d.ID),
			slog.String("return_code", d.ReturnCode), slog.String("return_settled", d.returnSettled().Format(time.DateOnly)))
	}
	return out, nil
}
