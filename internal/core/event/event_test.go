package event_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

func TestValidFilterTakesTypesAndGroups(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   bool
	}{
		{"customer.created", true},
		{"funding_source.verified", true},
		{"funding_source.*", true},
		{"payment.*", true},
		{"webhook.*", true},
		{"customer.deleted", false},
		{"funding_source.", false},
		{"*", false},
		{"funding.*", false},
		{"", false},
		{"Customer.Created", false},
	} {
		if got := event.ValidFilter(c.filter); got != c.want {
			t.Errorf("ValidFilter(%q) = %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestTypesAreUniqueAndEachIsAFilter(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range event.Types {
		if seen[typ] {
			t.Errorf("%s listed twice", typ)
		}
		seen[typ] = true
		if !event.ValidFilter(typ) {
			t.Errorf("ValidFilter(%q) = false, want true", typ)
		}
	}
}

func TestEnvelopeCarriesLivemodeOfTheEnvironment(t *testing.T) {
	at := time.Date(2026, 11, 2, 10, 4, 5, 0, time.FixedZone("EST", -5*3600))
	for _, c := range []struct {
		env  tenant.Environment
		want bool
	}{{tenant.Sandbox, false}, {tenant.Production, true}} {
		e := event.New(tenant.Scope{MerchantID: "m_1", Env: c.env}, event.CustomerCreated, map[string]string{"user_id": "cus_1"}, at)
		if !strings.HasPrefix(e.ID, "evt_") {
			t.Errorf("id = %q, want evt_…", e.ID)
		}
		if e.CreatedAt.Location() != time.UTC || !e.CreatedAt.Equal(at) {
			t.Errorf("created_at = %v, want %v in UTC", e.CreatedAt, at)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"id": e.ID, "type": "customer.created", "created_at": "2026-11-02T15:04:05Z",
			"livemode": c.want, "data": map[string]any{"user_id": "cus_1"}}
		if len(got) != len(want) {
			t.Errorf("%s envelope has members %v, want %v", c.env, got, want)
		}
		for k, w := range want {
			if gb, wb := mustJSON(got[k]), mustJSON(w); gb != wb {
				t.Errorf("%s envelope %s = %s, want %s", c.env, k, gb, wb)
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAnEventOnAClockCarriesItInItsEnvelope: OnClock takes the clock of
// the context (not over one the event names already), and the envelope
// has test_clock and clock_time only then.
func TestAnEventOnAClockCarriesItInItsEnvelope(t *testing.T) {
	scope := tenant.Scope{MerchantID: "m_1", Env: tenant.Sandbox}
	at := time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC)
	clockAt := time.Date(2027, 3, 1, 9, 0, 0, 0, time.FixedZone("EST", -5*3600))
	e := event.New(scope, event.CustomerCreated, map[string]string{"user_id": "cus_1"}, at)
	if got := event.OnClock(context.Background(), e); got.TestClock != "" || !got.ClockTime.IsZero() {
		t.Errorf("off a clock: %+v", got)
	}
	b, _ := json.Marshal(e)
	if s := string(b); strings.Contains(s, "test_clock") || strings.Contains(s, "clock_time") {
		t.Errorf("envelope off a clock: %s", s)
	}
	ctx := testclock.With(context.Background(), testclock.Clock{ID: "clk_1", Now: clockAt})
	on := event.OnClock(ctx, e)
	if on.TestClock != "clk_1" || !on.ClockTime.Equal(clockAt) || on.ClockTime.Location() != time.UTC {
		t.Errorf("on a clock: %+v", on)
	}
	other := testclock.With(context.Background(), testclock.Clock{ID: "clk_2", Now: at})
	if again := event.OnClock(other, on); again.TestClock != "clk_1" {
		t.Errorf("an event on a clock moved to %s", again.TestClock)
	}
	var got map[string]any
	b, _ = json.Marshal(on)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["test_clock"] != "clk_1" || got["clock_time"] != "2027-03-01T14:00:00Z" || got["created_at"] != "2026-11-02T15:04:05Z" {
		t.Errorf("envelope on a clock: %s", b)
	}
}
