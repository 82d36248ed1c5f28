package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

func chain(t *testing.T, n int) ([]Event, int64, []byte) {
	t.Helper()
	var evs []Event
	var seq int64
	var head []byte
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	for i := range n {
		e := New(In(tenant.Scope{MerchantID: "mer_1", Env: tenant.Sandbox}, WebhookURLSet, APIKey("key_1", "203.0.113.7"),
			map[string]string{"url_host": "hooks.example.com", "n": string(rune('a' + i))}), seq, head, at.Add(time.Duration(i)*time.Second))
		evs = append(evs, e)
		seq, head = e.Seq, e.Hash
	}
	return evs, seq, head
}

func TestCanonical(t *testing.T) {
	e := Event{ID: "aud_x", MerchantID: "mer_1", Seq: 3, Action: SettingsChanged, Actor: DashboardUser("mer_1", "::1"),
		CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 5000, time.FixedZone("x", 3600)), Details: map[string]string{"z": "<&>", "a": "1"}}
	want := `{"action":"settings.changed","actor":{"type":"dashboard_user","id":"mer_1","ip":"::1"},` +
		`"created_at":"2026-03-01T11:00:00.000005Z","details":{"a":"1","z":"<&>"},"environment":null,"id":"aud_x","merchant_id":"mer_1","seq":3}`
	if got := string(Canonical(e)); got != want {
		t.Fatalf("Canonical =\n%s\nwant\n%s", got, want)
	}
	e.Env = tenant.Production
	if !strings.Contains(string(Canonical(e)), `"environment":"production"`) {
		t.Fatalf("environment missing: %s", Canonical(e))
	}
}

func TestNewTruncatesToMicroseconds(t *testing.T) {
	e := New(Account("mer_1", DashboardSignedIn, DashboardUser("mer_1", "::1"), nil), 0, nil, time.Unix(0, 1_999))
	if e.CreatedAt.Nanosecond() != 1000 || e.Seq != 1 || e.Details == nil || !strings.HasPrefix(e.ID, "aud_") {
		t.Fatalf("event = %+v", e)
	}
	if !bytes.Equal(e.Hash, Link(nil, e)) {
		t.Fatal("first event does not chain from no bytes")
	}
}

func TestVerify(t *testing.T) {
	t.Run("intact", func(t *testing.T) {
		evs, seq, head := chain(t, 5)
		if b := Verify(evs, seq, head); b != nil {
			t.Fatal(b)
		}
		if b := Verify(nil, 0, nil); b != nil {
			t.Fatal(b)
		}
	})
	for _, c := range []struct {
		name    string
		tamper  func(evs []Event) []Event
		headSeq func(n int64) int64
		seq     int64
		id      func(evs []Event) string
	}{
		{"changed details", func(evs []Event) []Event { evs[2].Details = map[string]string{"url_host": "evil.example"}; return evs }, nil, 3, func(e []Event) string { return e[2].ID }},
		{"changed actor ip", func(evs []Event) []Event { evs[1].Actor.IP = "198.51.100.1"; return evs }, nil, 2, func(e []Event) string { return e[1].ID }},
		{"removed", func(evs []Event) []Event { return append(evs[:1:1], evs[2:]...) }, nil, 2, func(e []Event) string { return e[2].ID }},
		{"swapped sequence numbers", func(evs []Event) []Event {
			evs[1].Seq, evs[3].Seq = 4, 2
			evs[1], evs[3] = evs[3], evs[1]
			return evs
		}, nil, 2, func(e []Event) string { return e[3].ID }},
		{"newest removed", func(evs []Event) []Event { return evs[:4] }, nil, 5, func([]Event) string { return "" }},
		{"appended outside", func(evs []Event) []Event { return evs }, func(n int64) int64 { return n - 1 }, 5, func(e []Event) string { return e[4].ID }},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, seq, head := chain(t, 5)
			orig := append([]Event(nil), evs...)
			got := c.tamper(evs)
			if c.headSeq != nil {
				seq = c.headSeq(seq)
			}
			b := Verify(got, seq, head)
			if b == nil {
				t.Fatal("Verify found nothing")
			}
			if b.Seq != c.seq || b.EventID != c.id(orig) {
				t.Fatalf("break = %v; want seq %d id %q", b, c.seq, c.id(orig))
			}
		})
	}
}
