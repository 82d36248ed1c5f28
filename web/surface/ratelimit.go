package surface

import (
	"net/netip"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// buckets are token buckets by key, in this process. With N processes
// behind a load balancer a key may get up to N times its rate; see the
// package documentation.
type buckets struct {
	mu sync.Mutex // guards m
	m  map[string]*bucket
}

type bucket struct {
	lim      *rate.Limiter
	refill   time.Duration // from empty to full
	lastSeen time.Time
}

func newBuckets() *buckets { return &buckets{m: map[string]*bucket{}} }

// take removes one token from key's bucket at now (made with rate r and
// burst on first use); when none is left it reports how long until one is.
func (b *buckets) take(key string, r rate.Limit, burst int, now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.m[key]
	if bk == nil {
		bk = &bucket{lim: rate.NewLimiter(r, burst), refill: time.Duration(float64(burst) / float64(r) * float64(time.Second))}
		b.m[key] = bk
		if len(b.m) > 10000 {
			b.evictFull(now)
		}
	}
	bk.lastSeen = now
	res := bk.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// evictFull drops buckets idle long enough to be full again: forgetting
// them changes nothing.
func (b *buckets) evictFull(now time.Time) {
	for k, bk := range b.m {
		if now.Sub(bk.lastSeen) > bk.refill {
			delete(b.m, k)
		}
	}
}

// Limiter is the API's limit: one bucket per API key, its rate by
// environment, the burst one second's worth of requests.
type Limiter struct {
	perSecond map[tenant.Environment]float64 // 0 = unlimited
	buckets   *buckets
}

// NewLimiter returns the API limit with the per-second rates of the two
// environments (0 = unlimited).
func NewLimiter(sandbox, production float64) *Limiter {
	return &Limiter{
		perSecond: map[tenant.Environment]float64{tenant.Sandbox: sandbox, tenant.Production: production},
		buckets:   newBuckets(),
	}
}

// Allow takes one request of keyID at now.
func (l *Limiter) Allow(keyID string, env tenant.Environment, now time.Time) (time.Duration, bool) {
	r := l.perSecond[env]
	if r <= 0 {
		return 0, true
	}
	return l.buckets.take(keyID, rate.Limit(r), max(int(r), 1), now)
}

// KeyLimiter bounds an action per key: up to max at once, refilled
// evenly over window.
type KeyLimiter struct {
	window  time.Duration
	max     int
	buckets *buckets
}

// NewKeyLimiter returns a KeyLimiter.
func NewKeyLimiter(window time.Duration, max int) *KeyLimiter {
	return &KeyLimiter{window: window, max: max, buckets: newBuckets()}
}

// Allow takes one from key's allowance, or reports the wait until one is
// back. Keys longer than 320 bytes count as their first 320.
func (l *KeyLimiter) Allow(key string, now time.Time) (time.Duration, bool) {
	if len(key) > 320 {
		key = key[:320]
	}
	return l.buckets.take(key, rate.Every(l.window/time.Duration(l.max)), l.max, now)
}

// ClientNetwork is the key of the client's per-IP limits: its IPv4
// address, or the /64 network of its IPv6 address. One IPv6 host usually
// holds a whole /64 and can take a new address from it for every request,
// so counting single IPv6 addresses would let it through any per-IP limit.
func ClientNetwork(c *gin.Context) string {
	ip := c.ClientIP()
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	return netip.PrefixFrom(addr.WithZone(""), 64).Masked().String()
}
