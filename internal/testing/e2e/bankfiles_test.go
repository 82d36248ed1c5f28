package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// asWellsFargo rewrites a return file as some banks write it: the
// immediate destination a 10-character company identifier, trailing
// spaces trimmed, CRLF, no block filler.
func asWellsFargo(t *testing.T, data []byte) []byte {
	t.Helper()
	var out []string
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if len(l) != 94 {
			t.Fatalf("line %d of the file as written is %d characters", i+1, len(l))
		}
		if strings.HasPrefix(l, "9999") {
			continue
		}
		if i == 0 {
			l = l[:3] + "1234567890" + l[13:]
		}
		out = append(out, strings.TrimRight(l, " "))
	}
	if len(out[0]) == 94 || len(out)%10 == 0 {
		t.Fatalf("the rewritten file keeps its header's spaces or fills its blocks: %q", out)
	}
	return []byte(strings.Join(out, "\r\n") + "\r\n")
}

// TestReturnFileAsABankWritesItAppliesToItsEntry: the return of the
// credit, in a file with trimmed lines, CRLF, no filler and a company
// identifier as immediate destination, fails that credit with its code
// and leaves the debit alone; forward entries in the file are counted,
// not applied.
func TestReturnFileAsABankWritesItAppliesToItsEntry(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var orig *nacha.EntryDetail
	var company string
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if e.TransactionCode == nacha.SavingsCredit && b.GetHeader().CompanyEntryDescription != "ACCTVERIFY" {
					orig, company = e, b.GetHeader().CompanyIdentification
				}
			}
		}
	}
	if orig == nil || orig.Amount != 1000 {
		t.Fatalf("the credit of 10.00 is not in the outbox: %+v", orig)
	}
	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode = nacha.CreditsOnly
	bh.CompanyName, bh.CompanyIdentification = "ACME", company
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.PPD, "PAYMENT"
	bh.EffectiveEntryDate, bh.ODFIIdentification = "261105", "02600959"
	batch := nacha.NewBatchPPD(bh)
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.SavingsReturnNOCCredit
	e.SetRDFI("121042882")
	e.DFIAccountNumber, e.Amount, e.IndividualName = orig.DFIAccountNumber, orig.Amount, orig.IndividualName
	e.SetTraceNumber("02600959", 1)
	a := nacha.NewAddenda99()
	a.ReturnCode, a.OriginalTrace, a.OriginalDFI = "R02", orig.TraceNumber, orig.RDFIIdentification
	a.TraceNumber = e.TraceNumber
	e.Addenda99, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryReturn, 1
	batch.AddEntry(e)
	if err := batch.Create(); err != nil {
		t.Fatal(err)
	}
	fwd := *bh
	fwd.BatchNumber = 2
	forward := nacha.NewBatchPPD(&fwd)
	for i := range 3 {
		f := nacha.NewEntryDetail()
		f.TransactionCode = nacha.CheckingCredit
		f.SetRDFI("121042882")
		f.DFIAccountNumber, f.Amount, f.IndividualName = "31337", 700+i, "SOMEONE ELSE"
		f.SetTraceNumber("02600959", 2+i)
		forward.AddEntry(f)
	}
	if err := forward.Create(); err != nil {
		t.Fatal(err)
	}
	file := nacha.NewFile()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "026009593"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "ACME", "WELLS FARGO"
	file.SetHeader(fh)
	file.AddBatch(batch)
	file.AddBatch(forward)
	data, err := ach.Encode(file)
	if err != nil {
		t.Fatal(err)
	}

	in, err := o.Receive(context.Background(), "RETURNS.TXT", asWellsFargo(t, data))
	if err != nil || in.Status != ach.InboundApplied {
		t.Fatalf("Receive = %+v, %v", in, err)
	}
	var res ach.ReturnResult
	if err := json.Unmarshal(in.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Returns != 1 || res.Applied != 1 || res.IgnoredForward != 3 || len(res.Unsupported) != 0 || len(res.Unknown) != 0 {
		t.Errorf("result = %s", in.Result)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.credit, s.key)); p["status"] != "failed" || p["failure_code"] != "R02" {
		t.Errorf("the returned credit = %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.debit, s.key)); p["status"] == "failed" {
		t.Errorf("the debit, not returned = %s", th.MustJSON(p))
	}
}

// TestBankFilesWithNothingToApplyAreAppliedNotRejected: a "no returns
// today" file (header and control, trimmed) and a file of an IAT return
// are applied (recorded, counted) without changing anything; the IAT
// return is listed unsupported with its trace. A file with a 95-character
// line is rejected naming it.
func TestBankFilesWithNothingToApplyAreAppliedNotRejected(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	o := h.originator(achConfig(t.TempDir()))
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "231380104"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FUNDSOURCE BANK", "FISERV"
	fc := nacha.NewFileControl()
	fc.BlockCount = 1
	empty := strings.TrimRight(fh.String(), " ") + "\n" + strings.TrimRight(fc.String(), " ") + "\n"

	in, err := o.Receive(context.Background(), "NORETURNS.ACH", []byte(empty))
	if err != nil || in.Status != ach.InboundApplied {
		t.Fatalf("no-returns file: %+v, %v", in, err)
	}
	var res ach.ReturnResult
	if err := json.Unmarshal(in.Result, &res); err != nil || res.Returns != 0 || res.IgnoredForward != 0 || len(res.Unsupported) != 0 {
		t.Errorf("no-returns result = %s (%v)", in.Result, err)
	}

	iat := iatReturnFile(t)
	in, err = o.Receive(context.Background(), "IAT.ACH", iat)
	if err != nil || in.Status != ach.InboundApplied {
		t.Fatalf("IAT file: %+v, %v", in, err)
	}
	res = ach.ReturnResult{}
	if err := json.Unmarshal(in.Result, &res); err != nil || res.Returns != 0 ||
		len(res.Unsupported) != 1 || res.Unsupported[0] != "121042880000009 IAT return R03" {
		t.Errorf("IAT result = %s (%v)", in.Result, err)
	}

	lines := strings.Split(string(iat), "\n")
	lines[2] += "X"
	in, err = o.Receive(context.Background(), "LONG.ACH", []byte(strings.Join(lines, "\n")))
	if err != nil || in.Status != ach.InboundRejected || !strings.Contains(in.Error, "line:3 is 95 characters") {
		t.Errorf("file with a 95-character line: %+v, %v", in, err)
	}
	var applied int
	if err := h.SQL().Get(&applied, `SELECT count(*) FROM ach_inbound_files WHERE status = 'applied'`); err != nil || applied != 2 {
		t.Errorf("applied inbound files = %d (%v), want 2", applied, err)
	}
}

// iatReturnFile is a file of one IAT return batch: the returned entry
// with its seven mandatory IAT addenda and the return's addenda 99.
func iatReturnFile(t *testing.T) []byte {
	t.Helper()
	bh := nacha.NewIATBatchHeader()
	bh.ServiceClassCode = nacha.CreditsOnly
	bh.ForeignExchangeIndicator, bh.ForeignExchangeReferenceIndicator = "FF", 3
	bh.ISODestinationCountryCode, bh.OriginatorIdentification = "US", "123456789"
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.IAT, "TRADEPAYMT"
	bh.ISOOriginatingCurrencyCode, bh.ISODestinationCurrencyCode = "CAD", "USD"
	bh.ODFIIdentification, bh.OriginatorStatusCode = "23138010", 1
	batch := nacha.NewIATBatch(bh)
	ed := nacha.NewIATEntryDetail()
	ed.TransactionCode = nacha.CheckingReturnNOCCredit
	ed.SetRDFI("121042882")
	ed.AddendaRecords, ed.Amount, ed.DFIAccountNumber = 7, 100000, "123456789"
	ed.SetTraceNumber("23138010", 1)
	ed.Category = nacha.CategoryReturn
	ed.Addenda10 = nacha.NewAddenda10()
	ed.Addenda10.TransactionTypeCode, ed.Addenda10.ForeignPaymentAmount = "ANN", 100000
	ed.Addenda10.ForeignTraceNumber, ed.Addenda10.Name = "928383-23938", "BEK Enterprises"
	ed.Addenda11 = nacha.NewAddenda11()
	ed.Addenda11.OriginatorName, ed.Addenda11.OriginatorStreetAddress = "BEK Solutions", "15 West Place Street"
	ed.Addenda12 = nacha.NewAddenda12()
	ed.Addenda12.OriginatorCityStateProvince, ed.Addenda12.OriginatorCountryPostalCode = "JacobsTown*PA\\", "US*19305\\"
	ed.Addenda13 = nacha.NewAddenda13()
	ed.Addenda13.ODFIName, ed.Addenda13.ODFIIDNumberQualifier = "Wells Fargo", "01"
	ed.Addenda13.ODFIIdentification, ed.Addenda13.ODFIBranchCountryCode = "121042882", "US"
	ed.Addenda14 = nacha.NewAddenda14()
	ed.Addenda14.RDFIName, ed.Addenda14.RDFIIDNumberQualifier = "Citadel Bank", "01"
	ed.Addenda14.RDFIIdentification, ed.Addenda14.RDFIBranchCountryCode = "231380104", "US"
	ed.Addenda15 = nacha.NewAddenda15()
	ed.Addenda15.ReceiverIDNumber, ed.Addenda15.ReceiverStreetAddress = "987465493213987", "2121 Front Street"
	ed.Addenda16 = nacha.NewAddenda16()
	ed.Addenda16.ReceiverCityStateProvince, ed.Addenda16.ReceiverCountryPostalCode = "LetterTown*AB\\", "CA*80014\\"
	a := nacha.NewAddenda99()
	a.ReturnCode, a.OriginalTrace, a.OriginalDFI = "R03", "121042880000009", "12104288"
	ed.Addenda99 = a
	batch.AddEntry(ed)
	if err := batch.Create(); err != nil {
		t.Fatal(err)
	}
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "231380104"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FUNDSOURCE BANK", "FEDERAL RESERVE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	file.AddIATBatch(batch)
	data, err := ach.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
