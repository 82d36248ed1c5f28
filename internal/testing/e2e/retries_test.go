package e2e_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// entriesOf returns, across files, the entries of cents with their batch.
func entriesOf(files map[string]*nacha.File, cents int) []struct {
	b nacha.Batcher
	e *nacha.EntryDetail
} {
	var out []struct {
		b nacha.Batcher
		e *nacha.EntryDetail
	}
	for _, f := range files {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if e.Amount == cents {
					out = append(out, struct {
						b nacha.Batcher
						e *nacha.EntryDetail
					}{b, e})
				}
			}
		}
	}
	return out
}

// TestACHNetworkRetryAndReversalGoInTheNextFile: a consumer's debit comes
// back R01 from the network and is imported; its retry goes in the next
// file in a RETRY PYMT batch with the original's amount, receiver name and
// Individual Identification Number; a credit of the first file reversed
// goes in that file as a debit of the same amount, account and
// identification, described REVERSAL; each is in the next file once, and
// the reversal is refused once the fifth banking day has passed.
func TestACHNetworkRetryAndReversalGoInTheNextFile(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	poor := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123450001")))["funding_source_id"].(string)
	clean := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456789")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(poor, `"25.00"`)))["payment_id"].(string)
	credit := th.WantOK(t, h.Post("/v2/payments", n.key, th.PaymentBody(clean, `"30.00"`, "credit")))["payment_id"].(string)
	late := th.WantOK(t, h.Post("/v2/payments", n.key, th.PaymentBody(clean, `"31.00"`, "credit")))["payment_id"].(string)
	th.WantError(t, h.Post("/v2/payments/"+credit+"/reverse", n.key, `{"reason":"duplicate"}`), http.StatusConflict, "conflict") // not yet sent
	// Monday 2026-11-02: the effective (settlement) date is Tuesday 11-03.
	n.originate(t)
	first := readACH(t, n.outbox)

	n.step(t, "2026-11-03")
	h.Clock.Set(time.Date(2026, 11, 5, 15, 0, 0, 0, time.UTC)) // Thursday
	if _, res := n.step(t, "2026-11-05"); res.Applied != 1 {
		t.Fatalf("import of the R01 return: %+v", res)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit, n.key)); p["status"] != "failed" || p["failure_code"] != "R01" {
		t.Fatalf("debit after the return = %s", th.MustJSON(p))
	}
	retry := th.WantOK(t, h.Post("/v2/payments/"+debit+"/retry", n.key, ""))
	if retry["retry_of"] != debit || retry["attempt"] != float64(2) || retry["mandate_id"] == nil {
		t.Fatalf("retry = %s", th.MustJSON(retry))
	}
	reversed := th.WantOK(t, h.Post("/v2/payments/"+credit+"/reverse", n.key, `{"reason":"duplicate"}`))
	rev, _ := reversed["reversal"].(map[string]any)
	if rev == nil {
		t.Fatalf("reversed credit = %s", th.MustJSON(reversed))
	}

	// The fifth banking day after 11-03 is Tuesday 11-10, when the next
	// file leaves; Wednesday 11-11 is Veterans Day, so the sixth is
	// Thursday 11-12.
	h.Clock.Set(time.Date(2026, 11, 10, 15, 0, 0, 0, time.UTC))
	before := len(first)
	n.originate(t)
	h.Clock.Set(time.Date(2026, 11, 12, 15, 0, 0, 0, time.UTC))
	th.WantError(t, h.Post("/v2/payments/"+late+"/reverse", n.key, `{"reason":"wrong_amount"}`), http.StatusConflict, "reversal_window_closed")

	files := readACH(t, n.outbox)
	if len(files) != before+1 {
		t.Fatalf("%d files, want %d", len(files), before+1)
	}
	var second map[string]*nacha.File
	for name, f := range files {
		if _, ok := first[name]; !ok {
			second = map[string]*nacha.File{name: f}
		}
	}
	orig := entriesOf(first, 2500)
	again := entriesOf(second, 2500)
	if len(orig) != 1 || len(again) != 1 {
		t.Fatalf("entries of 25.00: %d in the first file, %d in the second; want 1 and 1", len(orig), len(again))
	}
	o, r := orig[0], again[0]
	if r.b.GetHeader().CompanyEntryDescription != ach.DescriptionRetry || r.b.GetHeader().StandardEntryClassCode != o.b.GetHeader().StandardEntryClassCode ||
		r.e.IndividualName != o.e.IndividualName || r.e.IdentificationNumber != o.e.IdentificationNumber ||
		r.e.TransactionCode != o.e.TransactionCode || r.e.DFIAccountNumber != o.e.DFIAccountNumber {
		t.Errorf("retry entry %q %q %q %d in %+v; original %q %q %q %d in %+v", r.e.IndividualName, r.e.IdentificationNumber, r.e.DFIAccountNumber,
			r.e.TransactionCode, r.b.GetHeader(), o.e.IndividualName, o.e.IdentificationNumber, o.e.DFIAccountNumber, o.e.TransactionCode, o.b.GetHeader())
	}
	co, cr := entriesOf(first, 3000), entriesOf(second, 3000)
	if len(co) != 1 || len(cr) != 1 {
		t.Fatalf("entries of 30.00: %d in the first file, %d in the second; want 1 and 1", len(co), len(cr))
	}
	if c, d := co[0], cr[0]; d.b.GetHeader().CompanyEntryDescription != ach.DescriptionReversal || d.e.CreditOrDebit() != "D" ||
		c.e.CreditOrDebit() != "C" || d.b.GetHeader().StandardEntryClassCode != c.b.GetHeader().StandardEntryClassCode ||
		d.e.IndividualName != c.e.IndividualName || d.e.IdentificationNumber != c.e.IdentificationNumber ||
		d.e.DFIAccountNumber != c.e.DFIAccountNumber || d.e.RDFIIdentification != c.e.RDFIIdentification {
		t.Errorf("reversal entry %+v in %+v; credit %+v in %+v", d.e, d.b.GetHeader(), c.e, c.b.GetHeader())
	}
	if written, err := n.o.Run(context.Background()); err != nil || len(written) != 0 {
		t.Errorf("a third run wrote %v, %v; want nothing", written, err)
	}
	if names, _ := filepath.Glob(filepath.Join(n.outbox, "*.ach")); len(names) != before+1 {
		t.Errorf("outbox holds %d files", len(names))
	}
	// The retry is the original's one pending re-presentment: retrying the
	// original again is refused.
	th.WantError(t, h.Post("/v2/payments/"+debit+"/retry", n.key, ""), http.StatusConflict, "retry_not_allowed")
}
