// Package webtest holds what the HTTP tests of web and its surfaces
// (web/api, web/dashboard, web/hosted) share: the engine harness with
// page and form helpers, a cookie-keeping dashboard client, the hosted
// page's setup, a provider-simulator linking harness, and Chromium tabs
// through playwright-go (one browser per test process; StopBrowser ends
// it from TestMain). It is a test aid, never linked into the product.
package webtest

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/calendar"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// Harness is the shared engine-on-a-database harness; web's tests add
// their own helpers (pages, forms, the live server) to it.
type Harness struct{ *th.Harness }

// NewHarness returns the engine on a fresh migrated database.
func NewHarness(t testing.TB, opts ...th.Option) *Harness {
	t.Helper()
	return &Harness{th.New(t, opts...)}
}

// NewHarnessOn runs the engine on db, whose connection string is url ("" if none).
func NewHarnessOn(t testing.TB, db *postgres.DB, url string, opts ...th.Option) *Harness {
	t.Helper()
	return &Harness{th.NewOn(t, db, url, opts...)}
}

// Ada is the body of a customer creation.
const Ada = `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`

// SubscriptionBody is the body of a subscription creation.
func SubscriptionBody(src, amount, interval, start string) string {
	return `{"funding_source_id":"` + src + `","amount":"` + amount + `","interval":"` + interval + `","start_date":"` + start + `"}`
}

// SettleSandbox lets the sandbox's settle delay pass and settles what is due.
func SettleSandbox(t *testing.T, h *Harness) {
	t.Helper()
	h.Clock.Advance(h.Svc.Config.PaymentSettleDelay)
	if _, err := h.Svc.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Eastern is a wall-clock time in US Eastern, the zone of the ACH windows.
func Eastern(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, calendar.Eastern)
}
