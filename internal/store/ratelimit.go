package store

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter is a token bucket per actor. It keeps one agent that loops on writes
// from starving everyone else; it is per process, so N replicas allow N times the
// rate, which is fine for its purpose.
type Limiter struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	byID  map[string]*actorBucket
	swept time.Time
}

type actorBucket struct {
	l    *rate.Limiter
	used time.Time
}

// NewLimiter allows perSecond writes per actor with bursts of burst.
func NewLimiter(perSecond float64, burst int) *Limiter {
	return &Limiter{rate: rate.Limit(perSecond), burst: burst, byID: map[string]*actorBucket{}}
}

// Allow takes n tokens (at least one) for actor. When there are not enough it
// returns false and how long until there will be.
func (l *Limiter) Allow(actor string, now time.Time, n int) (bool, time.Duration) {
	if n < 1 {
		n = 1
	}
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		// Forget actors idle long enough for their bucket to be full again.
		for id, b := range l.byID {
			if now.Sub(b.used) > time.Minute {
				delete(l.byID, id)
			}
		}
		l.swept = now
	}
	b, ok := l.byID[actor]
	if !ok {
		b = &actorBucket{l: rate.NewLimiter(l.rate, l.burst)}
		l.byID[actor] = b
	}
	b.used = now
	r := b.l.ReserveN(now, n)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}
