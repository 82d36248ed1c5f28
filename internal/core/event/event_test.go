package event_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
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
