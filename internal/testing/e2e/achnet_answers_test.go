package e2e_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestACHNetworkReturnsTheOlderOfTwoEntriesWithOneTrace: the service's
// trace sequence wraps between two days, so Alpha's debit of Monday and
// Bravo's debit of Tuesday, for the same amount, carry the same trace
// number. The bank returns Alpha's R01; its return echoes Alpha's amount,
// account and company id as Alpha's file had them, and lands on Alpha's
// payment only: Bravo's settles and stays processed.
func TestACHNetworkReturnsTheOlderOfTwoEntriesWithOneTrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02
	ctx := context.Background()
	_, alpha, _ := liveMerchantNamed(t, h, "Alpha")
	_, bravo, _ := liveMerchantNamed(t, h, "Bravo")
	dir := t.TempDir()
	n := &network{h: h, key: alpha, outbox: filepath.Join(dir, "outbox"), inbox: filepath.Join(dir, "inbox")}
	n.o = h.originator(achConfig(n.outbox))
	alphaSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", alpha, th.SourceBody(h.Customer(alpha), "021000021", "000111110001")))["funding_source_id"].(string)
	bravoSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", bravo, th.SourceBody(h.Customer(bravo), "021000021", "000222226789")))["funding_source_id"].(string)
	wrap := func() {
		t.Helper()
		if _, err := h.SQL().Exec(`UPDATE ach_trace_sequences SET last_seq = 9999999`); err != nil {
			t.Fatal(err)
		}
	}
	wrap()
	alphaPay := th.WantOK(t, h.Post("/v2/payments", alpha, th.DebitBody(alphaSrc, `"12.34"`)))["payment_id"].(string)
	n.originate(t)
	h.Clock.Advance(24 * time.Hour) // Tuesday 2026-11-03
	wrap()
	bravoPay := th.WantOK(t, h.Post("/v2/payments", bravo, th.DebitBody(bravoSrc, `"12.34"`)))["payment_id"].(string)
	n.originate(t)
	trace, alphaDate := h.entryOf(t, alphaPay)
	bravoTrace, bravoDate := h.entryOf(t, bravoPay)
	if trace != bravoTrace || alphaDate != "2026-11-02" || bravoDate != "2026-11-03" {
		t.Fatalf("entries %s on %s and %s on %s, want one trace on consecutive days", trace, alphaDate, bravoTrace, bravoDate)
	}
	// Alpha's entry as its file had it.
	var alphaBatch *nacha.BatchHeader
	var alphaEntry *nacha.EntryDetail
	for name, f := range readACH(t, n.outbox) {
		if !strings.Contains(name, "20261102") {
			continue
		}
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if e.TraceNumber == trace {
					alphaBatch, alphaEntry = b.GetHeader(), e
				}
			}
		}
	}
	if alphaEntry == nil || alphaEntry.Amount != 1234 {
		t.Fatalf("Alpha's entry %s is not in Monday's file", trace)
	}

	// Alpha's debit settles Tuesday, Bravo's Wednesday; the R01 comes Thursday.
	n.step(t, "2026-11-03")
	if sum, res := n.step(t, "2026-11-04"); len(sum.Written) != 0 || res.Returns != 0 || sum.NextDue != "2026-11-05" {
		t.Fatalf("achnet on Wednesday = %+v", sum)
	}
	sum, res := n.step(t, "2026-11-05")
	if len(sum.Written) != 1 || sum.Returns != 1 || res.Returns != 1 || res.Applied != 1 || res.Unmatched != 0 || res.Ambiguous != 0 || len(res.Unknown) != 0 {
		t.Fatalf("the return: achnet %+v; import %+v", sum, res)
	}
	f, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	bh, e := f.Batches[0].GetHeader(), f.Batches[0].GetEntries()[0]
	if e.Addenda99.OriginalTrace != trace || e.Addenda99.ReturnCode != "R01" || e.Amount != alphaEntry.Amount ||
		e.DFIAccountNumber != alphaEntry.DFIAccountNumber || bh.CompanyIdentification != alphaBatch.CompanyIdentification ||
		bh.CompanyName != alphaBatch.CompanyName {
		t.Errorf("the return %s in %+v does not echo Alpha's entry %s in %+v", e.String(), bh, alphaEntry.String(), alphaBatch)
	}

	if p := th.WantOK(t, h.Get("/v2/payments/"+alphaPay, alpha)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Errorf("Alpha's payment = %s", th.MustJSON(p))
	}
	h.Clock.Advance(3 * 24 * time.Hour) // Friday 2026-11-06
	if _, err := h.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+bravoPay, bravo)); p["status"] != "processed" || p["failure_code"] != nil {
		t.Errorf("Bravo's payment = %s: Alpha's return landed on it", th.MustJSON(p))
	}
	if ev := h.Events("payment.failed"); len(ev) != 1 {
		t.Errorf("payment.failed events = %d, want 1", len(ev))
	}
	if sum, res := n.step(t, "2026-11-06"); len(sum.Written) != 0 || res.Returns != 0 {
		t.Errorf("achnet the next day = %+v", sum)
	}
}

// TestACHNetworkR17FailsThePayment: a debit to an account the bank finds
// opened under questionable circumstances comes back R17 two banking days
// after settlement, and the payment fails with it.
func TestACHNetworkR17FailsThePayment(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(h.Customer(n.key), "021000021", "000123450017")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"17.00"`)))["payment_id"].(string)
	n.originate(t)
	trace := n.traceOf(t, 1700)

	if sum, _ := n.step(t, "2026-11-03"); sum.Settled != 1 || sum.NextDue != "2026-11-05" {
		t.Fatalf("achnet on the settlement date = %+v", sum)
	}
	if sum, _ := n.step(t, "2026-11-04"); len(sum.Written) != 0 {
		t.Fatalf("achnet a banking day after settlement = %+v", sum)
	}
	sum, res := n.step(t, "2026-11-05")
	if len(sum.Written) != 1 || res.Returns != 1 || res.Applied != 1 || res.Unmatched != 0 {
		t.Fatalf("the R17: achnet %+v; import %+v", sum, res)
	}
	f, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	if e := f.Batches[0].GetEntries()[0]; e.Addenda99.ReturnCode != "R17" || e.Addenda99.OriginalTrace != trace || e.Amount != 1700 {
		t.Errorf("return = %s / %+v", e.String(), e.Addenda99)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] != "failed" || p["failure_code"] != "R17" {
		t.Errorf("payment after an R17 = %s", th.MustJSON(p))
	}
}

// TestACHNetworkUntimelyExtendedReturnIsDishonored: a consumer's WEB
// debit settles Tuesday 2026-11-03; its R10 was timely until Monday
// 2027-01-04 (the banking day after the 60th calendar day), and the bank
// sends it Tuesday 2027-01-05. The import applies nothing (the payment
// stays processed, its source unblocked), the next file carries a
// dishonored return R68 of it, and the bank reads that dishonor and
// accepts it.
func TestACHNetworkUntimelyExtendedReturnIsDishonored(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	ctx := context.Background()
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(h.Customer(n.key), "021000021", "000123456810")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"68.10"`)))["payment_id"].(string)
	n.originate(t)
	trace := n.traceOf(t, 6810)

	if sum, _ := n.step(t, "2026-11-03"); sum.Settled != 1 || sum.NextDue != "2027-01-05" {
		t.Fatalf("achnet on the settlement date = %+v", sum)
	}
	h.Clock.Advance(4 * 24 * time.Hour) // Friday 2026-11-06
	if _, err := h.Consequences.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	// The deadline itself: nothing yet.
	if sum, _ := n.step(t, "2027-01-04"); len(sum.Written) != 0 || sum.Pending != 1 {
		t.Fatalf("achnet on the deadline = %+v", sum)
	}
	sum, res := n.step(t, "2027-01-05")
	if len(sum.Written) != 1 || sum.Returns != 1 || res.Returns != 1 || res.Dishonored != 1 || res.Applied != 0 || res.Unmatched != 0 || res.LateForDishonor != 0 {
		t.Fatalf("the untimely R10: achnet %+v; import %+v", sum, res)
	}
	rf, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	re := rf.Batches[0].GetEntries()[0]
	if re.Addenda99.ReturnCode != "R10" || re.Addenda99.OriginalTrace != trace {
		t.Fatalf("return = %s / %+v", re.String(), re.Addenda99)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] != "processed" || p["failure_code"] != nil {
		t.Errorf("payment after an untimely R10 = %s", th.MustJSON(p))
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+src, n.key)); s["block"] != nil {
		t.Errorf("source after an untimely R10 = %s", th.MustJSON(s))
	}

	h.Clock.Advance(60 * 24 * time.Hour) // Tuesday 2027-01-05
	before := outboxNames(n.outbox)
	n.originate(t)
	got, secs := dishonorsIn(t, newestOutbox(t, n.outbox, before))
	e := got[trace]
	if e == nil || len(got) != 1 {
		t.Fatalf("dishonors in the next file = %v", got)
	}
	if d := e.Addenda99Dishonored; d.DishonoredReturnReasonCode != "R68" || d.ReturnReasonCode != "10" || d.ReturnTraceNumber != re.TraceNumber ||
		e.Amount != 6810 || secs[trace] != "WEB" {
		t.Errorf("dishonored return = %s / %+v in a %s batch", e.String(), d, secs[trace])
	}
	// The bank reads the dishonor in the forward file and accepts it.
	if sum, res := n.step(t, "2027-01-06"); sum.Dishonors != 1 || len(sum.Written) != 0 || res.Contested != 0 {
		t.Errorf("achnet reading the dishonor = %+v", sum)
	}
	if sum, _ := n.step(t, "2027-01-07"); sum.Dishonors != 0 || len(sum.Written) != 0 {
		t.Errorf("achnet the day after = %+v", sum)
	}
}
