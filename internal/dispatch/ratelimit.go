package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/toolname"
)

// Bucket is one token-bucket limit: rate calls per second on average, up to
// burst at once.
type Bucket struct {
	Rate  float64 `json:"rate"`
	Burst int     `json:"burst"`
}

// RateLimits are the per-actor, per-tool limits of invokeTool. The
// configuration (--tool-rate-limits, SCIDEX_TOOL_RATE_LIMITS) is one JSON
// object from a tool name, or "*" for every tool without its own entry, to a
// Bucket: {"*": {"rate": 5, "burst": 10}, "pk.nca": {"rate": 1, "burst": 2}}.
// Each actor has its own bucket per tool.
type RateLimits struct {
	byTool map[string]Bucket
	mu     sync.Mutex
	active map[[2]string]*rate.Limiter
	swept  time.Time
}

// ParseRateLimits reads the configuration; any other shape is refused with
// the reason (a typo must not silently turn a limit off).
func ParseRateLimits(raw string) (*RateLimits, error) {
	if raw == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, fmt.Errorf(`tool rate limits: want a JSON object {"<tool name or *>": {"rate": <calls per second>, "burst": <calls>}}: %v`, errOr(err, "not an object"))
	}
	if dec.More() {
		return nil, fmt.Errorf("tool rate limits: one JSON object, not several")
	}
	l := &RateLimits{byTool: map[string]Bucket{}, active: map[[2]string]*rate.Limiter{}}
	names := make([]string, 0, len(top))
	for name := range top {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != "*" && !toolname.Valid(name) {
			return nil, fmt.Errorf("tool rate limits: %q is not a tool name or *", name)
		}
		d := json.NewDecoder(bytes.NewReader(top[name]))
		d.DisallowUnknownFields()
		var b struct {
			Rate  *float64 `json:"rate"`
			Burst *int     `json:"burst"`
		}
		if err := d.Decode(&b); err != nil {
			return nil, fmt.Errorf(`tool rate limits: %s: want {"rate": <calls per second>, "burst": <calls>}: %v`, name, err)
		}
		switch {
		case b.Rate == nil || b.Burst == nil:
			return nil, fmt.Errorf("tool rate limits: %s: both rate and burst are required", name)
		case *b.Rate <= 0 || math.IsInf(*b.Rate, 0):
			return nil, fmt.Errorf("tool rate limits: %s: rate must be a positive number of calls per second, got %v", name, *b.Rate)
		case *b.Burst < 1:
			return nil, fmt.Errorf("tool rate limits: %s: burst must be at least 1, got %d", name, *b.Burst)
		}
		l.byTool[name] = Bucket{Rate: *b.Rate, Burst: *b.Burst}
	}
	return l, nil
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

// allow takes a token for actor's call of tool, or says how long to wait.
func (l *RateLimits) allow(actor, tool string, now time.Time) error {
	if l == nil {
		return nil
	}
	b, ok := l.byTool[tool]
	if !ok {
		if b, ok = l.byTool["*"]; !ok {
			return nil
		}
	}
	l.mu.Lock()
	if now.Sub(l.swept) > time.Minute {
		for k, lim := range l.active {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(l.active, k)
			}
		}
		l.swept = now
	}
	key := [2]string{actor, tool}
	lim := l.active[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(b.Rate), b.Burst)
		l.active[key] = lim
	}
	r := lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait > 0 {
		r.CancelAt(now)
	}
	l.mu.Unlock()
	if wait > 0 {
		p := problem.New(problem.RateLimited, "%s may call %s %g times a second (burst %d); retry in %s",
			actor, tool, b.Rate, b.Burst, wait.Round(time.Millisecond))
		p.RetryAfter = wait
		return p
	}
	return nil
}
