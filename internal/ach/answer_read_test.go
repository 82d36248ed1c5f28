package ach

import (
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"
)

// bankReturnFile is a file from the Federal Reserve with one R01 of the
// entry with trace 121042880000007 for 123.45, and with the forward
// credits given (in a batch of their own), written by moov-io/ach in the published layout: 94
// characters a line, LF, the block filled with 9999… lines.
func bankReturnFile(t *testing.T, forward int) string {
	t.Helper()
	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode = nacha.MixedDebitsAndCredits
	bh.CompanyName, bh.CompanyIdentification = "FUNDSOURCE", "1234567890"
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.PPD, "RETURN"
	bh.EffectiveEntryDate, bh.ODFIIdentification = "261105", "23138010"
	batch := nacha.NewBatchPPD(bh)
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.CheckingReturnNOCCredit
	e.SetRDFI("121042882")
	e.DFIAccountNumber, e.Amount, e.IndividualName = "000123456789", 12345, "JANE DOE"
	e.SetTraceNumber("23138010", 1)
	a := nacha.NewAddenda99()
	a.ReturnCode, a.OriginalTrace, a.OriginalDFI = "R01", "121042880000007", "12104288"
	e.Addenda99, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryReturn, 1
	batch.AddEntry(e)
	if err := batch.Create(); err != nil {
		t.Fatal(err)
	}
	file := nacha.NewFile()
	file.SetHeader(bankHeader())
	file.AddBatch(batch)
	if forward == 0 {
		return encodeFile(t, file)
	}
	fwd := *bh
	fwd.ServiceClassCode, fwd.CompanyEntryDescription, fwd.BatchNumber = nacha.CreditsOnly, "PAYROLL", 2
	batch = nacha.NewBatchPPD(&fwd)
	for i := range forward {
		f := nacha.NewEntryDetail()
		f.TransactionCode = nacha.CheckingCredit
		f.SetRDFI("121042882")
		f.DFIAccountNumber, f.Amount, f.IndividualName = "31337", 500+i, "PAYROLL CO"
		f.SetTraceNumber("23138010", 2+i)
		batch.AddEntry(f)
	}
	if err := batch.Create(); err != nil {
		t.Fatal(err)
	}
	file.AddBatch(batch)
	return encodeFile(t, file)
}

func encodeFile(t *testing.T, file *nacha.File) string {
	t.Helper()
	data, err := Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func bankHeader() nacha.FileHeader {
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "231380104"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FUNDSOURCE BANK", "FEDERAL RESERVE BANK"
	return fh
}

// lines edits each line of a file written with LF.
func lines(data string, edit func(i int, l string) string) string {
	ls := strings.Split(strings.TrimRight(data, "\n"), "\n")
	var out []string
	for i, l := range ls {
		if l = edit(i, l); l != "\x00" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func trimLines(data string) string {
	return lines(data, func(_ int, l string) string { return strings.TrimRight(l, " ") })
}

func crlf(data string) string { return strings.ReplaceAll(data, "\n", "\r\n") }

func unfilled(data string) string {
	return lines(data, func(_ int, l string) string {
		if strings.HasPrefix(l, "9999") {
			return "\x00"
		}
		return l
	})
}

// header sets the file header's immediate destination (positions 4-13)
// or origin (14-23) to a 10-character field.
func header(data string, at int, field string) string {
	return lines(data, func(i int, l string) string {
		if i == 0 {
			return l[:at] + field + l[at+10:]
		}
		return l
	})
}

const (
	destination = 3
	origin      = 13
)

// TestReadReceivedReadsFilesAsBanksWriteThem: the same return file with
// trailing spaces trimmed, CRLF, no block filler, and a 10-character
// company identifier as immediate destination or origin, reads the same
// return: the trace numbers and amount are where the layout puts them.
func TestReadReceivedReadsFilesAsBanksWriteThem(t *testing.T) {
	base := bankReturnFile(t, 0)
	if !strings.HasSuffix(strings.Split(base, "\n")[0], " ") || !strings.Contains(base, "\n9999") {
		t.Fatalf("the file as moov-io/ach writes it has no trailing spaces or no filler:\n%s", base)
	}
	for _, c := range []struct {
		name string
		data string
		dest string
	}{
		{"as written", base, "121042882"},
		{"trailing spaces trimmed", trimLines(base), "121042882"},
		{"CRLF", crlf(base), "121042882"},
		{"trimmed with CRLF", crlf(trimLines(base)), "121042882"},
		{"no block filler", unfilled(base), "121042882"},
		{"trimmed, CRLF, no filler", crlf(unfilled(trimLines(base))), "121042882"},
		{"company id destination", header(base, destination, "1234567890"), "1234567890"},
		{"company id destination with a space", header(base, destination, " 123456789"), "123456789"},
		{"company id destination with a letter", header(trimLines(base), destination, "A123456789"), "A123456789"},
		{"company id origin", header(base, origin, "1234567890"), "121042882"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := readReceived([]byte(c.data))
			if err != nil {
				t.Fatalf("readReceived: %v", err)
			}
			if len(in.File.Batches) != 1 || len(in.File.Batches[0].GetEntries()) != 1 {
				t.Fatalf("batches = %+v", in.File.Batches)
			}
			ed := in.File.Batches[0].GetEntries()[0]
			if ed.Amount != 12345 || ed.TraceNumber != "231380100000001" || ed.Addenda99 == nil ||
				ed.Addenda99.OriginalTrace != "121042880000007" || ed.Addenda99.ReturnCode != "R01" {
				t.Errorf("entry = %+v, addenda %+v", ed, ed.Addenda99)
			}
			if got := in.File.Header.ImmediateDestination; got != c.dest {
				t.Errorf("immediate destination = %q, want %q", got, c.dest)
			}
			if in.Forward != 0 || len(in.Unsupported) != 0 {
				t.Errorf("set aside: %d forward, unsupported %v", in.Forward, in.Unsupported)
			}
		})
	}
	if n := len(strings.Split(strings.TrimRight(unfilled(base), "\n"), "\n")); n%10 == 0 {
		t.Fatalf("the unfilled file has %d records, a multiple of ten", n)
	}
}

// TestReadReceivedRefusesWhatWasCutShort: a line of 95 characters, an
// entry or addenda shorter than 94 (they end in a trace number, which no
// trimming removes), a file header cut before its format code, and an
// immediate destination that names no one are refused naming the line.
func TestReadReceivedRefusesWhatWasCutShort(t *testing.T) {
	base := bankReturnFile(t, 0)
	// Lines: file header, batch header, entry, addenda, batch control, file control.
	for _, c := range []struct {
		name string
		data string
		want string
	}{
		{"95 characters", lines(base, func(i int, l string) string {
			if i == 2 {
				return l + " "
			}
			return l
		}), "line:3 is 95 characters"},
		{"addenda cut short", lines(base, func(i int, l string) string {
			if i == 3 {
				return l[:79]
			}
			return l
		}), "line:4 is 79 characters"},
		{"entry one short", lines(base, func(i int, l string) string {
			if i == 2 {
				return l[:93]
			}
			return l
		}), "line:3 is 93 characters"},
		{"file header cut before its format code", lines(base, func(i int, l string) string {
			if i == 0 {
				return l[:39]
			}
			return l
		}), "line:1 is 39 characters"},
		{"file control cut inside its totals", lines(base, func(i int, l string) string {
			if i == 5 {
				return l[:54]
			}
			return l
		}), "line:6 is 54 characters"},
		{"all-zero destination", header(base, destination, "0000000000"), "line:1"},
		{"8-digit destination", header(base, destination, "  12345678"), "line:1"},
		{"lower-case company id", header(base, destination, "a123456789"), "line:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readReceived([]byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("readReceived = %v, want an error naming %q", err, c.want)
			}
		})
	}
	// At the edge: a file header trimmed to its format code (40) and a
	// file control to its totals (55) are only trimmed.
	edge := lines(base, func(i int, l string) string {
		switch i {
		case 0:
			return l[:40]
		case 5:
			return l[:55]
		}
		return l
	})
	if _, err := readReceived([]byte(edge)); err != nil {
		t.Errorf("header of 40 and control of 55 characters: %v", err)
	}
}

// TestReadReceivedReadsAFileWithNoEntries: a bank's "no returns today"
// file, a file header and a file control with trailing spaces trimmed
// and no filler, reads as a file without batches.
func TestReadReceivedReadsAFileWithNoEntries(t *testing.T) {
	fh := bankHeader()
	fc := nacha.NewFileControl()
	fc.BatchCount, fc.BlockCount = 0, 1
	data := strings.TrimRight(fh.String(), " ") + "\r\n" + strings.TrimRight(fc.String(), " ") + "\r\n"
	if len(strings.Split(data, "\r\n")[1]) >= 94 {
		t.Fatalf("file control not trimmed: %q", data)
	}
	in, err := readReceived([]byte(data))
	if err != nil {
		t.Fatalf("readReceived: %v", err)
	}
	if len(in.File.Batches)+len(in.File.IATBatches) != 0 || in.Forward != 0 || len(in.Unsupported) != 0 {
		t.Errorf("read = %+v", in)
	}
}

// TestReadReceivedCountsForwardEntries: credits that answer nothing are
// counted beside the return, not read as answers.
func TestReadReceivedCountsForwardEntries(t *testing.T) {
	in, err := readReceived([]byte(trimLines(bankReturnFile(t, 2))))
	if err != nil {
		t.Fatal(err)
	}
	if in.Forward != 2 || len(in.Unsupported) != 0 {
		t.Errorf("forward = %d, unsupported %v; want 2, none", in.Forward, in.Unsupported)
	}
}

// TestReadReceivedCountsIATAnswersUnsupported: an IAT return batch (its
// entry with the mandatory addenda 10-16 and the return's 99) and an
// IAT notification of change are listed unsupported with their original
// trace numbers.
func TestReadReceivedCountsIATAnswersUnsupported(t *testing.T) {
	data := trimLines(iatFile(t))
	in, err := readReceived([]byte(data))
	if err != nil {
		t.Fatalf("readReceived: %v\n%s", err, data)
	}
	want := []string{"121042880000001 IAT return R01", "121042880000002 IAT notification of change C01"}
	if strings.Join(in.Unsupported, "|") != strings.Join(want, "|") || in.Forward != 0 {
		t.Errorf("unsupported = %q, forward %d; want %q", in.Unsupported, in.Forward, want)
	}
}

// iatFile is a file of one IAT batch with a return and a notification of
// change, each with the seven mandatory IAT addenda records.
func iatFile(t *testing.T) string {
	t.Helper()
	file := nacha.NewFile()
	file.SetHeader(bankHeader())
	for i, code := range []string{"R01", "C01"} {
		bh := nacha.NewIATBatchHeader()
		bh.ServiceClassCode = nacha.CreditsOnly
		bh.ForeignExchangeIndicator, bh.ForeignExchangeReferenceIndicator = "FF", 3
		bh.ISODestinationCountryCode, bh.OriginatorIdentification = "US", "123456789"
		bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.IAT, "TRADEPAYMT"
		bh.ISOOriginatingCurrencyCode, bh.ISODestinationCurrencyCode = "CAD", "USD"
		bh.ODFIIdentification, bh.OriginatorStatusCode, bh.BatchNumber = "23138010", 1, i+1
		if code[0] == 'C' {
			bh.IATIndicator, bh.StandardEntryClassCode = nacha.IATCOR, nacha.COR
		}
		batch := nacha.NewIATBatch(bh)
		ed := nacha.NewIATEntryDetail()
		ed.TransactionCode = nacha.CheckingReturnNOCCredit
		ed.SetRDFI("121042882")
		ed.AddendaRecords, ed.Amount, ed.DFIAccountNumber = 7, 100000, "123456789"
		ed.SetTraceNumber("23138010", i+1)
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
		orig := "12104288000000" + string(rune('1'+i))
		if code[0] == 'R' {
			a := nacha.NewAddenda99()
			a.ReturnCode, a.OriginalTrace, a.OriginalDFI = code, orig, "12104288"
			ed.Addenda99 = a
		} else {
			a := nacha.NewAddenda98()
			a.ChangeCode, a.OriginalTrace, a.OriginalDFI, a.CorrectedData = code, orig, "12104288", "1918171614"
			ed.Addenda98, ed.Category, ed.Amount = a, nacha.CategoryNOC, 0
		}
		batch.AddEntry(ed)
		if err := batch.Create(); err != nil {
			t.Fatalf("IAT batch of a %s: %v", code, err)
		}
		file.AddIATBatch(batch)
	}
	data, err := Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "IATTRADEPAYMT") {
		t.Fatalf("not an IAT batch:\n%s", data)
	}
	return string(data)
}
