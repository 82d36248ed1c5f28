package e2e_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// goodsDebit is th.DebitBody for a debit for goods, which an individual's
// WEB debit describes PURCHASE.
func goodsDebit(src, amount string) string {
	return strings.Replace(th.DebitBody(src, amount), `"direction":"debit"`, `"direction":"debit","purpose":"goods"`, 1)
}

// batchOf finds the batch of the file holding the entry of amount cents.
func batchOf(t *testing.T, files map[string]*nacha.File, cents int) (nacha.Batcher, *nacha.EntryDetail) {
	t.Helper()
	for _, f := range files {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if e.Amount == cents {
					return b, e
				}
			}
		}
	}
	t.Fatalf("no entry of %d cents in %d files", cents, len(files))
	return nil, nil
}

// TestOriginationClassifiesBusinessDebitsAndSubscriptionRetries: a
// business customer's debit goes out CCD; a subscription's debit WEB
// PURCHASE with payment type R, and its re-presentment after an R01 in a
// RETRY PYMT batch with the same SEC code, payment type and amount.
func TestOriginationClassifiesBusinessDebitsAndSubscriptionRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02
	_, key, _ := liveMerchant(t, h)
	business := th.WantOK(t, h.Post("/v2/customers", key,
		`{"first_name":"Bea","last_name":"Baker","email":"bea@example.com","business_name":"Bea's Bakery LLC"}`))["user_id"].(string)
	bizSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(business, "021000021", "000111222333")))["funding_source_id"].(string)
	bizDebit := th.WantOK(t, h.Post("/v2/payments", key, th.DebitBody(bizSrc, `"41.00"`)))
	if mandate := th.WantOK(t, h.Get("/v2/mandates/"+bizDebit["mandate_id"].(string), key)); mandate["sec_code"] != "CCD" {
		t.Errorf("business mandate = %s", th.MustJSON(mandate))
	}
	consumer := h.Customer(key)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(consumer, "021000021", "000444555666")))["funding_source_id"].(string)
	sub := th.WantOK(t, h.Post("/v2/subscriptions", key,
		`{"funding_source_id":"`+src+`","amount":"19.99","interval":"monthly","start_date":"2026-11-02","purpose":"goods","authorization":`+th.Authorization+`}`))["subscription_id"].(string)
	if n, err := h.Payments.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("RunDue = %d, %v", n, err)
	}

	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if written, err := o.Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("Run = %v, %v", written, err)
	}
	files := readACH(t, dir)
	b, e := batchOf(t, files, 4100)
	if hd := b.GetHeader(); hd.StandardEntryClassCode != "CCD" || hd.CompanyEntryDescription != "PAYMENT" || hd.ServiceClassCode != nacha.DebitsOnly {
		t.Errorf("business debit's batch = %+v", hd)
	}
	if e.TransactionCode != nacha.CheckingDebit {
		t.Errorf("business debit's entry = %+v", e)
	}
	b, e = batchOf(t, files, 1999)
	if hd := b.GetHeader(); hd.StandardEntryClassCode != "WEB" || hd.CompanyEntryDescription != "PURCHASE" {
		t.Errorf("subscription debit's batch = %+v", hd)
	}
	if e.PaymentTypeField() != "R" {
		t.Errorf("subscription debit's payment type = %q, want R", e.PaymentTypeField())
	}
	companyName := b.GetHeader().CompanyName

	// The bank returns it R01: presented again on the next business day.
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(h.returnFile(t, map[string]string{e.TraceNumber: "R01"})))
	if err != nil || res.Applied != 1 {
		t.Fatalf("ImportReturns = %+v, %v", res, err)
	}
	if s := th.WantOK(t, h.Get("/v2/subscriptions/"+sub, key)); s["retry_date"] != "2026-11-03" || s["status"] != "active" {
		t.Fatalf("subscription after R01 = %s", th.MustJSON(s))
	}
	h.Clock.Advance(24 * time.Hour)
	if n, err := h.Payments.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("RunDue on the retry day = %d, %v", n, err)
	}
	retryDir := t.TempDir()
	if written, err := h.originator(achConfig(retryDir)).Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("retry Run = %v, %v", written, err)
	}
	files = readACH(t, retryDir)
	b, e = batchOf(t, files, 1999)
	hd := b.GetHeader()
	if hd.StandardEntryClassCode != "WEB" || hd.CompanyEntryDescription != "RETRY PYMT" || hd.CompanyName != companyName || hd.ServiceClassCode != nacha.DebitsOnly {
		t.Errorf("re-presentment's batch = %+v", hd)
	}
	if e.PaymentTypeField() != "R" || e.TransactionCode != nacha.CheckingDebit {
		t.Errorf("re-presentment's entry = %+v (payment type %q)", e, e.PaymentTypeField())
	}
	if c := b.GetControl(); c.TotalDebitEntryDollarAmount != 1999 || c.EntryAddendaCount != 1 {
		t.Errorf("re-presentment's batch control = %+v", c)
	}
}

// TestMandateDebitKeepsTheMandatesClass: an individual's debit is
// authorized by a WEB mandate; the source's account_holder_type cannot
// change while the mandate is active (409 mandates_active); a source whose
// type changed anyway (a database from before the rule) still has its
// debit go out WEB, with the 60-day window for unauthorized returns; once
// the mandate is revoked the change is allowed.
func TestMandateDebitKeepsTheMandatesClass(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02
	_, key, _ := liveMerchant(t, h)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000444555666")))["funding_source_id"].(string)
	debit := th.WantOK(t, h.Post("/v2/payments", key, goodsDebit(src, `"42.00"`)))
	mandate := debit["mandate_id"].(string)
	if m := th.WantOK(t, h.Get("/v2/mandates/"+mandate, key)); m["sec_code"] != "WEB" {
		t.Fatalf("mandate = %s", th.MustJSON(m))
	}

	r := h.Post("/v2/funding-source/"+src, key, `{"account_holder_type":"company"}`)
	th.WantError(t, r, 409, "mandates_active")
	if p := r.JSON(t)["error"].(map[string]any)["param"]; p != "account_holder_type" {
		t.Errorf("param = %v, want account_holder_type", p)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+src, key))["account_holder_type"]; got != "individual" {
		t.Errorf("account_holder_type after the refusal = %v", got)
	}

	// A database upgraded from before the rule may hold a flipped source.
	if _, err := h.SQL().Exec(`UPDATE funding_sources SET account_holder_type = 'company' WHERE id = $1`, src); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if written, err := h.originator(achConfig(dir)).Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("Run = %v, %v", written, err)
	}
	b, e := batchOf(t, readACH(t, dir), 4200)
	if hd := b.GetHeader(); hd.StandardEntryClassCode != "WEB" || hd.CompanyEntryDescription != "PURCHASE" {
		t.Errorf("the mandate's debit went out %s %q, want WEB PURCHASE", hd.StandardEntryClassCode, hd.CompanyEntryDescription)
	}
	if e.PaymentTypeField() != "S" {
		t.Errorf("payment type = %q, want S", e.PaymentTypeField())
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+debit["payment_id"].(string), key)); p["unauthorized_return_window_closes_at"] == nil {
		t.Errorf("the WEB debit lost its unauthorized-return window: %s", th.MustJSON(p))
	}

	if _, err := h.SQL().Exec(`UPDATE funding_sources SET account_holder_type = 'individual' WHERE id = $1`, src); err != nil {
		t.Fatal(err)
	}
	th.WantOK(t, h.Post("/v2/mandates/"+mandate+"/revoke", key, `{}`))
	if got := th.WantOK(t, h.Post("/v2/funding-source/"+src, key, `{"account_holder_type":"company"}`))["account_holder_type"]; got != "company" {
		t.Errorf("account_holder_type once the mandate is revoked = %v", got)
	}
}
