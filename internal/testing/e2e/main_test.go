// Package e2e_test holds the flows that cross packages: the webhook
// dispatcher's leases and deliveries, ACH origination and returns (also
// against the local ACH network of internal/lab/achnet), the receiver's
// view of the events, and the round trips one request costs, all through
// the real engine on a real PostgreSQL.
package e2e_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// harness is the shared harness, with the flows' own helpers.
type harness struct{ *th.Harness }

func newHarness(t testing.TB, opts ...th.Option) *harness {
	t.Helper()
	return &harness{th.New(t, opts...)}
}

// newHarnessOn runs the engine on db, whose connection string is url.
func newHarnessOn(t testing.TB, db *postgres.DB, url string, opts ...th.Option) *harness {
	t.Helper()
	return &harness{th.NewOn(t, db, url, opts...)}
}
