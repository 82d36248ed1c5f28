package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserDashboardTablesFitTheirCards: a sandbox funding source's page
// (payments with their return-code selects, the deposit-return select),
// the payment list and Home's return-rate table stay inside their cards at
// 1280 and 390 px, and every column of the return-rate table shows.
func TestBrowserDashboardTablesFitTheirCards(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
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
			tb := webtest.NewTab(t, webtest.WithViewport(width, 900), webtest.WithoutJavaScript)
			tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
			for _, path := range []string{"/dashboard/funding-sources/" + src, "/dashboard/funding-sources/" + pending,
				"/dashboard/payments", "/dashboard"} {
				tb.Open(srv.URL + path)
				tb.InsideCards()
				tb.FitsWidth()
			}
			// Home's return-rate table: its Status column is in view.
			status := tb.Page.Locator("#return-rates tbody tr").First().Locator("td").Last()
			box, err := status.BoundingBox()
			if err != nil || box == nil {
				tb.Fatalf("the return-rate table's status cell: %v", err)
			}
			wrap, err := tb.Page.Locator("#return-rates .table-wrap").BoundingBox()
			if err != nil || wrap == nil {
				tb.Fatal(err)
			}
			if box.X+box.Width > wrap.X+wrap.Width+0.5 {
				tb.Errorf("the return-rate table's Status column ends at %.0f px, past its card at %.0f px", box.X+box.Width, wrap.X+wrap.Width)
			}
			if visible, _ := status.IsVisible(); !visible {
				tb.Error("the return-rate table's Status column is hidden")
			}
		})
	}
}
