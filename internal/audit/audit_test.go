package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

var testKey = bytes.Repeat([]byte{7}, 32)

func chain(t *testing.T, n int) ([]Event, int64, []byte) {
	t.Helper()
	return chainFrom(t, nil, 0, nil, n, testKey)
}

// chainFrom appends n events under key (nil: unkeyed) to evs.
func chainFrom(t *testing.T, evs []Event, seq int64, head []byte, n int, key []byte) ([]Event, int64, []byte) {
	t.Helper()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	for i := range n {
		e := New(In(tenant.Scope{MerchantID: "mer_1", Env: tenant.Sandbox}, WebhookURLSet, APIKey("key_1", "203.0.113.7"),
			map[string]string{"url_host": "hooks.example.com", "n": string(rune('a' + i))}), seq, head, at.Add(time.Duration(i)*time.Second), key)
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
	e := New(Account("mer_1", DashboardSignedIn, DashboardUser("mer_1", "::1"), nil), 0, nil, time.Unix(0, 1_999), testKey)
	if e.CreatedAt.Nanosecond() != 1000 || e.Seq != 1 || e.Details == nil || !strings.HasPrefix(e.ID, "aud_") {
		t.Fatalf("event = %+v", e)
	}
	if !bytes.Equal(e.Hash, Link(testKey, nil, e)) || e.Version != Keyed {
		t.Fatal("first event does not chain from no bytes")
	}
}

func TestVerify(t *testing.T) {
	t.Run("intact", func(t *testing.T) {
		evs, seq, head := chain(t, 5)
		if b := Verify(testKey, evs, seq, head, nil); b != nil {
			t.Fatal(b)
		}
		if b := Verify(testKey, nil, 0, nil, nil); b != nil {
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
			b := Verify(testKey, got, seq, head, nil)
			if b == nil {
				t.Fatal("Verify found nothing")
			}
			if b.Seq != c.seq || b.EventID != c.id(orig) {
				t.Fatalf("break = %v; want seq %d id %q", b, c.seq, c.id(orig))
			}
		})
	}
}

// TestVerifyUnderTheKey: events written before the key verify as the
// chain's beginning; a chain re-hashed without the key (plain SHA-256, as
// unkeyed events, or under another key) does not.
func TestVerifyUnderTheKey(t *testing.T) {
	evs, seq, head := chainFrom(t, nil, 0, nil, 3, nil)
	evs, seq, head = chainFrom(t, evs, seq, head, 3, testKey)
	if b := Verify(testKey, evs, seq, head, nil); b != nil {
		t.Fatalf("unkeyed then keyed: %v", b)
	}
	if evs[0].Version != Unkeyed || evs[3].Version != Keyed || !strings.Contains(string(Canonical(evs[3])), `"version":2`) ||
		strings.Contains(string(Canonical(evs[0])), "version") {
		t.Fatalf("versions %d %d; canonical %s", evs[0].Version, evs[3].Version, Canonical(evs[3]))
	}

	// The IP of event 5 changed and everything from it re-hashed, unkeyed
	// or under a guessed key.
	for name, key := range map[string][]byte{"unkeyed": nil, "another key": bytes.Repeat([]byte{8}, 32)} {
		forged := append([]Event(nil), evs...)
		forged[4].Actor.IP = "198.51.100.66"
		prev := forged[3].Hash
		for i := 4; i < len(forged); i++ {
			if key == nil {
				forged[i].Version = Unkeyed
			}
			forged[i].Hash = Link(key, prev, forged[i])
			prev = forged[i].Hash
		}
		b := Verify(testKey, forged, seq, prev, nil)
		if b == nil || b.Seq != 5 || b.EventID != forged[4].ID {
			t.Errorf("%s re-hash: %v, want a break at event 5", name, b)
		}
	}
}

// TestVerifyAgainstCheckpoints: a chain cut below a checkpoint, a whole
// log gone while a checkpoint names it, and a head that differs from its
// checkpoint are breaks; a chain past its last checkpoint is not.
func TestVerifyAgainstCheckpoints(t *testing.T) {
	evs, seq, head := chain(t, 5)
	at := time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)
	cp := func(i int) Checkpoint {
		return Checkpoint{MerchantID: "mer_1", Seq: evs[i].Seq, Hash: HashHex(evs[i].Hash), Time: at}
	}
	if b := Verify(testKey, evs, seq, head, []Checkpoint{cp(2), cp(3)}); b != nil {
		t.Fatalf("intact past its checkpoints: %v", b)
	}
	b := Verify(testKey, evs[:4], 4, evs[3].Hash, []Checkpoint{cp(2), cp(4)})
	if b == nil || b.Seq != 5 || !strings.Contains(b.Reason, "names event 5: the newest events were removed") {
		t.Errorf("truncated: %v", b)
	}
	b = Verify(testKey, nil, 0, nil, []Checkpoint{cp(4)})
	if b == nil || !strings.Contains(b.Reason, "log is gone") {
		t.Errorf("deleted: %v", b)
	}
	other := cp(2)
	other.Hash = HashHex(evs[1].Hash)
	b = Verify(testKey, evs, seq, head, []Checkpoint{other})
	if b == nil || b.Seq != 3 || !strings.Contains(b.Reason, "differs from the checkpoint") {
		t.Errorf("checkpoint mismatch: %v", b)
	}
}
