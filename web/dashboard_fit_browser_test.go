package web_test

import (
	"fmt"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// insideCards fails for every table and select of the page whose box
// passes the right or left edge of its card (the table's scrolling
// region, or the card or section around a select), and for a payment id
// link that wraps onto more than two lines.
func (tb *tab) insideCards() {
	tb.t.Helper()
	for _, sel := range []string{"main table", "main select"} {
		all, err := tb.page.Locator(sel).All()
		if err != nil {
			tb.t.Fatal(err)
		}
		for i, el := range all {
			if visible, _ := el.IsVisible(); !visible {
				continue // a chart's table for screen readers, a closed section
			}
			card := el.Locator(`xpath=ancestor::*[contains(concat(' ', @class, ' '), ' table-wrap ') or contains(concat(' ', @class, ' '), ' card ') or self::section or self::main][1]`)
			box, err := el.BoundingBox()
			if err != nil || box == nil {
				tb.t.Fatalf("%s #%d: no box (%v)", sel, i, err)
			}
			cb, err := card.BoundingBox()
			if err != nil || cb == nil {
				tb.t.Fatalf("%s #%d: no card box (%v)", sel, i, err)
			}
			if box.X < cb.X-0.5 || box.X+box.Width > cb.X+cb.Width+0.5 {
				id, _ := el.GetAttribute("id")
				tb.t.Errorf("%s: %s #%d (%s) spans %.0f–%.0f px, its card %.0f–%.0f px", tb.page.URL(), sel, i, id,
					box.X, box.X+box.Width, cb.X, cb.X+cb.Width)
			}
		}
	}
	lines := tb.eval(`Math.max(0, ...[...document.querySelectorAll('main a[href*="/dashboard/payments/pay_"]')].map(a => a.getClientRects().length))`)
	if n, _ := lines.(int); n > 2 {
		tb.t.Errorf("%s: a payment id wraps onto %d lines", tb.page.URL(), n)
	}
}

// TestBrowserDashboardTablesFitTheirCards: a sandbox funding source's page
// (payments with their return-code selects, the deposit-return select),
// the payment list and Home's return-rate table stay inside their cards at
// 1280 and 390 px, and every column of the return-rate table shows.
func TestBrowserDashboardTablesFitTheirCards(t *testing.T) {
	h := newHarness(t)
	srv := h.live()
	m := h.Merchant("Acme Books")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	src := h.VerifiedSource(key, user, "444455556666")
	for _, amount := range []string{`"25.00"`, `"26.00"`} {
		th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, amount, "debit")))
	}
	returned := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(src, `"5.00"`, "debit")))["payment_id"].(string)
	th.WantOK(t, h.Post("/v2/sandbox/payments/"+returned+"/return", key, `{"code":"R01"}`))
	pending := h.Source(key, user, "444455557777")
	th.WantOK(t, h.Initiate(key, pending))

	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := newTab(t, withViewport(width, 900), withoutJavaScript)
			tb.signIn(srv.URL, m.Merchant.Email, "correct horse battery")
			for _, path := range []string{"/dashboard/funding-sources/" + src, "/dashboard/funding-sources/" + pending,
				"/dashboard/payments", "/dashboard"} {
				tb.open(srv.URL + path)
				tb.insideCards()
				tb.fitsWidth()
			}
			// Home's return-rate table: its Status column is in view.
			status := tb.page.Locator("#return-rates tbody tr").First().Locator("td").Last()
			box, err := status.BoundingBox()
			if err != nil || box == nil {
				t.Fatalf("the return-rate table's status cell: %v", err)
			}
			wrap, err := tb.page.Locator("#return-rates .table-wrap").BoundingBox()
			if err != nil || wrap == nil {
				t.Fatal(err)
			}
			if box.X+box.Width > wrap.X+wrap.Width+0.5 {
				t.Errorf("the return-rate table's Status column ends at %.0f px, past its card at %.0f px", box.X+box.Width, wrap.X+wrap.Width)
			}
			if visible, _ := status.IsVisible(); !visible {
				t.Error("the return-rate table's Status column is hidden")
			}
		})
	}
}
