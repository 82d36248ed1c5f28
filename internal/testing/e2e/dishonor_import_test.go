package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// dated is a bank file data re-dated to created (YYMMDD).
func dated(t *testing.T, data []byte, created string) []byte {
	t.Helper()
	f, err := nacha.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		t.Fatal(err)
	}
	f.Header.FileCreationDate = created
	out, err := ach.Encode(&f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// outboxTraces finds the WEB debit's and the payment credit's trace numbers.
func outboxTraces(t *testing.T, dir string) (debit, credit string) {
	t.Helper()
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				switch {
				case b.GetHeader().StandardEntryClassCode == "WEB":
					debit = e.TraceNumber
				case e.TransactionCode == nacha.SavingsCredit && b.GetHeader().CompanyEntryDescription != "ACCTVERIFY":
					credit = e.TraceNumber
				}
			}
		}
	}
	return debit, credit
}

// TestReturnOnItsLastTimelyDayAppliesAndTheNextDayIsDishonored: entries
// settle Tuesday 2026-11-03; a return dated Thursday (the second banking
// day) is applied, one dated Friday is dishonored R68. The dishonor's file
// fails to write (as after a crash) and is written at the next run with
// the dishonor, once.
func TestReturnOnItsLastTimelyDayAppliesAndTheNextDayIsDishonored(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	debitTrace, creditTrace := outboxTraces(t, dir)
	onTime := dated(t, h.returnFile(t, map[string]string{creditTrace: "R03"}), "261105")
	late := dated(t, h.returnFile(t, map[string]string{debitTrace: "R01"}), "261106")
	if res, err := o.ImportReturns(context.Background(), bytes.NewReader(onTime)); err != nil || res.Applied != 1 || res.Dishonored != 0 {
		t.Fatalf("return on the second banking day = %+v, %v", res, err)
	}
	if res, err := o.ImportReturns(context.Background(), bytes.NewReader(late)); err != nil || res.Applied != 0 || res.Dishonored != 1 {
		t.Fatalf("return on the third banking day = %+v, %v", res, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.credit, s.key)); p["status"] != "failed" || p["failure_code"] != "R03" {
		t.Errorf("credit returned in time = %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.debit, s.key)); p["status"] == "failed" {
		t.Errorf("debit returned late = %s", th.MustJSON(p))
	}

	blocked := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.originator(achConfig(blocked)).Run(context.Background()); err == nil {
		t.Fatal("Run into a file instead of a folder succeeded")
	}
	outbox := t.TempDir()
	o = h.originator(achConfig(outbox))
	if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("recovery run = %v, %v", written, err)
	}
	if written, err := o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Fatalf("a run after = %v, %v", written, err)
	}
	n := 0
	for _, f := range readACH(t, outbox) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if d := e.Addenda99Dishonored; d != nil && d.OriginalEntryTraceNumber == debitTrace && d.DishonoredReturnReasonCode == "R68" {
					n++
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("R68 dishonors of the debit in the outbox = %d, want 1", n)
	}
}

// TestUnparseableReturnFileIsRefusedWhole: a return file whose second
// return is garbled (its addenda cut short, or its amount not a number so
// that its batch does not balance) is refused with the line at fault; the
// first return, which parses, is not applied either.
func TestUnparseableReturnFileIsRefusedWhole(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	debitTrace, creditTrace := outboxTraces(t, dir)
	data := string(h.returnFile(t, map[string]string{creditTrace: "R03", debitTrace: "R01"}))
	// Lines: file header, batch header, entry, addenda, entry, addenda, batch control.
	for _, c := range []struct {
		line int
		edit func(string) string
		want string
	}{
		{6, func(l string) string { return l[:40] }, "line:6"},
		{5, func(l string) string { return l[:29] + "00000ABC00" + l[39:] }, "line:7"},
	} {
		lines := strings.Split(data, "\n")
		if len(lines[c.line-1]) != 94 {
			t.Fatalf("line %d = %q", c.line, lines[c.line-1])
		}
		lines[c.line-1] = c.edit(lines[c.line-1])
		_, err := o.ImportReturns(context.Background(), strings.NewReader(strings.Join(lines, "\n")))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import with line %d garbled = %v, want an error naming %s", c.line, err, c.want)
		}
	}
	for _, id := range []string{s.credit, s.debit} {
		if p := th.WantOK(t, h.Get("/v2/payments/"+id, s.key)); p["status"] == "failed" {
			t.Errorf("payment after a refused file = %s", th.MustJSON(p))
		}
	}
	if ev := h.Events("payment.failed"); len(ev) != 0 {
		t.Errorf("payment.failed events = %d, want none", len(ev))
	}
}

// TestNOCToAnotherCustomersAccountBlocksTheSource: a C01 whose corrected
// account number another customer's source holds cannot be applied: the
// source keeps its account, is blocked with noc_unapplicable
// (funding_source.blocked), its mandates are revoked, and debits are 403.
func TestNOCToAnotherCustomersAccountBlocksTheSource(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	debitTrace, _ := outboxTraces(t, dir)
	th.WantOK(t, h.Post("/v2/on-demand/funding-source", s.key, th.SourceBody(h.Customer(s.key), "021000021", "000555444333")))
	noc := h.nocFile(t, []nocEntry{{debitTrace, "C01", &nacha.CorrectedData{AccountNumber: "000555444333"}}})
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(noc))
	if err != nil || res.NotificationsOfChange != 1 || res.ChangesApplied != 0 || len(res.ChangesRefused) != 1 {
		t.Fatalf("ImportReturns = %+v, %v", res, err)
	}
	src := th.WantOK(t, h.Get("/v2/funding-source/"+s.verified, s.key))
	if b, _ := src["block"].(map[string]any); b == nil || b["code"] != "noc_unapplicable" || src["last_four"] != "6789" {
		t.Errorf("source after an unapplicable C01 = %s", th.MustJSON(src))
	}
	if ev := h.Events("funding_source.blocked"); len(ev) != 1 {
		t.Errorf("funding_source.blocked events = %d, want 1", len(ev))
	}
	debit := th.WantOK(t, h.Get("/v2/payments/"+s.debit, s.key))
	if m := th.WantOK(t, h.Get("/v2/mandates/"+debit["mandate_id"].(string), s.key)); m["status"] != "revoked" || m["revoke_reason"] != "noc_unapplicable" {
		t.Errorf("mandate after an unapplicable C01 = %s", th.MustJSON(m))
	}
	th.WantError(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"1.00"`)), http.StatusForbidden, "funding_source_blocked")
}
