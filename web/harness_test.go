package web_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	th "github.com/fundsource/fundsource/internal/testing/harness"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, stopBrowser) }

// harness is the shared engine-on-a-database harness; web's tests add
// their own helpers (pages, forms, the live server) to it.
type harness struct{ *th.Harness }

func newHarness(t testing.TB, opts ...th.Option) *harness {
	t.Helper()
	return &harness{th.New(t, opts...)}
}

// newHarnessOn runs the engine on db, whose connection string is url ("" if none).
func newHarnessOn(t testing.TB, db *postgres.DB, url string, opts ...th.Option) *harness {
	t.Helper()
	return &harness{th.NewOn(t, db, url, opts...)}
}
