package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// clockBalances is GET /v2/balances of one clock's money ("" for the wall
// clock's).
func clockBalances(t *testing.T, h *webtest.Harness, key, clock string) map[string]any {
	t.Helper()
	path := "/v2/balances"
	if clock != "" {
		path += "?test_clock=" + clock
	}
	return th.WantOK(t, h.Get(path, key))
}

// wantFigures checks balances' pending_debits, at_risk_debits and
// available.
func wantFigures(t *testing.T, what string, b map[string]any, pending, atRisk, available string) {
	t.Helper()
	if b["pending_debits"] != pending || b["at_risk_debits"] != atRisk || b["available"] != available {
		t.Errorf("%s: %s, want pending_debits %s, at_risk_debits %s, available %s", what, th.MustJSON(b), pending, atRisk, available)
	}
}

// ledgerPayments are the payments of the lines GET /v2/balance-transactions
// lists of one clock ("" for the wall clock's).
func ledgerPayments(t *testing.T, h *webtest.Harness, key, clock string) []string {
	t.Helper()
	path := "/v2/balance-transactions?limit=100"
	if clock != "" {
		path += "&test_clock=" + clock
	}
	return dataPayments(t, h, key, path)
}

// dataPayments are the payment_id of each row of a list's data.
func dataPayments(t *testing.T, h *webtest.Harness, key, path string) []string {
	t.Helper()
	var out []string
	for _, row := range th.WantOK(t, h.Get(path, key))["data"].([]any) {
		out = append(out, row.(map[string]any)["payment_id"].(string))
	}
	return out
}

// TestAClocksBalancesAreItsOwnOnItsDay: a clock's customer's debit counts
// in the clock's balances, ledger and settlement report only, never the wall clock's or
// another clock's; processed, it is at risk through the last day of its
// unauthorized-return window on the clock's calendar, and not on the next
// banking day, while the wall clock's today is months before.
func TestAClocksBalancesAreItsOwnOnItsDay(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // wall clock: Monday 2026-11-02
	key := h.Merchant("Acme").Sandbox.SecretKey
	wallSrc := h.VerifiedSource(key, h.Customer(key), "123456789")
	wallDebit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(wallSrc, `"10.00"`, "debit")))["payment_id"].(string)
	h.Clock.Advance(10 * time.Second)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Wednesday 2027-03-03, 09:00 Eastern: the debit leaves in the 09:45
	// window, effective (settled) Thursday 03-04, processed at noon UTC
	// Monday 03-08; its unauthorized-return window's last day is Monday
	// 2027-05-03, and Tuesday 05-04 is the next banking day.
	start := time.Date(2027, 3, 3, 14, 0, 0, 0, time.UTC)
	r := &rehearsal{t: t, h: h, key: key, id: newClock(t, h, key, start)}
	r.user = th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","test_clock":"`+r.id+`"}`))["user_id"].(string)
	debit := r.debit(h.VerifiedSource(key, r.user, "555555555"), "25.00")
	other := newClock(t, h, key, start)
	otherUser := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"Bo","last_name":"L","email":"bo@example.com","test_clock":"`+other+`"}`))["user_id"].(string)
	otherDebit := th.WantOK(t, h.Post("/v2/payments", key, th.PaymentBody(h.VerifiedSource(key, otherUser, "666666666"), `"5.00"`, "debit")))["payment_id"].(string)

	wall := func(what string) {
		t.Helper()
		wantFigures(t, what+": the wall clock's balances", clockBalances(t, h, key, ""), "0.00", "10.00", "10.00")
	}
	wall("both clocks' debits pending")
	wantFigures(t, "the clock's pending debit", clockBalances(t, h, key, r.id), "25.00", "0.00", "0.00")
	wantFigures(t, "the other clock's pending debit", clockBalances(t, h, key, other), "5.00", "0.00", "0.00")
	for clock, want := range map[string]string{"": wallDebit, r.id: debit, other: otherDebit} {
		if got := ledgerPayments(t, h, key, clock); len(got) != 1 || got[0] != want {
			t.Errorf("the ledger of clock %q: lines of %v, want one of %s", clock, got, want)
		}
	}

	r.advance(time.Date(2027, 3, 8, 14, 0, 0, 0, time.UTC))
	p := r.payment(debit)
	if p["status"] != "processed" || p["settlement_date"] != "2027-03-04" || p["unauthorized_return_window_closes_at"] != "2027-05-04T03:59:59Z" {
		t.Fatalf("the clock's debit: %v settled %v, window closes %v; want processed, 2027-03-04, end of 2027-05-03 Eastern",
			p["status"], p["settlement_date"], p["unauthorized_return_window_closes_at"])
	}
	wantFigures(t, "the clock's processed debit", clockBalances(t, h, key, r.id), "0.00", "25.00", "25.00")
	wall("the clock's debit processed")
	// The settlement report of its settlement date is the clock's too.
	for clock, want := range map[string][]string{r.id: {debit}, other: nil, "": nil} {
		path := "/v2/reports/settlements?date=2027-03-04"
		if clock != "" {
			path += "&test_clock=" + clock
		}
		if got := dataPayments(t, h, key, path); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("the settlement report of 2027-03-04, clock %q: %v, want %v", clock, got, want)
		}
	}

	// 23:59 Eastern on the window's last day, then midnight: the next
	// banking day.
	r.advance(time.Date(2027, 5, 4, 3, 59, 0, 0, time.UTC))
	wantFigures(t, "the window's last day", clockBalances(t, h, key, r.id), "0.00", "25.00", "25.00")
	r.advance(time.Date(2027, 5, 4, 4, 0, 0, 0, time.UTC))
	wantFigures(t, "the next banking day", clockBalances(t, h, key, r.id), "0.00", "0.00", "25.00")
	wall("the clock's window closed")
	wantFigures(t, "the other clock, not advanced", clockBalances(t, h, key, other), "5.00", "0.00", "0.00")
}

// TestClockBalancesRefuseWhatIsNotTheMerchantsClock: the balances, the
// ledger and the settlement report of a clock take a sandbox key, one clock id, and a clock of the
// merchant's.
func TestClockBalancesRefuseWhatIsNotTheMerchantsClock(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	frozen := h.Clock.Now().Add(time.Hour).Truncate(time.Second)
	mine := newClock(t, h, key, frozen)
	theirs := newClock(t, h, h.Merchant("Other").Sandbox.SecretKey, frozen)
	live := h.Production(m).SecretKey
	for _, route := range []string{"/v2/balances?", "/v2/balance-transactions?limit=10&", "/v2/reports/settlements?date=2027-03-04&"} {
		for _, c := range []struct {
			key, query string
			status     int
			code       string
		}{
			{key, "test_clock=" + theirs, http.StatusNotFound, "test_clock_not_found"},
			{key, "test_clock=clk_" + strings.Repeat("a", 26), http.StatusNotFound, "test_clock_not_found"},
			{live, "test_clock=" + mine, http.StatusForbidden, "permission_denied"},
			{key, "test_clock=" + mine + "x", http.StatusBadRequest, "invalid_request"},
			{key, "test_clock=", http.StatusBadRequest, "invalid_request"},
			{key, "test_clock=" + mine + "&test_clock=" + mine, http.StatusBadRequest, "invalid_request"},
		} {
			resp := h.Get(route+c.query, c.key)
			th.WantError(t, resp, c.status, c.code)
			if e := resp.JSON(t)["error"].(map[string]any); c.status != http.StatusForbidden && e["param"] != "test_clock" {
				t.Errorf("%s%s: param %v, want test_clock", route, c.query, e["param"])
			}
		}
		th.WantOK(t, h.Get(route+"test_clock="+mine, key))
	}
}
