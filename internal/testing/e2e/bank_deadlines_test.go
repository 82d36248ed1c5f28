package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// sentEntry is an entry of an outbox file as the bank received it.
type sentEntry struct {
	Trace, Account, RDFI     string
	Cents, TransactionCode   int
	SEC, Description         string
	CompanyName, CompanyID   string
	DiscretionaryOrPayType   string
	IndividualID, Individual string
}

// sentEntries reads every entry of the outbox dir by trace number.
func sentEntries(t *testing.T, dir string) map[string]sentEntry {
	t.Helper()
	out := map[string]sentEntry{}
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			h := b.GetHeader()
			for _, e := range b.GetEntries() {
				out[e.TraceNumber] = sentEntry{Trace: e.TraceNumber, Account: strings.TrimSpace(e.DFIAccountNumber),
					RDFI: e.RDFIIdentification + e.CheckDigit, Cents: e.Amount, TransactionCode: e.TransactionCode,
					SEC: h.StandardEntryClassCode, Description: strings.TrimSpace(h.CompanyEntryDescription),
					CompanyName: strings.TrimSpace(h.CompanyName), CompanyID: strings.TrimSpace(h.CompanyIdentification),
					DiscretionaryOrPayType: e.DiscretionaryData, IndividualID: strings.TrimSpace(e.IdentificationNumber),
					Individual: strings.TrimSpace(e.IndividualName)}
			}
		}
	}
	return out
}

// bankReturn is one return a test's bank file carries.
type bankReturn struct {
	Of   sentEntry
	Code string
}

// bankReturnFile is a return file as the Federal Reserve writes it,
// created on created (YYMMDD), its batch settled on the Julian day
// settled: each return carries its original entry's amount, account,
// receiving bank and company, and the return transaction code of the
// original's.
func bankReturnFile(t *testing.T, created, settled string, rs []bankReturn) []byte {
	t.Helper()
	bh := nacha.NewBatchHeader()
	bh.ServiceClassCode = nacha.MixedDebitsAndCredits
	bh.CompanyName, bh.CompanyIdentification = rs[0].Of.CompanyName, rs[0].Of.CompanyID
	if bh.CompanyName == "" {
		bh.CompanyName = "FUNDSOURCE"
	}
	bh.StandardEntryClassCode, bh.CompanyEntryDescription = nacha.PPD, "RETURN"
	bh.EffectiveEntryDate, bh.ODFIIdentification = created, "23138010"
	bh.SettlementDate = settled
	batch := nacha.NewBatchPPD(bh)
	for i, r := range rs {
		e := nacha.NewEntryDetail()
		e.TransactionCode = returnCode(r.Of.TransactionCode)
		e.SetRDFI("121042882")
		e.DFIAccountNumber = r.Of.Account
		e.Amount = r.Of.Cents
		e.IndividualName = "RETURN"
		e.SetTraceNumber("23138010", i+1)
		a := nacha.NewAddenda99()
		a.ReturnCode, a.OriginalTrace, a.OriginalDFI = r.Code, r.Of.Trace, r.Of.RDFI[:8]
		e.Addenda99, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryReturn, 1
		batch.AddEntry(e)
	}
	return dated(t, bankFile(t, batch), created)
}

// returnCode is the transaction code of the return of an entry of code.
func returnCode(code int) int {
	if code%10 >= 5 {
		return code/10*10 + 6
	}
	return code/10*10 + 1
}

// julianOf is the Julian day (3 digits) of a YYYY-MM-DD date.
func julianOf(t *testing.T, date string) string {
	t.Helper()
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatal(err)
	}
	return d.Format("002")
}

// eastern is noon of a date in New York.
func eastern(date string) time.Time {
	d, _ := time.Parse(time.DateOnly, date)
	return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, calendar.Eastern)
}

// lateDishonors counts the dishonors kept late for dishonor.
func lateDishonors(t *testing.T, h *harness) int {
	t.Helper()
	var n int
	if err := h.SQL().Get(&n, `SELECT count(*) FROM ach_dishonors WHERE late_for_dishonor_at IS NOT NULL AND file_id IS NULL`); err != nil {
		t.Fatal(err)
	}
	return n
}

// dishonorCodes lists the dishonors in the outbox by original trace.
func dishonorCodes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if d := e.Addenda99Dishonored; d != nil {
					out[d.OriginalEntryTraceNumber] = d.DishonoredReturnReasonCode
				}
			}
		}
	}
	return out
}

// TestDishonorGoesOutWithinFiveBankingDaysOfTheReturnsSettlement: the
// entries settle Tuesday 2026-11-03; untimely returns come in a file of
// Friday 2026-11-06. A return settled Friday may be dishonored through
// Monday 2026-11-16 (Veterans Day, Wednesday 11-11, is no banking day):
// imported and sent that day, its R68 leaves. One settled Thursday
// 2026-11-05 had until Friday 2026-11-13: imported on the 13th, its
// dishonor waits, and the file assigned on the 16th leaves it out and
// keeps it late_for_dishonor. A return imported on Tuesday 2026-11-17 is
// late for dishonor at once: counted, stored unsent, nothing applied.
func TestDishonorGoesOutWithinFiveBankingDaysOfTheReturnsSettlement(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	debitTrace, creditTrace := outboxTraces(t, dir)
	sent := sentEntries(t, dir)
	var micro sentEntry
	for _, e := range sent {
		if e.Description == "ACCTVERIFY" && e.TransactionCode == nacha.SavingsCredit {
			micro = e
		}
	}
	if micro.Trace == "" || sent[debitTrace].Cents != 2500 || sent[creditTrace].Cents != 1000 {
		t.Fatalf("outbox entries = %+v", sent)
	}

	// Friday 2026-11-13: both returns arrive; the one settled Thursday
	// is on its last day, the one settled Friday has until Monday.
	h.Clock.Set(eastern("2026-11-13"))
	thursday := bankReturnFile(t, "261106", julianOf(t, "2026-11-05"), []bankReturn{{sent[creditTrace], "R03"}})
	friday := bankReturnFile(t, "261106", julianOf(t, "2026-11-06"), []bankReturn{{sent[debitTrace], "R01"}})
	for name, f := range map[string][]byte{"thursday": thursday, "friday": friday} {
		res, err := o.ImportReturns(context.Background(), bytes.NewReader(f))
		if err != nil || res.Dishonored != 1 || res.LateForDishonor != 0 || res.Applied != 0 {
			t.Fatalf("import of the %s return on 2026-11-13 = %+v, %v", name, res, err)
		}
	}

	// Monday 2026-11-16 (the fifth banking day after Friday's): the file
	// carries Friday's dishonor, not Thursday's.
	h.Clock.Set(eastern("2026-11-16"))
	outbox := t.TempDir()
	o = h.originator(achConfig(outbox))
	if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("run on 2026-11-16 = %v, %v", written, err)
	}
	if got := dishonorCodes(t, outbox); len(got) != 1 || got[debitTrace] != "R68" {
		t.Errorf("dishonors sent on 2026-11-16 = %v, want only the debit's R68", got)
	}
	if n := lateDishonors(t, h); n != 1 {
		t.Errorf("dishonors kept late = %d, want 1 (the credit's)", n)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.credit, s.key)); p["status"] == "failed" {
		t.Errorf("credit whose return was late for dishonor = %s", th.MustJSON(p))
	}

	// Tuesday 2026-11-17: a return settled Friday 2026-11-06 is past its
	// dishonor limit when it arrives.
	h.Clock.Set(eastern("2026-11-17"))
	late := bankReturnFile(t, "261106", julianOf(t, "2026-11-06"), []bankReturn{{micro, "R03"}})
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(late))
	if err != nil || res.LateForDishonor != 1 || res.Dishonored != 0 || res.Applied != 0 {
		t.Fatalf("import on 2026-11-17 = %+v, %v", res, err)
	}
	if n := lateDishonors(t, h); n != 2 {
		t.Errorf("dishonors kept late = %d, want 2", n)
	}
	if written, err := o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Errorf("run after a late return = %v, %v (nothing to send)", written, err)
	}
	// The same file again is a duplicate, not a second late one.
	if res, err := o.ImportReturns(context.Background(), bytes.NewReader(late)); err != nil || res.Duplicate != 1 || res.LateForDishonor != 0 {
		t.Errorf("second import = %+v, %v", res, err)
	}
}

// entryIn is the batch header of the entry of cents in the outbox file
// written by a run; nil when there is none.
func entryIn(t *testing.T, dir, name string, cents int) (*nacha.BatchHeader, *nacha.EntryDetail) {
	t.Helper()
	f := readACH(t, dir)[name]
	if f == nil {
		t.Fatalf("no file %s in %s", name, dir)
	}
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			if e.Amount == cents {
				return b.GetHeader(), e
			}
		}
	}
	return nil, nil
}

// TestReversalsAndRetriesGoOutAsTheirOriginalsWithinTheWindow: debits of
// 25.00 and 41.00 settle Tuesday 2026-11-03 and one of 40.00 Wednesday
// 11-04, under the company ACME ORIGINAL; then the originator's company
// changes. The 25.00 comes back R01 and is presented again; 41.00 and
// 40.00 are reversed on Tuesday 11-10, the last day of the 41.00's window
// (Veterans Day, 11-11, is no banking day), before its last window. No
// file leaves that evening; after its last window a reversal of another
// entry settled 11-03 is refused at once. The file of Thursday 11-12's
// last window (the 40.00's last day) carries the re-presentment (RETRY
// PYMT) and the 40.00's reversal (REVERSAL), each under the original's
// company name, id and SEC code; the 41.00's reversal is canceled
// (reversal_window_closed, payment.canceled) and not sent.
func TestReversalsAndRetriesGoOutAsTheirOriginalsWithinTheWindow(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	setCompany(t, h, s.scope, "ACME ORIGINAL", "1555555555")
	late := th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"41.00"`)))["payment_id"].(string)
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Clock.Set(eastern("2026-11-03"))
	inTime := th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"40.00"`)))["payment_id"].(string)
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var original sentEntry
	for _, e := range sentEntries(t, dir) {
		if e.Cents == 2500 {
			original = e
		}
	}
	if original.Cents != 2500 || original.CompanyName != "ACME ORIGINAL" || original.SEC != "WEB" {
		t.Fatalf("original debit = %+v", original)
	}
	setCompany(t, h, s.scope, "ACME LATER", "1666666666")

	h.Clock.Set(eastern("2026-11-04"))
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(
		bankReturnFile(t, "261104", julianOf(t, "2026-11-04"), []bankReturn{{original, "R01"}})))
	if err != nil || res.Applied != 1 {
		t.Fatalf("import of the R01 = %+v, %v", res, err)
	}
	th.WantOK(t, h.Post("/v2/payments/"+s.debit+"/retry", s.key, ""))

	h.Clock.Set(time.Date(2026, 11, 10, 19, 59, 0, 0, calendar.Eastern))
	reversalOf := map[string]string{}
	for _, id := range []string{late, inTime} {
		p := th.WantOK(t, h.Post("/v2/payments/"+id+"/reverse", s.key, `{"reason":"duplicate"}`))
		reversalOf[id] = p["reversal"].(map[string]any)["payment_id"].(string)
	}
	h.Clock.Set(time.Date(2026, 11, 10, 20, 0, 30, 0, calendar.Eastern))
	th.WantError(t, h.Post("/v2/payments/"+s.credit+"/reverse", s.key, `{"reason":"wrong_amount"}`), http.StatusConflict, "reversal_window_closed")

	h.Clock.Set(time.Date(2026, 11, 12, 20, 0, 0, 0, calendar.Eastern))
	written, err := o.Run(context.Background())
	if err != nil || len(written) != 1 {
		t.Fatalf("run of 2026-11-12 20:00 = %v, %v", written, err)
	}
	for _, c := range []struct {
		name        string
		cents       int
		description string
	}{{"re-presentment", 2500, "RETRY PYMT"}, {"reversal of 40.00", 4000, "REVERSAL"}} {
		hd, e := entryIn(t, dir, written[0], c.cents)
		if hd == nil {
			t.Errorf("%s: not in the file", c.name)
			continue
		}
		if strings.TrimSpace(hd.CompanyName) != "ACME ORIGINAL" || hd.CompanyIdentification != "1555555555" || hd.StandardEntryClassCode != "WEB" ||
			strings.TrimSpace(hd.CompanyEntryDescription) != c.description {
			t.Errorf("%s: batch %q %q %s %q, want ACME ORIGINAL 1555555555 WEB %s", c.name, hd.CompanyName, hd.CompanyIdentification,
				hd.StandardEntryClassCode, hd.CompanyEntryDescription, c.description)
		}
		if c.cents == 4000 && e.CreditOrDebit() != "C" {
			t.Errorf("reversal of a debit is a %s entry", e.CreditOrDebit())
		}
	}
	if hd, _ := entryIn(t, dir, written[0], 4100); hd != nil {
		t.Errorf("the reversal of 41.00 went out past its window, in %+v", hd)
	}
	rev := th.WantOK(t, h.Get("/v2/payments/"+reversalOf[late], s.key))
	if rev["status"] != "canceled" || rev["cancel_reason"] != "reversal_window_closed" {
		t.Errorf("reversal past its window = %s", th.MustJSON(rev))
	}
	if rev := th.WantOK(t, h.Get("/v2/payments/"+reversalOf[inTime], s.key)); rev["status"] == "canceled" {
		t.Errorf("reversal in its window = %s", th.MustJSON(rev))
	}
	canceled := 0
	for _, ev := range h.Events("payment.canceled") {
		if ev["payment_id"] == reversalOf[late] && ev["cancel_reason"] == "reversal_window_closed" {
			canceled++
		}
	}
	if canceled != 1 {
		t.Errorf("payment.canceled of the late reversal = %d, want 1", canceled)
	}
}

// TestAReturnAfterAReversalCancelsItOrRaisesAnAlert: two $40 debits of
// one customer settle Tuesday 2026-11-03 and both are reversed; one
// reversal leaves in a file of Wednesday, the other waits. Both debits
// come back R10 on Thursday (timely: an individual's unauthorized
// return). The reversal that waited is canceled (original_returned,
// payment.canceled) and never sent; the one that left stays, and the
// return raises a reversal_then_return alert, counted by GET
// /v2/compliance/monitoring and in /metrics.
func TestAReturnAfterAReversalCancelsItOrRaisesAnAlert(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	other := th.WantOK(t, h.Post("/v2/on-demand/funding-source", s.key, th.SourceBody(h.Customer(s.key), "021000021", "000123456790")))["funding_source_id"].(string)
	unsentDebit := th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"40.00"`)))["payment_id"].(string)
	sentDebit := th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(other, `"40.00"`)))["payment_id"].(string)
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	byAccount := map[string]sentEntry{}
	for _, e := range sentEntries(t, dir) {
		if e.Cents == 4000 {
			byAccount[e.Account] = e
		}
	}
	if len(byAccount) != 2 {
		t.Fatalf("entries of 40.00 = %+v", byAccount)
	}

	h.Clock.Set(eastern("2026-11-04"))
	reverse := func(id string) string {
		p := th.WantOK(t, h.Post("/v2/payments/"+id+"/reverse", s.key, `{"reason":"duplicate"}`))
		return p["reversal"].(map[string]any)["payment_id"].(string)
	}
	sentReversal := reverse(sentDebit)
	if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("run with the first reversal = %v, %v", written, err)
	}
	unsentReversal := reverse(unsentDebit)

	h.Clock.Set(eastern("2026-11-05"))
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(bankReturnFile(t, "261105", julianOf(t, "2026-11-05"),
		[]bankReturn{{byAccount["000123456789"], "R10"}, {byAccount["000123456790"], "R10"}})))
	if err != nil || res.Applied != 2 {
		t.Fatalf("import of the R10s = %+v, %v", res, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+unsentReversal, s.key)); p["status"] != "canceled" || p["cancel_reason"] != "original_returned" {
		t.Errorf("unsent reversal after its original came back = %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+sentReversal, s.key)); p["status"] == "canceled" {
		t.Errorf("sent reversal after its original came back = %s", th.MustJSON(p))
	}
	canceled := map[string]int{}
	for _, ev := range h.Events("payment.canceled") {
		canceled[ev["payment_id"].(string)]++
	}
	if canceled[unsentReversal] != 1 || canceled[sentReversal] != 0 {
		t.Errorf("payment.canceled by payment = %v", canceled)
	}
	m := th.WantOK(t, h.Get("/v2/compliance/monitoring", s.key))
	alerts := map[string]float64{}
	for _, a := range m["alerts"].([]any) {
		a := a.(map[string]any)
		alerts[a["rule_id"].(string)] = a["alerts"].(float64)
	}
	if alerts["reversal_then_return"] != 1 {
		t.Errorf("monitoring alerts = %v, want reversal_then_return 1", alerts)
	}
	if metrics := string(h.Get("/metrics", "").Body); !strings.Contains(metrics, "fundsource_payment_reversal_then_return_alerts 1") {
		t.Errorf("/metrics lacks the alert:\n%s", metrics)
	}
	if written, err := o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Errorf("a run after the returns = %v, %v; the canceled reversal must not leave", written, err)
	}
}
