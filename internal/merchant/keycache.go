package merchant

import (
	"slices"
	"sync"
	"time"
)

// maxCachedKeys bounds the cache; past it, the cache starts over.
const maxCachedKeys = 10_000

// KeyCache keeps resolved secret keys in memory for a short while, so an API
// request need not ask the database who sends it, and resolved public keys
// (LinkOwner: the environment, the merchant's name and its redirect
// origins), so the hosted page need not either. It is only used while it
// cannot go stale: the service clears it after its own key changes, the
// server clears it on every notification that a key or environment changed
// (a trigger sends them, whoever writes), and while that subscription is
// down (live reports false) the cache is bypassed. The TTL bounds an entry's
// life whatever happens. Unknown and revoked keys are never cached. (The
// trigger fires on changes to api_keys, merchant_environments, merchants,
// redirect_origins and merchant_brands: migrations 00009, 00017 and
// 00031.)
type KeyCache struct {
	ttl  time.Duration
	live func() bool
	now  func() time.Time

	mu     sync.Mutex
	gen    uint64 // counts clears; a lookup started before one is not stored
	keys   map[string]cached[Principal]
	owners map[string]cached[LinkOwner]
}

type cached[V any] struct {
	v     V
	until time.Time
}

// NewKeyCache returns a cache whose entries last ttl. It stays unused
// until Live says how to tell that it receives every change.
func NewKeyCache(ttl time.Duration, now func() time.Time) *KeyCache {
	return &KeyCache{ttl: ttl, live: func() bool { return false }, now: now,
		keys: map[string]cached[Principal]{}, owners: map[string]cached[LinkOwner]{}}
}

// Live sets what reports whether every change reaches Clear now (the
// notification subscription is connected). Call it before the cache is used.
func (c *KeyCache) Live(live func() bool) { c.live = live }

// Clear forgets every key. Safe on a nil cache.
func (c *KeyCache) Clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.owners)
}

func (c *KeyCache) get(hash string) (Principal, bool) {
	if c == nil {
		return Principal{}, false
	}
	return lookup(c, c.keys, hash)
}

// getHash is get for a hash as its bytes, without making a string of them.
func (c *KeyCache) getHash(hash []byte) (Principal, bool) {
	if c == nil {
		return Principal{}, false
	}
	return lookup(c, c.keys, hash)
}

func (c *KeyCache) owner(publicKey string) (LinkOwner, bool) {
	if c == nil {
		return LinkOwner{}, false
	}
	return lookup(c, c.owners, publicKey)
}

// lookup is the live entry of m under k; k as bytes is looked up without
// making a string of it (m[string(k)] does not allocate).
func lookup[V any, K string | []byte](c *KeyCache, m map[string]cached[V], k K) (V, bool) {
	var zero V
	if !c.live() {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := m[string(k)]
	if !ok || !c.now().Before(e.until) {
		return zero, false
	}
	return e.v, true
}

// generation is read before a database lookup and handed to put.
func (c *KeyCache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores what a lookup found, unless the cache was cleared since the
// lookup began (its answer may predate the change) or is not live.
func (c *KeyCache) put(hash string, p Principal, gen uint64) {
	if c == nil {
		return
	}
	p.Permissions = slices.Clone(p.Permissions)
	store(c, c.keys, hash, p, gen)
}

func (c *KeyCache) putOwner(publicKey string, o LinkOwner, gen uint64) {
	if c == nil {
		return
	}
	o.Rules.Allowed = slices.Clone(o.Rules.Allowed)
	store(c, c.owners, publicKey, o, gen)
}

func store[V any](c *KeyCache, m map[string]cached[V], k string, v V, gen uint64) {
	if !c.live() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(m) >= maxCachedKeys {
		clear(m)
	}
	m[k] = cached[V]{v: v, until: c.now().Add(c.ttl)}
}
