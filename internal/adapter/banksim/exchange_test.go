package banksim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
)

// serviceFile is one WEB debit of 25.00 to account at 026009593, in a
// file from the ODFI 121042882 to the Federal Reserve created on created
// and effective on effective (YYMMDD), assembled as the service's
// originator assembles its files: moov-io/ach records, the batch through
// ach.AddBatch, the file through ach.Encode.
func serviceFile(t *testing.T, created, effective, account string) []byte {
	t.Helper()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "231380104", "121042882"
	fh.FileCreationDate, fh.FileCreationTime, fh.FileIDModifier = created, "1400", "A"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FEDERAL RESERVE BANK", "FUNDSOURCE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	bh := nacha.NewBatchHeader()
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = "WEB", "PURCHASE"
	bh.CompanyName, bh.CompanyIdentification = "ALPHA", "1111111111"
	bh.EffectiveEntryDate, bh.ODFIIdentification = effective, "12104288"
	e := nacha.NewEntryDetail()
	e.TransactionCode = nacha.CheckingDebit
	e.SetRDFI("026009593")
	e.DFIAccountNumber, e.Amount, e.IndividualName, e.IdentificationNumber = account, 2500, "ADA LOVELACE", "PAY1"
	e.SetPaymentType("S")
	e.SetTraceNumber("12104288", 42)
	if err := ach.AddBatch(file, bh, []*nacha.EntryDetail{e}); err != nil {
		t.Fatal(err)
	}
	data, err := ach.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMemoryExchangeReturnsOnTheSecondBankingDayAcrossAHolidayAndAWeekend:
// a debit to an account ending 0001 (R01, two banking days) settles on
// Thursday 2026-12-24; Christmas and the weekend follow, so its return
// comes on Tuesday 2026-12-29 (Monday is the first banking day), once,
// whatever the steps in between or after, and a rerun of any day
// delivers nothing again.
func TestMemoryExchangeReturnsOnTheSecondBankingDayAcrossAHolidayAndAWeekend(t *testing.T) {
	if got := calendar.AddBusinessDays(day("2026-12-24"), 2); !got.Equal(day("2026-12-29")) {
		t.Fatalf("the calendar puts two banking days after 2026-12-24 on %s", got.Format(dateLayout))
	}
	b := newBank()
	b.x.Put("fundsource-20261223-a.ach", serviceFile(t, "261223", "261224", "000123450001"))
	for _, tc := range []struct {
		date            string
		banking         bool
		settled         int
		returns         int
		pending         int
		answerFiles     int // return files in the inbox after the step
		written, booked int // this step's deliveries: answer files, statements
	}{
		{"2026-12-23", true, 0, 0, 1, 0, 0, 0},  // read the day before it settles
		{"2026-12-24", true, 1, 0, 1, 0, 0, 1},  // settles: its debit booked
		{"2026-12-24", true, 0, 0, 1, 0, 0, 0},  // again: nothing settles or books twice
		{"2026-12-25", false, 0, 0, 1, 0, 0, 0}, // Christmas
		{"2026-12-26", false, 0, 0, 1, 0, 0, 0},
		{"2026-12-27", false, 0, 0, 1, 0, 0, 0},
		{"2026-12-28", true, 0, 0, 1, 0, 0, 0}, // one banking day after: not yet
		{"2026-12-29", true, 0, 1, 0, 1, 1, 1}, // the second: the return and its booking
		{"2026-12-29", true, 0, 0, 0, 1, 0, 0}, // a rerun
		{"2026-12-30", true, 0, 0, 0, 1, 0, 0},
		{"2027-01-04", true, 0, 0, 0, 1, 0, 0},
	} {
		sum := b.step(t, tc.date)
		answerFiles := 0
		for _, f := range b.x.Inbox() {
			if strings.HasSuffix(f.Name, ".ach") {
				answerFiles++
			}
		}
		if sum.BankingDay != tc.banking || sum.Files != 1 || sum.Entries != 1 || sum.Settled != tc.settled || sum.Returns != tc.returns ||
			sum.Pending != tc.pending || len(sum.Written) != tc.written || len(sum.Statements) != tc.booked || answerFiles != tc.answerFiles {
			t.Errorf("%s: %+v, %d return files; want banking day %v, %d settled, %d returns, %d pending, %d written, %d statements, %d return files",
				tc.date, sum, answerFiles, tc.banking, tc.settled, tc.returns, tc.pending, tc.written, tc.booked, tc.answerFiles)
		}
		if tc.pending > 0 && sum.NextDue != "2026-12-29" {
			t.Errorf("%s: next due %q, want 2026-12-29", tc.date, sum.NextDue)
		}
	}

	files := b.answers(t, "2026-12-29")
	if len(files) != 1 || len(files[0].Batches) != 1 || len(files[0].Batches[0].GetEntries()) != 1 {
		t.Fatalf("return files of 2026-12-29 = %+v", files)
	}
	f := files[0]
	bh, e := f.Batches[0].GetHeader(), f.Batches[0].GetEntries()[0]
	if f.Header.ImmediateDestination != "121042882" || f.Header.FileCreationDate != "261229" ||
		bh.CompanyName != "ALPHA" || bh.StandardEntryClassCode != "WEB" || bh.EffectiveEntryDate != "261229" ||
		e.TransactionCode != nacha.CheckingReturnNOCDebit || e.Amount != 2500 || strings.TrimSpace(e.DFIAccountNumber) != "000123450001" ||
		e.Addenda99 == nil || e.Addenda99.ReturnCode != "R01" || e.Addenda99.OriginalTrace != "121042880000042" {
		t.Errorf("return = %+v / %+v / %s / %+v", f.Header, bh, e.String(), e.Addenda99)
	}
	// The service reads it as it reads a bank's: one R01 of that trace.
	var got []string
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			got = append(got, e.Addenda99.ReturnCode+" "+e.Addenda99.OriginalTrace)
		}
	}
	if strings.Join(got, ",") != "R01 121042880000042" {
		t.Errorf("answers = %v", got)
	}
}

// TestMemoryExchangeKeepsTheStateAchnetWrites: the state a step keeps is
// the JSON state file achnet has always written, and a network given that
// JSON answers nothing again; a file rewritten under the same name with
// other bytes is read again as new.
func TestMemoryExchangeKeepsTheStateAchnetWrites(t *testing.T) {
	ctx := context.Background()
	b := newBank()
	b.x.Put("fundsource-20261102-a.ach", serviceFile(t, "261102", "261103", "000123450001"))
	b.step(t, "2026-11-03")
	b.step(t, "2026-11-05")
	saved, err := b.x.LoadState(ctx)
	if err != nil || !bytes.HasPrefix(saved, []byte("{\n  \"files\": {\n    \"fundsource-20261102-a.ach\": {\n      \"sha256\": ")) ||
		!bytes.Contains(saved, []byte(`"121042880000042@261102": {`)) || !bytes.HasSuffix(saved, []byte("}\n")) {
		t.Fatalf("state = %s, %v", saved, err)
	}

	again := &MemoryExchange{}
	if err := again.SaveState(ctx, saved); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.x.Inbox() {
		if _, err := again.Deliver(ctx, f.Name, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	outbox, _ := b.x.Outbox(ctx)
	again.Put(outbox[0].Name, outbox[0].Data)
	n := &Network{Exchange: again, Rules: Sandbox}
	if sum, err := n.Step(ctx, day("2026-11-05")); err != nil || sum.NewFiles != 0 || sum.Returns != 0 || len(sum.Written)+len(sum.Statements) != 0 {
		t.Errorf("a network on the saved state = %+v, %v", sum, err)
	}
	again.Put(outbox[0].Name, serviceFile(t, "261102", "261106", "000123450001"))
	if sum, err := n.Step(ctx, day("2026-11-05")); err != nil || sum.NewFiles != 1 {
		t.Errorf("the file rewritten with other bytes = %+v, %v", sum, err)
	}

	if err := again.SaveState(ctx, []byte(`{"files": 3}`)); err != nil {
		t.Fatal(err)
	}
	var se *StateError
	if _, err := n.Step(ctx, day("2026-11-06")); !errors.As(err, &se) {
		t.Errorf("a damaged state = %v, want a StateError", err)
	}
}

// TestMemoryExchangeIsSafeForConcurrentUse: the originator puts files and
// reads the inbox while the network steps (go test -race watches).
func TestMemoryExchangeIsSafeForConcurrentUse(t *testing.T) {
	b := newBank()
	data := serviceFile(t, "261102", "261103", "000123450001")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			b.x.Put(fmt.Sprintf("fundsource-%d.ach", i), data)
			_ = b.x.Inbox()
		})
	}
	wg.Go(func() {
		if _, err := b.n.Step(context.Background(), day("2026-11-03")); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if outbox, _ := b.x.Outbox(context.Background()); len(outbox) != 4 {
		t.Errorf("outbox = %d files, want 4", len(outbox))
	}
	// Nothing handed out aliases what the exchange keeps.
	out, _ := b.x.Outbox(context.Background())
	out[0].Data[0] = 'X'
	if again, _ := b.x.Outbox(context.Background()); again[0].Data[0] != '1' {
		t.Error("the outbox's bytes changed through a copy")
	}
}
