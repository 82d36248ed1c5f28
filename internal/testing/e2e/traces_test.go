package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// entryOf is a payment's trace number and file date.
func (h *harness) entryOf(t *testing.T, paymentID string) (trace, date string) {
	t.Helper()
	var r struct {
		Trace string `db:"trace_number"`
		Date  string `db:"file_date"`
	}
	if err := h.SQL().Get(&r, `SELECT trace_number, to_char(file_date, 'YYYY-MM-DD') AS file_date FROM ach_entries WHERE payment_id = $1`, paymentID); err != nil {
		t.Fatalf("entry of %s: %v", paymentID, err)
	}
	return r.Trace, r.Date
}

// TestTraceNumbersRestartEachFileDateAndNeverWrap: the first entry of each
// file date (US Eastern) is sequence 1 again; a return of a trace number
// that recurs is about the newest entry; sequence 9,999,999 is issued and
// the next origination that date is refused with nothing assigned (no
// file, the payment pending); the next date starts at 1.
func TestTraceNumbersRestartEachFileDateAndNeverWrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02, afternoon in New York
	_, key, _ := liveMerchant(t, h)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000123456789")))["funding_source_id"].(string)
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	credit := func(amount string) string {
		return th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"`+amount+`"`, "credit")))["payment_id"].(string)
	}
	run := func() {
		t.Helper()
		if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
			t.Fatalf("Run = %v, %v", written, err)
		}
	}
	want := func(id, trace, date string) {
		t.Helper()
		if gt, gd := h.entryOf(t, id); gt != trace || gd != date {
			t.Errorf("entry of %s = %s on %s, want %s on %s", id, gt, gd, trace, date)
		}
	}

	// A notification of change is remembered per entry, not per number:
	// the same change code for the same trace number on the next date is
	// another entry's, and applies; the same file again does not.
	noc := func(account string, applied, duplicate int) {
		t.Helper()
		file := nocFile(t, []nocEntry{{"121042880000001", "C01", &nacha.CorrectedData{AccountNumber: account}}})
		res, err := o.ImportReturns(context.Background(), bytes.NewReader(file))
		if err != nil || res.ChangesApplied != applied || res.ChangesDuplicate != duplicate {
			t.Errorf("NOC to %s = %+v, %v; want %d applied, %d duplicate", account, res, err, applied, duplicate)
		}
	}

	first := credit("1.00")
	run()
	want(first, "121042880000001", "2026-11-02")
	noc("000123456700", 1, 0)
	h.Clock.Advance(24 * time.Hour)
	second := credit("2.00")
	run()
	want(second, "121042880000001", "2026-11-03")
	noc("000123456711", 1, 0)
	noc("000123456711", 0, 1)
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+src, key)); s["last_four"] != "6711" {
		t.Errorf("source after two corrections = %s", th.MustJSON(s))
	}

	res, err := o.ImportReturns(context.Background(), bytes.NewReader(returnFile(t, map[string]string{"121042880000001": "R01"})))
	if err != nil || res.Applied != 1 {
		t.Fatalf("ImportReturns = %+v, %v", res, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+second, key)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Errorf("the newest entry's payment after the return = %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+first, key)); p["status"] != "pending" {
		t.Errorf("the older entry's payment after the return = %s", th.MustJSON(p))
	}
	var returned int
	if err := h.SQL().Get(&returned, `SELECT count(*) FROM ach_entries WHERE return_code IS NOT NULL`); err != nil || returned != 1 {
		t.Errorf("entries marked returned = %d (%v), want 1", returned, err)
	}

	// The edge of the 7 digits.
	if _, err := h.SQL().Exec(`UPDATE ach_trace_counters SET last_seq = 9999998 WHERE odfi = '12104288' AND file_date = '2026-11-03'`); err != nil {
		t.Fatal(err)
	}
	last := credit("3.00")
	run()
	want(last, "121042889999999", "2026-11-03")
	refused := credit("4.00")
	before, _ := filepath.Glob(filepath.Join(dir, "*.ach"))
	written, err := o.Run(context.Background())
	if !errors.Is(err, ach.ErrTracesExhausted) || len(written) != 0 {
		t.Fatalf("Run past 9,999,999 = %v, %v; want ErrTracesExhausted", written, err)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*.ach"))
	var files, entries, seq int
	if err := h.SQL().Get(&files, `SELECT count(*) FROM ach_files`); err != nil || files != 3 || len(after) != len(before) {
		t.Errorf("files after the refusal: %d rows (%v), %d in the outbox (was %d)", files, err, len(after), len(before))
	}
	if err := h.SQL().Get(&entries, `SELECT count(*) FROM ach_entries WHERE payment_id = $1`, refused); err != nil || entries != 0 {
		t.Errorf("entries of the refused payment = %d (%v)", entries, err)
	}
	if err := h.SQL().Get(&seq, `SELECT last_seq FROM ach_trace_counters WHERE odfi = '12104288' AND file_date = '2026-11-03'`); err != nil || seq != 9999999 {
		t.Errorf("counter after the refusal = %d (%v)", seq, err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+refused, key)); p["status"] != "pending" {
		t.Errorf("refused payment = %s", th.MustJSON(p))
	}

	h.Clock.Advance(24 * time.Hour)
	run()
	want(refused, "121042880000001", "2026-11-04")
}

// TestConcurrentOriginationsNeverShareATrace: processes taking trace
// numbers of one ODFI and date at once get each number once and none is
// skipped; four origination runs racing over the same pending payments
// write every entry once, with distinct trace numbers.
func TestConcurrentOriginationsNeverShareATrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()

	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for range 20 {
				err := h.DB.ACH().WithTx(ctx, func(tx ach.Store) error {
					n, err := tx.NextTraceSequence(ctx, "12104288", "2026-12-01")
					mu.Lock()
					got = append(got, n)
					mu.Unlock()
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, n := range got {
		if n != int64(i+1) {
			t.Fatalf("sequence numbers taken at once = %v, want 1 to 120 once each", got)
		}
	}

	_, key, _ := liveMerchant(t, h)
	user := h.Customer(key)
	for i := range 3 {
		src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(user, "021000021", fmt.Sprintf("00012345%04d", i))))["funding_source_id"].(string)
		for j := range 15 {
			th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, fmt.Sprintf(`"%d.00"`, j+1), "credit")))
		}
	}
	o := h.originator(achConfig(t.TempDir()))
	for range 4 {
		wg.Go(func() {
			if _, err := o.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var r struct {
		N        int `db:"n"`
		Distinct int `db:"d"`
	}
	if err := h.SQL().Get(&r, `SELECT count(*) AS n, count(DISTINCT (trace_number, file_date)) AS d FROM ach_entries`); err != nil {
		t.Fatal(err)
	}
	if r.N != 45 || r.Distinct != 45 {
		t.Errorf("entries = %d with %d distinct trace numbers, want 45 and 45", r.N, r.Distinct)
	}
}
