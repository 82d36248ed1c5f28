package web

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fundsource/fundsource/internal/tenant"
)

// limiter holds one token bucket per API key, in this process. The burst is
// one second's worth of requests. With N processes behind a load balancer a
// key may get up to N times the rate; see the README's design notes.
type limiter struct {
	perSecond map[tenant.Environment]float64 // 0 = unlimited

	mu      sync.Mutex // guards buckets
	buckets map[string]*bucket
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

func newLimiter(sandbox, production float64) *limiter {
	return &limiter{
		perSecond: map[tenant.Environment]float64{tenant.Sandbox: sandbox, tenant.Production: production},
		buckets:   map[string]*bucket{},
	}
}

// allow takes one token from keyID's bucket at now; when none is left it
// reports how long until one is.
func (l *limiter) allow(keyID string, env tenant.Environment, now time.Time) (time.Duration, bool) {
	r := l.perSecond[env]
	if r <= 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[keyID]
	if b == nil {
		burst := int(r)
		if burst < 1 {
			burst = 1
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(r), burst)}
		l.buckets[keyID] = b
		if len(l.buckets) > 10000 {
			l.evictIdle(now)
		}
	}
	b.lastSeen = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// evictIdle drops buckets unused for a minute (they are full again by then).
func (l *limiter) evictIdle(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.lastSeen) > time.Minute {
			delete(l.buckets, k)
		}
	}
}
