package merchant

import (
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

func TestKeyCache(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	live := true
	c := NewKeyCache(30*time.Second, func() time.Time { return now })
	p := Principal{Scope: tenant.Scope{MerchantID: "mer_1", Env: tenant.Sandbox}, KeyID: "key_1", Permissions: []string{"a"}}

	// Unused until told how to know it receives every change.
	c.put("h", p, c.generation())
	if _, ok := c.get("h"); ok {
		t.Fatal("a cache without Live answered")
	}
	c.Live(func() bool { return live })

	c.put("h", p, c.generation())
	if got, ok := c.get("h"); !ok || got.KeyID != "key_1" {
		t.Fatalf("get after put: %+v, %v", got, ok)
	}
	// The caller's slice is not shared with the cache.
	p.Permissions[0] = "changed"
	if got, _ := c.get("h"); got.Permissions[0] != "a" {
		t.Errorf("cached permissions follow the caller's slice: %v", got.Permissions)
	}

	// A lookup that began before a clear is not stored: its answer may
	// predate the change that caused the clear.
	gen := c.generation()
	c.Clear()
	if _, ok := c.get("h"); ok {
		t.Error("Clear kept an entry")
	}
	c.put("h", p, gen)
	if _, ok := c.get("h"); ok {
		t.Error("a lookup from before the clear was stored")
	}

	// While changes may be missed, nothing is answered or stored.
	c.put("h", p, c.generation())
	live = false
	if _, ok := c.get("h"); ok {
		t.Error("answered while not live")
	}
	c.put("h2", p, c.generation())
	live = true
	if _, ok := c.get("h2"); ok {
		t.Error("stored while not live")
	}

	// Entries end after the TTL whatever happens.
	if _, ok := c.get("h"); !ok {
		t.Fatal("entry gone before its TTL")
	}
	now = now.Add(30 * time.Second)
	if _, ok := c.get("h"); ok {
		t.Error("entry outlived its TTL")
	}

	var none *KeyCache // a service without a cache
	none.Clear()
	none.put("h", p, none.generation())
	if _, ok := none.get("h"); ok {
		t.Error("nil cache answered")
	}
}
