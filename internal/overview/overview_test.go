package overview_test

import (
	"context"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/overview"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestStatsCoverEveryDayAndBothMethods: with nothing yet, the overview
// still has 30 days, oldest first and ending today, and both funnels.
func TestStatsCoverEveryDayAndBothMethods(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	st, err := f.Overview.Stats(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	today := f.Clock.Now().UTC().Truncate(24 * time.Hour)
	if len(st.Days) != overview.Days || !st.Days[len(st.Days)-1].Date.Equal(today) || !st.Days[0].Date.Equal(today.AddDate(0, 0, -29)) {
		t.Fatalf("days: %d from %v to %v", len(st.Days), st.Days[0].Date, st.Days[len(st.Days)-1].Date)
	}
	for _, d := range st.Days {
		if d.HasWebhook || d.HasDebits {
			t.Errorf("%v has data", d.Date)
		}
	}
	if len(st.Funnels) != 2 || st.Funnels[0].Method != overview.MicroDeposits || st.Funnels[1].Method != overview.Instant {
		t.Errorf("funnels: %+v", st.Funnels)
	}
	// A source verified at once (third-party path) and one only created.
	cus := f.Customer(scope)
	f.VerifiedSource(scope, cus, "123456789")
	f.Source(scope, cus, "987654321")
	st, err = f.Overview.Stats(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if md, in := st.Funnels[0], st.Funnels[1]; md.Created != 1 || md.Initiated != 0 || md.Verified != 0 ||
		in.Created != 1 || in.Initiated != 1 || in.Verified != 1 || in.MedianToVerify != 0 {
		t.Errorf("funnels: %+v", st.Funnels)
	}
}
