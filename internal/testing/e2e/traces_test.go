package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
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

// TestTraceNumbersContinueAcrossDatesAndWrap: the sequence goes on from
// one file date to the next, and after 9,999,999 wraps to 1.
func TestTraceNumbersContinueAcrossDatesAndWrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02, afternoon in New York
	_, key, _ := liveMerchant(t, h)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000123456789")))["funding_source_id"].(string)
	o := h.originator(achConfig(t.TempDir()))
	credit := func(amount string) string {
		id := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"`+amount+`"`, "credit")))["payment_id"].(string)
		if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
			t.Fatalf("Run = %v, %v", written, err)
		}
		return id
	}
	want := func(id, trace, date string) {
		t.Helper()
		if gt, gd := h.entryOf(t, id); gt != trace || gd != date {
			t.Errorf("entry of %s = %s on %s, want %s on %s", id, gt, gd, trace, date)
		}
	}
	want(credit("1.00"), "121042880000001", "2026-11-02")
	h.Clock.Advance(24 * time.Hour)
	want(credit("2.00"), "121042880000002", "2026-11-03")
	if _, err := h.SQL().Exec(`UPDATE ach_trace_sequences SET last_seq = 9999998 WHERE odfi = '12104288'`); err != nil {
		t.Fatal(err)
	}
	want(credit("3.00"), "121042889999999", "2026-11-03")
	h.Clock.Advance(24 * time.Hour)
	want(credit("4.00"), "121042880000001", "2026-11-04")
}

// TestAnswersLandOnTheEntryTheyAnswer: two merchants' entries carry the
// same trace number on consecutive days (the sequence wrapped). A return
// and a notification of change are held to the amount, account and
// company they echo: each lands on its own merchant's entry, never on the
// other's. A return whose amount matches neither is kept unmatched and
// applied to nothing until an operator matches it; one that matches two
// entries is kept as ambiguous; a dismissed one stays applied to nothing.
func TestAnswersLandOnTheEntryTheyAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, alpha, _ := liveMerchantNamed(t, h, "Alpha")
	_, bravo, _ := liveMerchantNamed(t, h, "Bravo")
	alphaSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", alpha, th.SourceBody(h.Customer(alpha), "021000021", "000111111111")))["funding_source_id"].(string)
	bravoSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", bravo, th.SourceBody(h.Customer(bravo), "021000021", "000222222222")))["funding_source_id"].(string)
	o := h.originator(achConfig(t.TempDir()))
	pay := func(key, src, amount string) string {
		t.Helper()
		id := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"`+amount+`"`, "credit")))["payment_id"].(string)
		if _, err := o.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	wrap := func() {
		t.Helper()
		if _, err := h.SQL().Exec(`UPDATE ach_trace_sequences SET last_seq = 9999999`); err != nil {
			t.Fatal(err)
		}
	}
	wrap()
	alphaPay := pay(alpha, alphaSrc, "1.00")
	h.Clock.Advance(24 * time.Hour)
	wrap()
	bravoPay := pay(bravo, bravoSrc, "1.00")
	trace, alphaSent := h.sentPayment(t, alphaPay)
	bravoTrace, bravoSent := h.sentPayment(t, bravoPay)
	if trace != bravoTrace {
		t.Fatalf("traces %s and %s, want the same", trace, bravoTrace)
	}
	status := func(key, id string) string {
		p := th.WantOK(t, h.Get("/v2/payments/"+id, key))
		return p["status"].(string) + " " + fmt.Sprint(p["failure_code"])
	}

	// Alpha's return, the older entry: Alpha's payment fails, Bravo's not.
	res, err := o.ImportReturns(ctx, bytes.NewReader(returnsFile(t, []ret{{trace, "R01", alphaSent}})))
	if err != nil || res.Applied != 1 || res.Unmatched != 0 {
		t.Fatalf("Alpha's return = %+v, %v", res, err)
	}
	if got := status(alpha, alphaPay); got != "failed R01" {
		t.Errorf("Alpha's payment = %s, want failed R01", got)
	}
	if got := status(bravo, bravoPay); strings.HasPrefix(got, "failed") {
		t.Errorf("Bravo's payment = %s: Alpha's return landed on it", got)
	}

	// A return with the trace but an amount neither entry had: kept.
	off := bravoSent
	off.cents = 101
	res, err = o.ImportReturns(ctx, bytes.NewReader(returnsFile(t, []ret{{trace, "R01", off}})))
	if err != nil || res.Applied != 0 || res.Unmatched != 1 || len(res.Unknown) != 1 {
		t.Fatalf("return of another amount = %+v, %v", res, err)
	}
	if got := status(bravo, bravoPay); strings.HasPrefix(got, "failed") {
		t.Errorf("Bravo's payment = %s after a return of another amount", got)
	}
	open, err := o.UnmatchedAnswers(ctx, ach.AnswerOpen, 10)
	if err != nil || len(open) != 1 || open[0].Reason != ach.ReasonUnmatched || open[0].Cents != 101 ||
		open[0].AccountLast4 != "2222" || open[0].Candidates != 2 || open[0].FileSHA256 == "" {
		t.Fatalf("open answers = %+v, %v", open, err)
	}
	if o.OpenAnswers() != 1 {
		t.Errorf("open answers gauge = %d, want 1", o.OpenAnswers())
	}
	// The same file again keeps nothing more.
	if res, err := o.ImportReturns(ctx, bytes.NewReader(returnsFile(t, []ret{{trace, "R01", off}}))); err != nil || res.Duplicate != 1 || res.Unmatched != 0 {
		t.Errorf("the unmatched return again = %+v, %v", res, err)
	}
	// An operator matches it to Bravo's payment: applied as an import would.
	if res, err := o.MatchAnswer(ctx, open[0].ID, bravoPay, "bank confirmed the amount was misread", audit.Operator("ops")); err != nil || res.Applied != 1 {
		t.Fatalf("MatchAnswer = %+v, %v", res, err)
	}
	if got := status(bravo, bravoPay); got != "failed R01" {
		t.Errorf("Bravo's payment after the operator's match = %s", got)
	}
	if _, err := o.MatchAnswer(ctx, open[0].ID, bravoPay, "again", audit.Operator("ops")); !errors.Is(err, ach.ErrAnswerResolved) {
		t.Errorf("matching a matched answer again = %v, want ErrAnswerResolved", err)
	}

	// Bravo's notification of change corrects Bravo's source only.
	res, err = o.ImportReturns(ctx, bytes.NewReader(nocsFile(t, []noc{{nocEntry{trace, "C01", &nacha.CorrectedData{AccountNumber: "000222222299"}}, bravoSent}})))
	if err != nil || res.ChangesApplied != 1 {
		t.Fatalf("Bravo's NOC = %+v, %v", res, err)
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+bravoSrc, bravo)); s["last_four"] != "2299" {
		t.Errorf("Bravo's source after its NOC = %s", th.MustJSON(s))
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+alphaSrc, alpha)); s["last_four"] != "1111" {
		t.Errorf("Alpha's source after Bravo's NOC = %s", th.MustJSON(s))
	}

	// Two entries of Alpha's with the same trace, amount and account:
	// ambiguous, applied to neither, then dismissed.
	h.Clock.Advance(24 * time.Hour)
	wrap()
	first := pay(alpha, alphaSrc, "7.00")
	h.Clock.Advance(24 * time.Hour)
	wrap()
	second := pay(alpha, alphaSrc, "7.00")
	trace, sevenSent := h.sentPayment(t, second)
	res, err = o.ImportReturns(ctx, bytes.NewReader(returnsFile(t, []ret{{trace, "R02", sevenSent}})))
	if err != nil || res.Ambiguous != 1 || res.Applied != 0 {
		t.Fatalf("ambiguous return = %+v, %v", res, err)
	}
	for _, id := range []string{first, second} {
		if got := status(alpha, id); strings.HasPrefix(got, "failed") {
			t.Errorf("payment %s = %s after an ambiguous return", id, got)
		}
	}
	open, err = o.UnmatchedAnswers(ctx, ach.AnswerOpen, 10)
	if err != nil || len(open) != 1 || open[0].Reason != ach.ReasonAmbiguous {
		t.Fatalf("open answers = %+v, %v", open, err)
	}
	if err := o.DismissAnswer(ctx, open[0].ID, "the bank withdrew it", audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}
	all, err := o.UnmatchedAnswers(ctx, "", 10)
	if err != nil || len(all) != 2 || all[1].Status != ach.AnswerDismissed || all[1].Note != "the bank withdrew it" || all[1].ResolvedBy != "ops" || all[0].PaymentID != bravoPay {
		t.Errorf("answers after the operator = %+v, %v", all, err)
	}
	if o.OpenAnswers() != 0 {
		t.Errorf("open answers gauge = %d, want 0", o.OpenAnswers())
	}
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
					n, err := tx.NextTraceSequence(ctx, "12104288")
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
