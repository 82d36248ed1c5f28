package ach

import (
	"bytes"
	"context"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
)

func day(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestReturnDeadlinesAtTheirEdges: a return is timely through the second
// banking day after settlement (counted over a weekend and over
// Thanksgiving) and untimely the next day; an individual's unauthorized
// return through the banking day after day 60 and not the banking day
// after that, with day 60 on a weekday, on a Saturday after New Year's Day
// and on Christmas, and with Martin Luther King Jr. Day after it; a
// company's R10 (CCD) and any R29 keep the two banking days, while R05 is
// extended on a CCD entry too.
func TestReturnDeadlinesAtTheirEdges(t *testing.T) {
	for _, c := range []struct {
		name, code, sec  string
		settled, arrived string
		want             bool
	}{
		{"R01 settled Thursday, Monday is the 2nd banking day", "R01", SecWEB, "2026-11-19", "2026-11-23", true},
		{"R01 settled Thursday, Tuesday is late", "R01", SecWEB, "2026-11-19", "2026-11-24", false},
		{"R01 on the weekend between is timely", "R01", SecCCD, "2026-11-19", "2026-11-21", true},
		{"R01 settled Wednesday before Thanksgiving: Monday", "R01", SecPPD, "2026-11-25", "2026-11-30", true},
		{"R01 settled Wednesday before Thanksgiving: Tuesday is late", "R01", SecPPD, "2026-11-25", "2026-12-01", false},
		{"R03 over Thanksgiving: Friday is the 1st banking day", "R03", SecCCD, "2026-11-25", "2026-11-27", true},

		{"R10 on a WEB debit, day 60 a Monday", "R10", SecWEB, "2026-11-12", "2027-01-11", true},
		{"R10 on a WEB debit, the banking day after day 60", "R10", SecWEB, "2026-11-12", "2027-01-12", true},
		{"R10 on a WEB debit, the second banking day after day 60", "R10", SecWEB, "2026-11-12", "2027-01-13", false},
		{"R07 on a PPD entry, day 60 a Saturday", "R07", SecPPD, "2026-11-03", "2027-01-02", true},
		{"R07 on a PPD entry, the Sunday after", "R07", SecPPD, "2026-11-03", "2027-01-03", true},
		{"R07 on a PPD entry, Monday: the banking day after day 60", "R07", SecPPD, "2026-11-03", "2027-01-04", true},
		{"R07 on a PPD entry, Tuesday is late", "R07", SecPPD, "2026-11-03", "2027-01-05", false},
		{"R11 on a PPD entry, day 60 on Christmas", "R11", SecPPD, "2026-10-26", "2026-12-25", true},
		{"R11 on a PPD entry, Monday after Christmas", "R11", SecPPD, "2026-10-26", "2026-12-28", true},
		{"R11 on a PPD entry, Tuesday after Christmas is late", "R11", SecPPD, "2026-10-26", "2026-12-29", false},
		{"R51 on a WEB debit, day 60 a Friday before MLK Day: Tuesday", "R51", SecWEB, "2026-11-16", "2027-01-19", true},
		{"R51 on a WEB debit, Wednesday after MLK Day is late", "R51", SecWEB, "2026-11-16", "2027-01-20", false},
		{"R37 on a TEL debit, the banking day after day 60", "R37", "TEL", "2026-11-12", "2027-01-12", true},
		{"R53 on a PPD debit, the second banking day after day 60", "R53", SecPPD, "2026-11-12", "2027-01-13", false},
		{"R10 on a CCD debit, the 3rd banking day", "R10", SecCCD, "2026-11-03", "2026-11-06", false},

		{"R29 on a WEB debit, the 2nd banking day", "R29", SecWEB, "2026-11-03", "2026-11-05", true},
		{"R29 on a WEB debit, the 3rd banking day", "R29", SecWEB, "2026-11-03", "2026-11-06", false},
		{"R29 on a CCD debit, the 2nd banking day", "R29", SecCCD, "2026-11-03", "2026-11-05", true},
		{"R29 on a CCD debit, day 60", "R29", SecCCD, "2026-11-03", "2027-01-02", false},

		{"R05 on a CCD debit, the banking day after day 60", "R05", SecCCD, "2026-11-03", "2027-01-04", true},
		{"R05 on a CCD debit, the second banking day after day 60", "R05", SecCCD, "2026-11-03", "2027-01-05", false},
		{"R01 before settlement", "R01", SecWEB, "2026-11-03", "2026-11-02", true},
	} {
		if got := Timely(c.code, c.sec, day(c.settled), day(c.arrived)); got != c.want {
			t.Errorf("%s: Timely = %v, want %v (deadline %s)", c.name, got, c.want,
				ReturnDeadline(c.code, c.sec, day(c.settled)).Format("2006-01-02"))
		}
	}
}

// TestDishonorLimitIsTheFifthBankingDayAfterTheReturnSettled: a return
// settled Friday 2026-11-20 may be dishonored through Monday 2026-11-30
// (Thanksgiving is no banking day) and not on Tuesday; one settled on a
// Saturday counts from Monday.
func TestDishonorLimitIsTheFifthBankingDayAfterTheReturnSettled(t *testing.T) {
	for _, c := range []struct {
		settled, sent string
		want          bool
	}{
		{"2026-11-20", "2026-11-20", true},
		{"2026-11-20", "2026-11-27", true},
		{"2026-11-20", "2026-11-30", true},
		{"2026-11-20", "2026-12-01", false},
		{"2026-11-21", "2026-11-30", true},
		{"2026-11-21", "2026-12-01", false},
	} {
		if got := DishonorInTime(day(c.settled), day(c.sent)); got != c.want {
			t.Errorf("return settled %s, dishonor sent %s: in time = %v, want %v (deadline %s)", c.settled, c.sent, got, c.want,
				DishonorDeadline(day(c.settled)).Format(time.DateOnly))
		}
	}
}

// TestReturnSettledOnReadsTheJulianDayNearItsFile: the batch header's
// Julian day is taken in the year that puts it nearest the file's date;
// a field that is no Julian day is the file's date.
func TestReturnSettledOnReadsTheJulianDayNearItsFile(t *testing.T) {
	for _, c := range []struct{ julian, arrived, want string }{
		{"324", "2026-11-20", "2026-11-20"},
		{"325", "2026-11-20", "2026-11-21"},
		{"365", "2027-01-02", "2026-12-31"},
		{"001", "2026-12-31", "2027-01-01"},
		{"366", "2028-12-30", "2028-12-31"},
		{"", "2026-11-20", "2026-11-20"},
		{"1x3", "2026-11-20", "2026-11-20"},
		{"400", "2026-11-20", "2026-11-20"},
	} {
		if got := ReturnSettledOn(c.julian, day(c.arrived)).Format(time.DateOnly); got != c.want {
			t.Errorf("ReturnSettledOn(%q, %s) = %s, want %s", c.julian, c.arrived, got, c.want)
		}
	}
}

// TestSettlementDateIsTheNextBankingDayInNewYork: a file created Friday
// evening in New York (Saturday in UTC) settles Monday; one created the
// evening before Thanksgiving settles Friday.
func TestSettlementDateIsTheNextBankingDayInNewYork(t *testing.T) {
	for created, want := range map[time.Time]string{
		time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC):  "2026-11-23",
		time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC): "2026-11-27",
	} {
		if got := SettlementDate(created).Format("2006-01-02"); got != want {
			t.Errorf("SettlementDate(%s) = %s, want %s", created, got, want)
		}
	}
}

// TestBuildWritesDishonoredReturnsInBatchesOfTheirOwn builds a file with
// a payment and two dishonored returns (an R68 of a WEB debit's R01, an
// R67 of a CCD debit's R03); moov-io/ach reads it back and validates it,
// and each dishonor is a return-coded entry to the bank that returned it
// carrying the original trace, the return's trace, settlement and code.
func TestBuildWritesDishonoredReturnsInBatchesOfTheirOwn(t *testing.T) {
	scope := tenant.Scope{MerchantID: "mer_1", Env: tenant.Production}
	o := NewOriginator(testConfig, nil, accounts{
		"fs_checking": {RoutingNumber: "021000021", AccountNumber: "000123456789", AccountType: funding.Checking},
		"fs_savings":  {RoutingNumber: "011000015", AccountNumber: "9876", AccountType: funding.Savings},
	}, nil, nil, time.Now)
	f := File{ID: "achf_3", Serial: 3, Name: "f.ach", CreatedAt: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)}
	entries := []Entry{{Trace: "021000020000010", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING",
		PaymentID: "pay_9", Debit: true, Cents: 500, Class: Classify(Payer{Debit: true})}}
	dishonors := []Dishonor{
		{Code: DishonorUntimely, Trace: "021000020000011", ReturnTrace: "021000020000077", ReturnCode: "R01", ReturnSettlement: "331", RDFI: "02100002",
			Entry: Entry{Trace: "021000020000001", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING",
				PaymentID: "pay_1", Debit: true, Cents: 2500, Class: Classify(Payer{Debit: true})}},
		{Code: DishonorDuplicate, Trace: "021000020000012", ReturnTrace: "011000010000003", ReturnCode: "R03", RDFI: "01100001",
			Entry: Entry{Trace: "021000020000002", Scope: scope, Kind: KindPayment, SourceID: "fs_savings", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING",
				PaymentID: "pay_2", Debit: true, Cents: 4100, Class: Classify(Payer{Business: true, Debit: true})}},
	}
	data, err := o.build(context.Background(), f, entries, dishonors)
	if err != nil {
		t.Fatal(err)
	}
	file, err := nacha.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		t.Fatalf("the file does not parse back: %v\n%s", err, data)
	}
	if err := file.Validate(); err != nil {
		t.Fatalf("the file does not validate: %v\n%s", err, data)
	}
	if len(file.Batches) != 3 {
		t.Fatalf("batches = %d, want 3 (the payment's, then a dishonor batch per SEC code)\n%s", len(file.Batches), data)
	}
	if e := file.Batches[0].GetEntries()[0]; e.Addenda99Dishonored != nil || e.TraceNumber != "021000020000010" {
		t.Errorf("first batch: %+v", e)
	}
	type want struct {
		sec, code, original, returnTrace, settlement, reason, rdfi, trace, account string
		tc, cents                                                                  int
	}
	for i, w := range []want{
		{"CCD", "R67", "021000020000002", "011000010000003", "000", "03", "01100001", "021000020000012", "9876", nacha.SavingsReturnNOCDebit, 4100},
		{"WEB", "R68", "021000020000001", "021000020000077", "331", "01", "02100002", "021000020000011", "000123456789", nacha.CheckingReturnNOCDebit, 2500},
	} {
		b := file.Batches[i+1]
		h, e := b.GetHeader(), b.GetEntries()[0]
		a := e.Addenda99Dishonored
		if h.StandardEntryClassCode != w.sec || h.BatchNumber != i+2 || a == nil {
			t.Fatalf("batch %d: %s #%d, entry %+v", i+2, h.StandardEntryClassCode, h.BatchNumber, e)
		}
		got := want{h.StandardEntryClassCode, a.DishonoredReturnReasonCode, a.OriginalEntryTraceNumber, a.ReturnTraceNumber,
			trimmed(a.ReturnSettlementDate), a.ReturnReasonCode, a.OriginalReceivingDFIIdentification, e.TraceNumber,
			trimmed(e.DFIAccountNumber), e.TransactionCode, e.Amount}
		if got != w || e.RDFIIdentification != w.rdfi || a.TraceNumber != w.trace {
			t.Errorf("dishonor %d = %+v (RDFI %s), want %+v", i, got, e.RDFIIdentification, w)
		}
	}
}

func trimmed(s string) string {
	return string(bytes.TrimSpace([]byte(s)))
}
