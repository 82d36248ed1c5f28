package banksim

import (
	"bytes"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
)

// debitFile is a file of one WEB debit as the originator writes it:
// created on created (YYMMDD), effective on effective, under company name
// and id, to account for amount cents, with trace sequence seq.
func debitFile(t *testing.T, created, effective, company, companyID, account string, amount, seq int) []byte {
	t.Helper()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "231380104", "121042882"
	fh.FileCreationDate, fh.FileCreationTime = created, "1004"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FEDERAL RESERVE BANK", "FUNDSOURCE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode, bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.DebitsOnly, "WEB", "PURCHASE"
	bh.CompanyName, bh.CompanyIdentification = company, companyID
	bh.EffectiveEntryDate, bh.ODFIIdentification = effective, "12104288"
	b, err := nacha.NewBatch(bh)
	if err != nil {
		t.Fatal(err)
	}
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.CheckingDebit
	e.SetRDFI("026009593")
	e.DFIAccountNumber, e.Amount, e.IndividualName, e.IdentificationNumber = account, amount, "ADA LOVELACE", "PAY"+account
	e.SetPaymentType("S")
	e.SetTraceNumber("12104288", seq)
	b.AddEntry(e)
	if err := b.Create(); err != nil {
		t.Fatal(err)
	}
	file.AddBatch(b)
	if err := file.Create(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nacha.NewWriter(&buf).Write(file); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStepReturnsTheEntryOfItsDateWhenATraceNumberComesAgain: two files of
// consecutive dates carry the same trace number (the originator's sequence
// wrapped), for two merchants; the bank returns the older entry, and its
// return echoes that entry's amount, account, name and company exactly,
// once; the newer entry settles unanswered.
func TestStepReturnsTheEntryOfItsDateWhenATraceNumberComesAgain(t *testing.T) {
	b := newBank()
	b.x.Put("fundsource-20261102-a.ach", debitFile(t, "261102", "261103", "ALPHA", "1111111111", "000111110001", 1234, 1))
	b.x.Put("fundsource-20261103-a.ach", debitFile(t, "261103", "261104", "BRAVO", "2222222222", "000222226789", 1234, 1))

	if sum := b.step(t, "2026-11-03"); sum.Entries != 2 || sum.Settled != 1 || sum.NextDue != "2026-11-05" {
		t.Fatalf("the first settlement day = %+v", sum)
	}
	if sum := b.step(t, "2026-11-04"); sum.Settled != 1 || len(sum.Written) != 0 {
		t.Fatalf("the second settlement day = %+v", sum)
	}
	sum := b.step(t, "2026-11-05")
	if sum.Returns != 1 || len(sum.Written) != 1 || sum.Pending != 0 {
		t.Fatalf("the return day = %+v", sum)
	}
	f := b.answers(t, "2026-11-05")[0]
	if len(f.Batches) != 1 || len(f.Batches[0].GetEntries()) != 1 {
		t.Fatalf("return file batches = %+v", f.Batches)
	}
	bh, e := f.Batches[0].GetHeader(), f.Batches[0].GetEntries()[0]
	if bh.CompanyName != "ALPHA" || bh.CompanyIdentification != "1111111111" || bh.StandardEntryClassCode != "WEB" ||
		strings.TrimSpace(e.DFIAccountNumber) != "000111110001" || e.Amount != 1234 || e.TransactionCode != nacha.CheckingReturnNOCDebit ||
		e.Addenda99.ReturnCode != "R01" || e.Addenda99.OriginalTrace != "121042880000001" {
		t.Errorf("return = %+v / %s / %+v", bh, e.String(), e.Addenda99)
	}
	for _, d := range []string{"2026-11-05", "2026-11-06", "2026-11-09"} {
		if sum := b.step(t, d); sum.Returns != 0 || len(sum.Written) != 0 {
			t.Errorf("step on %s again = %+v", d, sum)
		}
	}
}

// TestUntimelyReturnsComePastTheirDeadline: an untimely rule's return
// comes after_banking_days after settlement, but never on or before the
// deadline the originator reads returns by: an extended return on the
// banking day after the 60th calendar day is still timely, the next
// banking day is not. R17 is a standard two-day return, for debits and
// credits.
func TestUntimelyReturnsComePastTheirDeadline(t *testing.T) {
	for _, tc := range []struct {
		code, sec, settled string
		days               int
		want               string
	}{
		// Settled Tuesday 2026-11-03: the 60th day is Saturday 2027-01-02,
		// the deadline Monday 2027-01-04, late from Tuesday.
		{"R10", "WEB", "2026-11-03", 0, "2027-01-05"},
		{"R10", "PPD", "2026-11-03", 50, "2027-01-19"}, // later than late: as the rule says
		// A company's unauthorized return keeps two banking days: late on the third.
		{"R29", "CCD", "2026-11-03", 0, "2026-11-06"},
		{"R01", "WEB", "2026-11-03", 4, "2026-11-09"}, // 6801: past the deadline already
		{"R01", "WEB", "2026-11-10", 0, "2026-11-16"}, // over Veterans Day
		{"R17", "WEB", "2026-11-03", 0, "2026-11-06"},
	} {
		r := Rule{AccountSuffix: "1", Answer: tc.code, AfterBankingDays: tc.days, Untimely: true}
		e := nacha.NewEntryDetail()
		e.TransactionCode, e.DFIAccountNumber = nacha.CheckingDebit, "1"
		bh := nacha.NewBatchHeader()
		bh.StandardEntryClassCode = tc.sec
		_, when, ok := (&Network{Rules: Rules{r}}).answerFor(e, bh, true, day(tc.settled), map[string]bool{})
		if !ok || when.Format(dateLayout) != tc.want {
			t.Errorf("untimely %s of a %s entry settled %s after %d = %s %v, want %s", tc.code, tc.sec, tc.settled, tc.days, when.Format(dateLayout), ok, tc.want)
		}
		if tc.days == 0 && !when.After(ach.ReturnDeadline(tc.code, tc.sec, day(tc.settled))) {
			t.Errorf("untimely %s on %s is not past its deadline", tc.code, when.Format(dateLayout))
		}
	}
	if !Applies("R17", "PPD", false, false) || !Applies("R17", "CCD", true, false) {
		t.Error("R17 is for debits and credits of every class")
	}
}

// dishonorFile is the originator's dishonored return R68, in a file
// created on created, of the return ret of the entry orig (a WEB debit to
// account for amount cents under company).
func dishonorFile(t *testing.T, created, effective, company, companyID, account string, amount int, orig string, ret *nacha.EntryDetail, returnSettled string) []byte {
	t.Helper()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "231380104", "121042882"
	fh.FileCreationDate, fh.FileCreationTime = created, "1004"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FEDERAL RESERVE BANK", "FUNDSOURCE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode, bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.MixedDebitsAndCredits, "WEB", "PURCHASE"
	bh.CompanyName, bh.CompanyIdentification = company, companyID
	bh.EffectiveEntryDate, bh.ODFIIdentification = effective, "12104288"
	b, err := nacha.NewBatch(bh)
	if err != nil {
		t.Fatal(err)
	}
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.CheckingReturnNOCDebit
	e.SetRDFI("026009593")
	e.DFIAccountNumber, e.Amount, e.IndividualName, e.IdentificationNumber = account, amount, "ADA LOVELACE", "PAY"+account
	e.SetPaymentType("S")
	e.SetTraceNumber("12104288", 2)
	e.AddendaRecordIndicator, e.Category = 1, nacha.CategoryDishonoredReturn
	ad := nacha.NewAddenda99Dishonored()
	ad.DishonoredReturnReasonCode = "R68"
	ad.OriginalEntryTraceNumber = orig
	ad.OriginalReceivingDFIIdentification = "02600959"
	ad.ReturnTraceNumber = ret.TraceNumber
	ad.ReturnSettlementDate = returnSettled
	ad.ReturnReasonCode = strings.TrimPrefix(ret.Addenda99.ReturnCode, "R")
	ad.TraceNumber = e.TraceNumber
	e.Addenda99Dishonored = ad
	b.AddEntry(e)
	if err := b.Create(); err != nil {
		t.Fatal(err)
	}
	file.AddBatch(b)
	if err := file.Create(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nacha.NewWriter(&buf).Write(file); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStepContestsTheDishonorOfTheEntryItReturned: Alpha's entry of Monday
// and Bravo's of Tuesday carry one trace number; the bank returns Alpha's
// untimely, the originator dishonors the return naming that trace, and
// the bank's contest names the day it returned Alpha's entry and Alpha's
// settlement date, not Bravo's.
func TestStepContestsTheDishonorOfTheEntryItReturned(t *testing.T) {
	b := newBank()
	b.x.Put("fundsource-20261102-a.ach", debitFile(t, "261102", "261103", "ALPHA", "1111111111", "000111117301", 1234, 1))
	b.x.Put("fundsource-20261103-a.ach", debitFile(t, "261103", "261104", "BRAVO", "2222222222", "000222226789", 1234, 1))
	b.step(t, "2026-11-03")
	b.step(t, "2026-11-04")
	if sum := b.step(t, "2026-11-09"); sum.Returns != 1 {
		t.Fatalf("the untimely return = %+v", sum)
	}
	ret := b.answers(t, "2026-11-09")[0].Batches[0].GetEntries()[0]
	b.x.Put("fundsource-20261109-a.ach",
		dishonorFile(t, "261109", "261110", "ALPHA", "1111111111", "000111117301", 1234, "121042880000001", ret, "313"))
	if sum := b.step(t, "2026-11-10"); sum.Dishonors != 1 || len(sum.Written) != 0 || sum.NextDue != "2026-11-12" {
		t.Fatalf("reading the dishonor = %+v", sum)
	}
	sum := b.step(t, "2026-11-12")
	if sum.Contested != 1 || len(sum.Written) != 1 {
		t.Fatalf("the contest = %+v", sum)
	}
	f := b.answers(t, "2026-11-12")[0]
	c := f.Batches[0].GetEntries()[0].Addenda99Contested
	// Alpha's entry settled Tuesday 2026-11-03, day 307, and came back 2026-11-09.
	if c == nil || c.ContestedReturnCode != "R73" || c.OriginalEntryTraceNumber != "121042880000001" ||
		c.DateOriginalEntryReturned != "261109" || c.OriginalSettlementDate != "307" || c.ReturnTraceNumber != ret.TraceNumber {
		t.Errorf("contested dishonored return = %+v", c)
	}
	if bh := f.Batches[0].GetHeader(); bh.CompanyName != "ALPHA" || bh.CompanyIdentification != "1111111111" {
		t.Errorf("contest batch = %+v", bh)
	}
}
