package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// TestDashboardDownloadsTheDaysSettlements: the payments page offers the
// day's settlements report, which downloads as the API's CSV; a bad date
// is refused.
func TestDashboardDownloadsTheDaysSettlements(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	_, debit, _, _, _ := activity(t, h, key)
	h.Clock.Advance(5 * time.Second)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	today := th.WantOK(t, h.Get("/v2/payments/"+debit, key))["settlement_date"].(string)
	page := webtest.WantPage(t, d.Get("/dashboard/payments"), http.StatusOK, `action="/dashboard/settlements.csv"`, `value="`+today+`"`)
	if !strings.Contains(page, "Download settlements (CSV)") {
		t.Error("the payments page has no settlements download")
	}
	r := d.Get("/dashboard/settlements.csv?date=" + today)
	if r.Code != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(r.Header.Get("Content-Disposition"), "settlements-"+today+".csv") {
		t.Fatalf("download: %d %v", r.Code, r.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	found := false
	for _, row := range rows[1:] {
		found = found || (row[0] == debit && row[2] == "12.34")
	}
	if err != nil || rows[0][0] != "payment_id" || !found {
		t.Errorf("CSV = %q, %v", rows, err)
	}
	if r := d.Get("/dashboard/settlements.csv?date=yesterday"); r.Code != http.StatusBadRequest {
		t.Errorf("a bad date: %d", r.Code)
	}
}
