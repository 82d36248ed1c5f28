package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// dishonorsIn returns the dishonored returns of the outbox file name.
func dishonorsIn(t *testing.T, path string) (map[string]*nacha.EntryDetail, map[string]string) {
	t.Helper()
	f, err := nacha.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("%s does not validate: %v", path, err)
	}
	out, secs := map[string]*nacha.EntryDetail{}, map[string]string{}
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			if d := e.Addenda99Dishonored; d != nil {
				out[d.OriginalEntryTraceNumber], secs[d.OriginalEntryTraceNumber] = e, b.GetHeader().StandardEntryClassCode
			}
		}
	}
	return out, secs
}

// newestOutbox is the newest file of the outbox.
func newestOutbox(t *testing.T, dir string, before []string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.ach"))
	for _, n := range names {
		if !slices.Contains(before, n) {
			return n
		}
	}
	t.Fatalf("no new file in %s", dir)
	return ""
}

func outboxNames(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.ach"))
	return names
}

// TestACHNetworkUntimelyReturnIsDishonoredInTheNextFile: the bank returns
// a WEB debit R01 on the fourth banking day after settlement (its deadline
// was the second); the import applies nothing (the payment stays, no
// payment.failed, no retry) and the next file carries a dishonored return
// R68 naming the original and the return's trace numbers, once; the same
// return imported again changes nothing; the bank accepts the dishonor.
func TestACHNetworkUntimelyReturnIsDishonoredInTheNextFile(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456801")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"20.00"`)))["payment_id"].(string)
	n.originate(t)
	trace := n.traceOf(t, 2000)

	// Settles Tuesday 2026-11-03; the R01 comes Monday 2026-11-09.
	if sum, _ := n.step(t, "2026-11-03"); sum.NextDue != "2026-11-09" {
		t.Fatalf("achnet on the settlement date = %+v", sum)
	}
	sum, res := n.step(t, "2026-11-09")
	if len(sum.Written) != 1 || res.Returns != 1 || res.Dishonored != 1 || res.Applied != 0 || res.Duplicates != 0 {
		t.Fatalf("untimely return: achnet %+v; import %+v", sum, res)
	}
	returnFile := sum.Written[0]
	rf, err := nacha.ReadFile(returnFile)
	if err != nil {
		t.Fatal(err)
	}
	returnTrace := rf.Batches[0].GetEntries()[0].TraceNumber
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] == "failed" || p["failure_code"] != nil {
		t.Errorf("payment after an untimely R01 = %s", th.MustJSON(p))
	}
	if ev := h.Events("payment.failed"); len(ev) != 0 {
		t.Errorf("payment.failed events = %d, want none", len(ev))
	}
	if p := th.WantOK(t, h.Get("/v2/payments?limit=10", n.key)); len(p["data"].([]any)) != 1 {
		t.Errorf("payments after an untimely R01 = %s (want no retry)", th.MustJSON(p))
	}

	h.Clock.Advance(7 * 24 * time.Hour) // Monday 2026-11-09
	before := outboxNames(n.outbox)
	n.originate(t)
	next := newestOutbox(t, n.outbox, before)
	got, secs := dishonorsIn(t, next)
	e := got[trace]
	if e == nil || len(got) != 1 {
		t.Fatalf("dishonors in the next file = %v", got)
	}
	d := e.Addenda99Dishonored
	if d.DishonoredReturnReasonCode != "R68" || d.ReturnTraceNumber != returnTrace || d.ReturnReasonCode != "01" ||
		d.OriginalReceivingDFIIdentification != "02100002" || e.TransactionCode != nacha.CheckingReturnNOCDebit ||
		e.Amount != 2000 || e.RDFIIdentification+e.CheckDigit != "021000021" || secs[trace] != "WEB" {
		t.Errorf("dishonored return = %s / %+v in a %s batch", e.String(), d, secs[trace])
	}
	// Exactly once: the next run has nothing to write.
	if written, err := n.o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Errorf("a run after the dishonor = %v, %v", written, err)
	}
	// The same return file again: nothing more.
	data, err := os.ReadFile(returnFile)
	if err != nil {
		t.Fatal(err)
	}
	again, err := n.o.ImportReturns(context.Background(), bytes.NewReader(data))
	if err != nil || again.Duplicate != 1 || again.Dishonored != 0 || again.Applied != 0 {
		t.Errorf("second import = %+v, %v", again, err)
	}
	if written, err := n.o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Errorf("a run after the second import = %v, %v", written, err)
	}
	// The receiving bank accepts the dishonor: nothing comes back.
	if sum, res := n.step(t, "2026-11-10"); sum.Dishonors != 1 || len(sum.Written) != 0 || res.Contested != 0 {
		t.Errorf("achnet after the dishonor = %+v", sum)
	}
}

// TestACHNetworkSecondReturnIsDishonoredAsADuplicate: the bank returns a
// debit R01 in time, then sends the same return again the next banking
// day; the first fails the payment, the second is dishonored R67 in the
// next file. A business's CCD debit to an account the bank knows as a
// consumer's comes back R05 and blocks the source.
func TestACHNetworkSecondReturnIsDishonoredAsADuplicate(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456701")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"21.00"`)))["payment_id"].(string)
	business := th.WantOK(t, h.Post("/v2/customers", n.key,
		`{"first_name":"Bea","last_name":"Baker","email":"bea@example.com","business_name":"Bea's Bakery LLC"}`))["user_id"].(string)
	consumer := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(business, "021000021", "000555550005")))["funding_source_id"].(string)
	ccd := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(consumer, `"42.00"`)))["payment_id"].(string)
	n.originate(t)
	trace := n.traceOf(t, 2100)

	n.step(t, "2026-11-03")
	sum, res := n.step(t, "2026-11-04")
	if res.Applied != 1 || res.Duplicates != 0 || sum.Returns != 1 {
		t.Fatalf("first return: achnet %+v; import %+v", sum, res)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Errorf("payment after an R01 = %s", th.MustJSON(p))
	}
	sum, res = n.step(t, "2026-11-05")
	if res.Applied != 1 || res.Duplicates != 1 || res.Dishonored != 0 || sum.Returns != 2 {
		t.Fatalf("second return and R05: achnet %+v; import %+v", sum, res)
	}
	var second string
	for _, name := range sum.Written {
		f, err := nacha.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if e.Addenda99.OriginalTrace == trace {
					second = e.TraceNumber
				}
			}
		}
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+ccd, n.key)); p["status"] != "failed" || p["failure_code"] != "R05" {
		t.Errorf("CCD payment after an R05 = %s", th.MustJSON(p))
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+consumer, n.key)); s["block"] == nil {
		t.Errorf("source after an R05 = %s", th.MustJSON(s))
	}
	th.WantError(t, h.Post("/v2/payments", n.key, th.DebitBody(consumer, `"1.00"`)), http.StatusForbidden, "funding_source_blocked")
	if ev := h.Events("payment.failed"); len(ev) != 2 {
		t.Errorf("payment.failed events = %d, want 2 (the duplicate changes nothing)", len(ev))
	}

	before := outboxNames(n.outbox)
	n.originate(t)
	got, _ := dishonorsIn(t, newestOutbox(t, n.outbox, before))
	if e := got[trace]; e == nil || len(got) != 1 || e.Addenda99Dishonored.DishonoredReturnReasonCode != "R67" ||
		e.Addenda99Dishonored.ReturnTraceNumber != second {
		t.Errorf("dishonors in the next file = %v (want R67 of return %s)", got, second)
	}
}

// TestACHNetworkContestedDishonorAppliesTheReturn: the bank's R01 comes
// late and is dishonored R68; the bank contests the dishonor (R73: the
// return was timely), and the import applies the R01: the payment fails
// with it. The contest imported again changes nothing.
func TestACHNetworkContestedDishonorAppliesTheReturn(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123457301")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"22.00"`)))["payment_id"].(string)
	n.originate(t)
	trace := n.traceOf(t, 2200)

	n.step(t, "2026-11-03")
	if _, res := n.step(t, "2026-11-09"); res.Dishonored != 1 {
		t.Fatalf("untimely return: import %+v", res)
	}
	h.Clock.Advance(7 * 24 * time.Hour) // Monday 2026-11-09: the dishonor settles Tuesday
	n.originate(t)
	// The bank contests the banking day after the dishonor settles
	// (Wednesday is Veterans Day).
	if sum, _ := n.step(t, "2026-11-10"); sum.Dishonors != 1 || len(sum.Written) != 0 || sum.NextDue != "2026-11-12" {
		t.Fatalf("achnet reading the dishonor = %+v", sum)
	}
	sum, res := n.step(t, "2026-11-12")
	if len(sum.Written) != 1 || sum.Contested != 1 || res.Contested != 1 || res.Applied != 1 || len(res.Unknown) != 0 {
		t.Fatalf("contested dishonor: achnet %+v; import %+v", sum, res)
	}
	f, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Batches[0].GetEntries()[0].Addenda99Contested; c == nil || c.ContestedReturnCode != "R73" ||
		c.OriginalEntryTraceNumber != trace || c.DishonoredReturnReasonCode != "68" || f.Batches[0].GetHeader().StandardEntryClassCode != "WEB" {
		t.Errorf("contested dishonored return = %+v", f.Batches[0].GetEntries()[0])
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Errorf("payment after a contested dishonor = %s", th.MustJSON(p))
	}
	data, err := os.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	again, err := n.o.ImportReturns(context.Background(), bytes.NewReader(data))
	if err != nil || again.Contested != 1 || again.Applied != 0 || again.Duplicate != 1 || len(h.Events("payment.failed")) != 1 {
		t.Errorf("second import = %+v, %v", again, err)
	}
}
