package ach

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strconv"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/funding"
)

// build renders the NACHA file: one batch per company, SEC code,
// description and effective date (batchOrder), micro-deposits first, each entry under its class, and in
// each micro-deposit batch the offsetting debit the file was assigned;
// then the dishonored returns, a batch per original SEC code and
// description. It depends only on f, its entries and its dishonors, so a
// rewrite gives the same bytes.
func (o *Originator) build(ctx context.Context, f File, entries []Entry, dishonors []Dishonor) ([]byte, error) {
	file := nacha.NewFile()
	file.SetHeader(o.fileHeader(f))
	effective := effectiveDate(f.CreatedAt).Format("060102")
	h := holders{accounts: map[string]funding.BankAccount{}, deposits: map[string][2]int{}}
	keys := make([]batchKey, 0, len(entries))
	byClass := map[batchKey][]*nacha.EntryDetail{}
	for _, e := range entries {
		ed, err := o.entryDetail(ctx, e, h)
		if err != nil {
			return nil, err
		}
		if e.Class.PaymentType != "" {
			ed.SetPaymentType(e.Class.PaymentType)
		}
		k := keyOf(e.Class, e)
		keys = append(keys, k)
		byClass[k] = append(byClass[k], ed)
	}
	offsets := 0
	for number, k := range batchOrder(keys) {
		eds := byClass[k]
		if k.Description == DescriptionMicroDeposits && offsets < len(f.OffsetTraces) {
			eds = append(eds, o.offset(eds, f.OffsetTraces[offsets]))
			offsets++
			// A batch's trace numbers ascend.
			slices.SortFunc(eds, func(a, b *nacha.EntryDetail) int { return cmp.Compare(a.TraceNumber, b.TraceNumber) })
		}
		bh := nacha.NewBatchHeader()
		bh.CompanyName, bh.CompanyIdentification = o.companyOf(k)
		bh.StandardEntryClassCode = k.SEC
		bh.CompanyEntryDescription = k.Description
		bh.EffectiveEntryDate = effective
		if k.Effective != "" {
			bh.EffectiveEntryDate = k.Effective[2:4] + k.Effective[5:7] + k.Effective[8:10] // YYMMDD
		}
		bh.ODFIIdentification = o.cfg.ODFIRouting[:8]
		bh.BatchNumber = number + 1
		if err := AddBatch(file, bh, eds); err != nil {
			return nil, err
		}
	}
	if err := o.addDishonors(ctx, file, effective, dishonors, h); err != nil {
		return nil, err
	}
	return Encode(file)
}

// fileHeader is f's file header: from the ODFI to the destination,
// created when f was (US Eastern), its id modifier given by its serial.
func (o *Originator) fileHeader(f File) nacha.FileHeader {
	created := f.CreatedAt.In(calendar.Eastern)
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination = o.cfg.DestinationRouting
	fh.ImmediateOrigin = o.cfg.ODFIRouting
	fh.FileCreationDate = created.Format("060102")
	fh.FileCreationTime = created.Format("1504")
	fh.FileIDModifier = string("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[f.Serial%36])
	fh.ImmediateDestinationName = upper(o.cfg.DestinationName, 23)
	fh.ImmediateOriginName = upper(o.cfg.OriginName, 23)
	return fh
}

// Encode builds file's control record and writes it in NACHA's format.
func Encode(file *nacha.File) ([]byte, error) {
	if err := file.Create(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := nacha.NewWriter(&buf).Write(file); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// batchKey is what puts entries into one batch: the company they go out
// under ("" for the platform's), the SEC code, the description (a WEB
// batch holds single and recurring entries alike) and the effective date
// (YYYY-MM-DD; "" for the file's, on entries assigned before dates were
// stored).
type batchKey struct{ CompanyName, CompanyID, SEC, Description, Effective string }

// keyOf is the batch of entry e of class c.
func keyOf(c Class, e Entry) batchKey {
	return batchKey{e.CompanyName, e.CompanyID, c.SEC, c.Description, e.EffectiveDate}
}

// companyOf is the company name and id of batch k's header: its
// entries' originator, or the platform's.
func (o *Originator) companyOf(k batchKey) (string, string) {
	if k.CompanyName == "" || k.CompanyID == "" {
		return upper(o.cfg.CompanyName, 16), o.cfg.CompanyID
	}
	return k.CompanyName, k.CompanyID
}

// batchOrder is the file's batches, once each, for entries of keys:
// micro-deposits first, then by company, SEC code, description and
// effective date.
func batchOrder(keys []batchKey) []batchKey {
	seen := map[batchKey]bool{}
	var out []batchKey
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b batchKey) int {
		am, bm := a.Description == DescriptionMicroDeposits, b.Description == DescriptionMicroDeposits
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return cmp.Or(cmp.Compare(a.CompanyName, b.CompanyName), cmp.Compare(a.CompanyID, b.CompanyID),
			cmp.Compare(a.SEC, b.SEC), cmp.Compare(a.Description, b.Description), cmp.Compare(a.Effective, b.Effective))
	})
	return out
}

// AddBatch adds to file the batch of eds under bh, its service class set
// from eds and its control record built.
func AddBatch(file *nacha.File, bh *nacha.BatchHeader, eds []*nacha.EntryDetail) error {
	bh.ServiceClassCode = serviceClass(eds)
	batch, err := nacha.NewBatch(bh)
	if err != nil {
		return err
	}
	for _, ed := range eds {
		batch.AddEntry(ed)
	}
	if err := batch.Create(); err != nil {
		return err
	}
	file.AddBatch(batch)
	return nil
}

// serviceClass is 220 for a batch of credits only, 225 for debits only and
// 200 for both.
func serviceClass(eds []*nacha.EntryDetail) int {
	credits, debits := false, false
	for _, ed := range eds {
		if ed.CreditOrDebit() == "D" {
			debits = true
		} else {
			credits = true
		}
	}
	switch {
	case credits && debits:
		return nacha.MixedDebitsAndCredits
	case debits:
		return nacha.DebitsOnly
	}
	return nacha.CreditsOnly
}

// offset is the debit of the credits of eds from the originator's account
// at the ODFI, which makes a micro-deposit batch balance.
func (o *Originator) offset(eds []*nacha.EntryDetail, trace string) *nacha.EntryDetail {
	total := 0
	for _, ed := range eds {
		total += ed.Amount
	}
	ed := nacha.NewEntryDetail()
	ed.TransactionCode = nacha.CheckingDebit
	ed.SetRDFI(o.cfg.ODFIRouting)
	ed.DFIAccountNumber = o.cfg.OffsetAccount
	ed.Amount = total
	ed.IndividualName = upper(o.cfg.CompanyName, 22)
	ed.IdentificationNumber = "OFFSET"
	ed.TraceNumber = trace
	return ed
}

// holders remembers, within one file, the accounts and sealed amounts
// already read: a verification's two credits share both.
type holders struct {
	accounts map[string]funding.BankAccount // by merchant and source id
	deposits map[string][2]int              // by merchant, source id and verification
}

func (o *Originator) entryDetail(ctx context.Context, e Entry, h holders) (*nacha.EntryDetail, error) {
	acct, ok := h.accounts[e.Scope.MerchantID+"/"+e.SourceID]
	if !ok {
		var err error
		if acct, err = o.funding.BankAccount(ctx, e.Scope, e.SourceID); err != nil {
			return nil, err
		}
		h.accounts[e.Scope.MerchantID+"/"+e.SourceID] = acct
	}
	cents := e.Cents
	if e.Kind == KindMicroDeposit {
		amounts, ok := h.deposits[e.Scope.MerchantID+"/"+e.SourceID+"/"+strconv.Itoa(e.DepositSeq)]
		if !ok {
			var err error
			if amounts, err = o.funding.DepositAmounts(ctx, e.Scope, e.SourceID, e.DepositSeq); err != nil {
				return nil, err
			}
			h.deposits[e.Scope.MerchantID+"/"+e.SourceID+"/"+strconv.Itoa(e.DepositSeq)] = amounts
		}
		cents = int64(amounts[e.DepositIndex-1])
	}
	ed := nacha.NewEntryDetail()
	ed.TransactionCode = transactionCode(acct.AccountType, e.Debit)
	ed.SetRDFI(acct.RoutingNumber)
	ed.DFIAccountNumber = acct.AccountNumber
	ed.Amount = int(cents)
	ed.TraceNumber = e.Trace
	ed.IndividualName, ed.IdentificationNumber = e.ReceiverName, e.IndividualID
	if e.Addenda != "" {
		a := nacha.NewAddenda05()
		a.PaymentRelatedInformation = e.Addenda
		ed.AddAddenda05(a)
		ed.AddendaRecordIndicator = 1
	}
	return ed, nil
}

func transactionCode(accountType string, debit bool) int {
	switch {
	case accountType == funding.Savings && debit:
		return nacha.SavingsDebit
	case accountType == funding.Savings:
		return nacha.SavingsCredit
	case debit:
		return nacha.CheckingDebit
	}
	return nacha.CheckingCredit
}
